package gke

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Execute carries out one change: each GKE call starts an operation that is followed to its end.
func (p *Provider) Execute(ctx context.Context, c *spec.Cluster, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	cn, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	_, name, _ := strings.Cut(ch.Key, "/")
	x := &executor{p: p, cn: cn, c: c, project: p.section(c).Project, location: p.section(c).Location, name: name, save: save}
	if err := kinds.Execute(ctx, x, ch); err != nil {
		return nil, err
	}
	return x.out, nil
}

// kinds are the resource kinds of a GKE cluster, each with its create/update, delete and Terraform
// form: a cluster or node pool GKE cannot change in place is deleted and created again; the
// kubeconfig is nuv's (Terraform users get theirs with gcloud).
var kinds = kit.Kinds[*executor, *tfWriter]{
	Provider: "gke",
	ByKind: map[string]kit.Kind[*executor, *tfWriter]{
		"cluster":    {Apply: (*executor).applyCluster, Delete: (*executor).removeCluster, Recreate: true, Terraform: (*tfWriter).cluster},
		"node-pool":  {Apply: (*executor).applyPool, Delete: (*executor).removePool, Recreate: true, Terraform: (*tfWriter).pool},
		"kubeconfig": {Apply: (*executor).applyKubeconfig, Delete: (*executor).removeKubeconfig, Replace: true},
	},
}

// executor carries out one change of a cluster: name is the name in the change's key, out the
// resource as the change left it.
type executor struct {
	p                 *Provider
	cn                *Conn
	c                 *spec.Cluster
	project, location string
	name              string
	save              func(cluster.Resource) error
	out               *cluster.Resource
}

func (x *executor) applyCluster(ctx context.Context, ch cluster.Change) (err error) {
	x.out, err = x.cluster(ctx, ch, x.save)
	return err
}

func (x *executor) removeCluster(ctx context.Context, _ cluster.Change) error {
	return x.deleteCluster(ctx)
}

func (x *executor) applyPool(ctx context.Context, ch cluster.Change) (err error) {
	x.out, err = x.pool(ctx, x.name, ch, x.save)
	return err
}

func (x *executor) removePool(ctx context.Context, _ cluster.Change) error {
	return x.deletePool(ctx, x.name)
}

func (x *executor) applyKubeconfig(ctx context.Context, ch cluster.Change) (err error) {
	x.out, err = x.kubeconfig(ctx, ch)
	return err
}

func (x *executor) removeKubeconfig(context.Context, cluster.Change) error {
	return kit.RemoveKubeconfig(x.p.kubeconfigPath(x.c.Metadata.Name))
}

func (x *executor) path() string { return clusterPath(x.project, x.location, x.c.Metadata.Name) }

func (x *executor) poll() time.Duration {
	switch {
	case x.p.Poll > 0:
		return x.p.Poll
	case x.cn.Loopback:
		return 200 * time.Millisecond
	}
	return 2 * time.Second
}

// opError is a GKE operation that finished with an error.
type opError struct {
	Name, Type, Target string
	Code               codes.Code
	Msg                string
	Elapsed            time.Duration
}

func (e *opError) Error() string {
	return fmt.Sprintf("GKE operation %s (%s of %s) failed after %s: %s: %s", e.Name, e.Type, e.Target, e.Elapsed.Round(100*time.Millisecond), e.Code, e.Msg)
}

// wait follows op until it is DONE, logging its status when it changes and every 15 seconds, for
// at most the wait bound (cluster.WaitTimeout).
func (x *executor) wait(ctx context.Context, op *containerpb.Operation) error {
	start := time.Now()
	bound, err := cluster.WaitTimeout(x.p.getenv())
	if err != nil {
		return err
	}
	target := strings.TrimPrefix(op.TargetLink, "https://container.googleapis.com/v1/")
	if i := strings.Index(target, "/clusters/"); i >= 0 {
		target = target[i+len("/clusters/"):]
	}
	name := locPath(x.project, op.Location) + "/operations/" + op.Name
	if op.Location == "" {
		name = locPath(x.project, x.location) + "/operations/" + op.Name
	}
	first := true
	err = kit.Poller{What: fmt.Sprintf("GKE operation %s (%s of %s)", op.Name, op.OperationType, target), Interval: x.poll(), Bound: bound,
		Report: func(status string, elapsed time.Duration) {
			x.p.log().Infof("  GKE operation %s (%s %s): %s, %s elapsed", op.Name, op.OperationType, target, status, elapsed.Round(time.Second))
		}}.Wait(ctx, func(ctx context.Context) (string, bool, error) {
		if !first {
			next, err := x.cn.Client.GetOperation(ctx, &containerpb.GetOperationRequest{Name: name}, retry())
			if err != nil {
				return "", false, fmt.Errorf("follow GKE operation %s: %w", op.Name, err)
			}
			op = next
		}
		first = false
		return op.Status.String(), op.Status == containerpb.Operation_DONE, nil
	})
	if err != nil && err == ctx.Err() {
		return fmt.Errorf("stopped following GKE operation %s (%s of %s; it goes on, and the next run waits for it): %w", op.Name, op.OperationType, target, err)
	}
	if err != nil {
		return err
	}
	if e := op.GetError(); e != nil && e.Code != 0 {
		return &opError{Name: op.Name, Type: op.OperationType.String(), Target: target, Code: codes.Code(e.Code), Msg: e.Message, Elapsed: time.Since(start)}
	}
	return nil
}

// idle waits for the operations running on the cluster (started by a nuv that was interrupted,
// or by someone else); their failures are reported, not returned: the caller looks at the result.
func (x *executor) idle(ctx context.Context) error {
	resp, err := x.cn.Client.ListOperations(ctx, &containerpb.ListOperationsRequest{Parent: locPath(x.project, x.location)}, retry())
	if err != nil {
		return fmt.Errorf("list GKE operations: %w", err)
	}
	suffix := "/clusters/" + x.c.Metadata.Name
	for _, op := range resp.Operations {
		t := op.TargetLink
		if op.Status == containerpb.Operation_DONE || !(strings.HasSuffix(t, suffix) || strings.Contains(t, suffix+"/")) {
			continue
		}
		x.p.log().Infof("  waiting for GKE operation %s (%s), already running on cluster %s", op.Name, op.OperationType, x.c.Metadata.Name)
		if err := x.wait(ctx, op); err != nil {
			var oe *opError
			if !errors.As(err, &oe) {
				return err
			}
			x.p.log().Warnf("  %v", err)
		}
	}
	return nil
}

// call starts an operation (after any running one ends) and follows it.
func (x *executor) call(ctx context.Context, what string, start func() (*containerpb.Operation, error)) error {
	if err := x.idle(ctx); err != nil {
		return err
	}
	op, err := start()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return x.wait(ctx, op)
}

func (x *executor) clusterRes(ctx context.Context) (*cluster.Resource, error) {
	gc, err := getCluster(ctx, x.cn, x.project, x.location, x.c.Metadata.Name)
	if err != nil {
		return nil, err
	}
	r := x.p.clusterResource(x.c, gc)
	return &r, nil
}

func (x *executor) cluster(ctx context.Context, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	if ch.Action != cluster.Update { // a create, or the create of a replace (kinds deleted the old one)
		return x.createCluster(ctx, ch, save)
	}
	// Update: field by field, each its own operation.
	name := x.c.Metadata.Name
	g := x.p.section(x.c)
	for _, f := range ch.Fields {
		var err error
		switch f.Field {
		case "status":
			if strings.HasPrefix(f.Old, "ERROR") || strings.HasPrefix(f.Old, "DEGRADED") {
				x.p.log().Infof("  cluster %s is in %s: deleting it and creating it again", name, f.Old)
				if err := x.deleteCluster(ctx); err != nil {
					return nil, err
				}
				return x.createCluster(ctx, ch, save)
			}
			if f.Old == "STOPPING" {
				return nil, fmt.Errorf("cluster %s is being deleted (by another nuv or someone else): wait, then apply again", name)
			}
			err = x.idle(ctx)
		case "version":
			err = x.call(ctx, "upgrade the control plane to "+f.New, func() (*containerpb.Operation, error) {
				return x.cn.Client.UpdateMaster(ctx, &containerpb.UpdateMasterRequest{Name: x.path(), MasterVersion: f.New}, retry())
			})
		case "releaseChannel":
			rc := &containerpb.ReleaseChannel{Channel: containerpb.ReleaseChannel_Channel(containerpb.ReleaseChannel_Channel_value[g.ReleaseChannel])}
			err = x.call(ctx, "set the release channel "+g.ReleaseChannel, func() (*containerpb.Operation, error) {
				return x.cn.Client.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: x.path(), Update: &containerpb.ClusterUpdate{DesiredReleaseChannel: rc}}, retry())
			})
		case "zones":
			err = x.call(ctx, "set the node locations "+f.New, func() (*containerpb.Operation, error) {
				return x.cn.Client.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: x.path(), Update: &containerpb.ClusterUpdate{DesiredLocations: strings.Split(f.New, ",")}}, retry())
			})
		case "labels":
			err = x.call(ctx, "set the cluster's labels", func() (*containerpb.Operation, error) {
				gc, err := getCluster(ctx, x.cn, x.project, x.location, name)
				if err != nil {
					return nil, err
				}
				return x.cn.Client.SetLabels(ctx, &containerpb.SetLabelsRequest{Name: x.path(), ResourceLabels: x.labels(), LabelFingerprint: gc.LabelFingerprint}, retry())
			})
		default:
			err = fmt.Errorf("gke: cannot change %s of a cluster in place", f.Field)
		}
		if err != nil {
			return nil, err
		}
	}
	return x.clusterRes(ctx)
}

// labels are the cluster's resource labels: the spec's tags, nuv's ownership label and its marks
// (kit.MarkLabels).
func (x *executor) labels() map[string]string {
	l := kit.MarkLabels(x.c.Marks)
	l[LabelCluster] = x.c.Metadata.Name
	for k, v := range x.c.Spec.Tags {
		l[k] = v
	}
	return l
}

func (x *executor) createCluster(ctx context.Context, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	s := x.c.Spec
	g := x.p.section(x.c)
	gc := &containerpb.Cluster{
		Name:                  x.c.Metadata.Name,
		Description:           "made by nuv (" + specFile(x.c) + ")",
		Locations:             clusterZones(x.c),
		InitialClusterVersion: strings.TrimPrefix(s.KubernetesVersion, "v"),
		ClusterIpv4Cidr:       s.Networking.PodCIDR,
		ServicesIpv4Cidr:      s.Networking.ServiceCIDR,
		ResourceLabels:        x.labels(),
		NodePools:             []*containerpb.NodePool{{Name: bootstrapPool, InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: "e2-small"}}},
	}
	if g.ReleaseChannel != "" {
		gc.ReleaseChannel = &containerpb.ReleaseChannel{Channel: containerpb.ReleaseChannel_Channel(containerpb.ReleaseChannel_Channel_value[g.ReleaseChannel])}
	}
	op, err := x.cn.Client.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: locPath(x.project, x.location), Cluster: gc}, retry())
	switch {
	case status.Code(err) == codes.AlreadyExists:
		// Made by a nuv that was interrupted before recording it: Observe found it ours, or the
		// plan would show a conflict. Wait for its operation instead.
		x.p.log().Infof("  cluster %s exists already (an interrupted apply made it): waiting for it", x.c.Metadata.Name)
		if err := x.idle(ctx); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("create GKE cluster %s: %w", x.path(), fieldNote(err, "spec"))
	default:
		if err := save(cluster.Resource{Kind: "cluster", Name: x.c.Metadata.Name, ID: x.path(), Fields: ch.Desired.Fields}); err != nil {
			return nil, err
		}
		if err := x.wait(ctx, op); err != nil {
			return nil, err
		}
	}
	// The cluster's own node pools are the spec's node groups: remove the bootstrap pool.
	if err := x.deletePool(ctx, bootstrapPool); err != nil {
		return nil, err
	}
	return x.clusterRes(ctx)
}

func (x *executor) deleteCluster(ctx context.Context) error {
	if err := x.idle(ctx); err != nil {
		return err
	}
	op, err := x.cn.Client.DeleteCluster(ctx, &containerpb.DeleteClusterRequest{Name: x.path()}, retry())
	if status.Code(err) == codes.NotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete GKE cluster %s: %w", x.path(), err)
	}
	return x.wait(ctx, op)
}

// group finds node group name of the spec and its index.
func (x *executor) group(name string) (spec.NodeGroup, int) {
	for i, ng := range x.c.Spec.NodeGroups {
		if ng.Name == name {
			return ng, i
		}
	}
	return spec.NodeGroup{Name: name}, -1
}

func (x *executor) poolRes(ctx context.Context, name string) (*cluster.Resource, error) {
	gc, err := getCluster(ctx, x.cn, x.project, x.location, x.c.Metadata.Name)
	if err != nil {
		return nil, err
	}
	for _, np := range gc.NodePools {
		if np.Name == name {
			r := x.p.poolResource(x.c, gc, np)
			return &r, nil
		}
	}
	return nil, fmt.Errorf("node pool %s of cluster %s is not there after its operation", name, x.c.Metadata.Name)
}

func (x *executor) pool(ctx context.Context, name string, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	if ch.Action != cluster.Update { // a create, or the create of a replace (kinds deleted the old one)
		return x.createPool(ctx, name, ch, save)
	}
	ng, i := x.group(name)
	ppath := x.path() + "/nodePools/" + name
	upd := &containerpb.UpdateNodePoolRequest{Name: ppath}
	changed := false
	for _, f := range ch.Fields {
		var err error
		switch f.Field {
		case "status":
			if strings.HasPrefix(f.Old, "ERROR") {
				x.p.log().Infof("  node pool %s is in %s: deleting it and creating it again", name, f.Old)
				if err := x.deletePool(ctx, name); err != nil {
					return nil, err
				}
				return x.createPool(ctx, name, ch, save)
			}
			err = x.idle(ctx)
		case "count":
			n := ng.Size()
			err = x.call(ctx, fmt.Sprintf("resize node pool %s to %d", name, n), func() (*containerpb.Operation, error) {
				return x.cn.Client.SetNodePoolSize(ctx, &containerpb.SetNodePoolSizeRequest{Name: ppath, NodeCount: int32(n)}, retry())
			})
		case "autoscaling":
			err = x.call(ctx, "set the autoscaling of node pool "+name, func() (*containerpb.Operation, error) {
				return x.cn.Client.SetNodePoolAutoscaling(ctx, &containerpb.SetNodePoolAutoscalingRequest{Name: ppath, Autoscaling: autoscaling(ng)}, retry())
			})
		case "version":
			err = x.call(ctx, fmt.Sprintf("upgrade node pool %s to %s", name, f.New), func() (*containerpb.Operation, error) {
				return x.cn.Client.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: ppath, NodeVersion: f.New}, retry())
			})
		case "labels":
			upd.Labels, changed = &containerpb.NodeLabels{Labels: ng.Labels}, true
			if upd.Labels.Labels == nil {
				upd.Labels.Labels = map[string]string{}
			}
		case "taints":
			upd.Taints, changed = &containerpb.NodeTaints{Taints: taints(ng.Taints)}, true
		case "machineType":
			upd.MachineType, changed = machineType(ng), true
		case "zones":
			upd.Locations, changed = strings.Split(f.New, ","), true
		case "imageType":
			upd.ImageType, changed = f.New, true
		case "diskSize":
			upd.DiskSizeGb, changed = int64(diskSize(ng)), true
		default:
			err = fmt.Errorf("gke: cannot change %s of a node pool in place", f.Field)
		}
		if err != nil {
			return nil, groupNote(err, i, name)
		}
	}
	if changed {
		if err := x.call(ctx, "update node pool "+name, func() (*containerpb.Operation, error) {
			return x.cn.Client.UpdateNodePool(ctx, upd, retry())
		}); err != nil {
			return nil, groupNote(err, i, name)
		}
	}
	return x.poolRes(ctx, name)
}

func autoscaling(ng spec.NodeGroup) *containerpb.NodePoolAutoscaling {
	if ng.Min == nil || ng.Max == nil {
		return &containerpb.NodePoolAutoscaling{}
	}
	return &containerpb.NodePoolAutoscaling{Enabled: true, MinNodeCount: int32(*ng.Min), MaxNodeCount: int32(*ng.Max)}
}

func taints(ts []string) []*containerpb.NodeTaint {
	var out []*containerpb.NodeTaint
	for _, s := range sortedTaints(ts) {
		t, err := spec.ParseTaint(s)
		if err != nil {
			continue // refused by spec validation
		}
		e := containerpb.NodeTaint_NO_SCHEDULE
		switch t.Effect {
		case "PreferNoSchedule":
			e = containerpb.NodeTaint_PREFER_NO_SCHEDULE
		case "NoExecute":
			e = containerpb.NodeTaint_NO_EXECUTE
		}
		out = append(out, &containerpb.NodeTaint{Key: t.Key, Value: t.Value, Effect: e})
	}
	return out
}

func (x *executor) createPool(ctx context.Context, name string, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	ng, i := x.group(name)
	ps := poolSettings(x.p.section(x.c), name)
	np := &containerpb.NodePool{
		Name:             name,
		InitialNodeCount: int32(ng.Size()),
		Locations:        poolZones(x.c, ps),
		Autoscaling:      autoscaling(ng),
		Version:          strings.TrimPrefix(x.c.Spec.KubernetesVersion, "v"),
		Config: &containerpb.NodeConfig{MachineType: machineType(ng), DiskSizeGb: int32(diskSize(ng)), ImageType: imageType(ps),
			Labels: ng.Labels, Taints: taints(ng.Taints), Spot: ng.Spot,
			OauthScopes: []string{"https://www.googleapis.com/auth/cloud-platform"}},
	}
	if !np.Autoscaling.Enabled {
		np.Autoscaling = nil
	}
	if err := x.idle(ctx); err != nil {
		return nil, err
	}
	op, err := x.cn.Client.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: x.path(), NodePool: np}, retry())
	switch {
	case status.Code(err) == codes.AlreadyExists:
		x.p.log().Infof("  node pool %s exists already (an interrupted apply made it): waiting for it", name)
		if err := x.idle(ctx); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, groupNote(fmt.Errorf("create node pool %s: %w", name, err), i, name)
	default:
		if err := save(cluster.Resource{Kind: "node-pool", Name: name, ID: x.path() + "/nodePools/" + name, Fields: ch.Desired.Fields, DependsOn: ch.Desired.DependsOn}); err != nil {
			return nil, err
		}
		if err := x.wait(ctx, op); err != nil {
			return nil, groupNote(err, i, name)
		}
	}
	return x.poolRes(ctx, name)
}

func (x *executor) deletePool(ctx context.Context, name string) error {
	if err := x.idle(ctx); err != nil {
		return err
	}
	op, err := x.cn.Client.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: x.path() + "/nodePools/" + name}, retry())
	if status.Code(err) == codes.NotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete node pool %s: %w", name, err)
	}
	return x.wait(ctx, op)
}

// groupNote names the spec's node group in an error GKE answered about its node pool.
func groupNote(err error, i int, name string) error {
	if i < 0 {
		return err
	}
	if c := status.Code(err); c == codes.InvalidArgument {
		return fmt.Errorf("spec.nodeGroups[%d] (node pool %s): GKE refused it: %w", i, name, err)
	}
	return err
}

func fieldNote(err error, path string) error {
	if status.Code(err) == codes.InvalidArgument {
		return fmt.Errorf("%s: GKE refused it: %w", path, err)
	}
	return err
}

func (x *executor) kubeconfig(ctx context.Context, ch cluster.Change) (*cluster.Resource, error) {
	name := x.c.Metadata.Name
	path := x.p.kubeconfigPath(name)
	gc, err := getCluster(ctx, x.cn, x.project, x.location, name)
	if err != nil {
		return nil, err
	}
	if err := x.p.writeKubeconfig(x.project, gc, name); err != nil {
		return nil, err
	}
	return &cluster.Resource{Kind: "kubeconfig", Name: name, ID: path, Fields: map[string]string{"file": path, "endpoint": "current"}}, nil
}

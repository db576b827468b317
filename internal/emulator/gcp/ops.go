package gcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"

	"github.com/nuv-dev/nuv/internal/kube"
)

// startOp records a new operation on cluster c (PENDING) and returns it; s.Mu held. before is the
// cluster as it was (restored if the operation fails); target is an UPGRADE_MASTER's version.
func (a *api) startOp(ctx context.Context, c *clusterRec, typ containerpb.Operation_Type, pool string, before *gkeCluster, target string) (*containerpb.Operation, error) {
	s := a.s
	now := time.Now().UTC()
	name := fmt.Sprintf("operation-%d-%s", now.UnixMilli(), randHex(8))
	l := c.C.Location
	target2 := c.C.SelfLink
	if pool != "" {
		target2 += "/nodePools/" + pool
	}
	o := &opRec{
		Op: &gkeOperation{Name: name, Location: l, Type: opType(typ), Status: containerpb.Operation_PENDING.String(),
			SelfLink:   a.selfLink("projects/" + s.St.ProjectNumber + "/locations/" + l + "/operations/" + name),
			TargetLink: target2, Start: now},
		Cluster: key(l, c.C.Name), Pool: pool, Due: now.Add(s.Delay), Before: before,
	}
	if target != "" {
		o.Op.Detail = target
	}
	if st, ok := ctx.Value(failKey{}).(*status.Status); ok {
		o.Fail = st.Message()
		o.FailCode = int32(st.Code())
	}
	s.St.Operations[name] = o
	c.Op = name
	// Saved before the caller hears of it: an operation the client was given survives a crash.
	if err := s.Save(); err != nil {
		return nil, status.Errorf(codes.Unavailable, "nuv GKE emulator: %v (the change is kept in memory only)", err)
	}
	s.Log.Infof("GKE emulator: %s %s started (%s)", typ, o.Cluster+map[bool]string{true: "/" + pool}[pool != ""], name)
	return o.Op.wire(), nil
}

// reconcile moves operations along (s.Mu held); true when anything moved.
func (s *Server) reconcile(now time.Time) bool {
	changed := false
	for _, name := range sortedKeys(s.St.Operations) {
		o := s.St.Operations[name]
		if o.Op.Status == containerpb.Operation_DONE.String() {
			continue
		}
		c := s.St.Clusters[o.Cluster]
		if c == nil { // cannot happen: the cluster goes when its delete operation is done
			s.finish(o, nil, status.New(codes.Internal, "the cluster disappeared"))
			changed = true
			continue
		}
		if o.Op.Status == containerpb.Operation_PENDING.String() {
			o.Op.Status = containerpb.Operation_RUNNING.String()
			changed = true
		}
		start := o.Op.Start
		if o.Fail != "" {
			if now.Sub(start) >= s.Delay/2 {
				s.finish(o, c, status.New(codes.Code(o.FailCode), o.Fail))
				changed = true
			}
			continue
		}
		if !o.WorkDone {
			s.spawnWork(o, c)
			continue
		}
		if !now.Before(o.Due) {
			s.finish(o, c, nil)
			changed = true
		}
	}
	// Control planes of clusters not in an operation are checked once per run of the emulator
	// (they do not survive a reboot of the machine).
	for k, c := range s.St.Clusters {
		if c.Op == "" && c.Backend && !s.Jobs["checked/"+k] && !s.Jobs[k] {
			s.Jobs["checked/"+k] = true
			s.spawnEnsure(k, c)
		}
	}
	return changed
}

// spawnEnsure makes sure the control plane of a settled cluster runs; s.Mu held.
func (s *Server) spawnEnsure(k string, c *clusterRec) {
	localName, webhook := LocalName(c.C.Location, c.C.Name), c.Webhook
	s.BG.Spawn(&s.Mu, s.Jobs, k, func(ctx context.Context) func() {
		ep, err := s.backend.Ensure(ctx, localName, webhook)
		return func() {
			if err != nil {
				s.Log.Warnf("GKE emulator: control plane of cluster %s: %v", k, err)
				return
			}
			if s.St.Clusters[k] == c && c.Op == "" {
				setEndpoint(c.C, ep)
				_ = s.Save()
			}
		}
	})
}

// spawnWork makes the control plane and nodes what operation o wants, in the background; s.Mu held.
func (s *Server) spawnWork(o *opRec, c *clusterRec) {
	if s.Jobs[o.Cluster] || s.BG.Ctx().Err() != nil {
		return
	}
	localName := LocalName(c.C.Location, c.C.Name)
	typ := o.apiType()
	if c.Webhook == "" {
		c.Webhook = s.Base + "/_nuv/" + tokenReviewPath + localName
	}
	webhook := c.Webhook
	groups := s.nodeGroups(c.C)
	k := o.Cluster
	s.BG.Spawn(&s.Mu, s.Jobs, k, func(ctx context.Context) func() {
		var ep Endpoint
		var err error
		switch typ {
		case containerpb.Operation_DELETE_CLUSTER:
			err = s.backend.Delete(ctx, localName)
		case containerpb.Operation_UPGRADE_MASTER:
			// The control plane keeps running the local provider's Kubernetes version: an upgrade
			// changes the version the API reports.
		default:
			if typ == containerpb.Operation_CREATE_CLUSTER || !c.Backend {
				if ep, err = s.backend.Ensure(ctx, localName, webhook); err != nil {
					err = fmt.Errorf("the control plane could not be started: %w", err)
					break
				}
			}
			if err = s.backend.SetNodeGroups(ctx, localName, groups); err != nil {
				err = fmt.Errorf("the nodes could not be provisioned: %w", err)
			}
		}
		// Applied unless the emulator closes meanwhile (its next start does the work again).
		return func() {
			if err != nil {
				s.Log.Warnf("GKE emulator: %s %s: %v", typ, k, err)
				s.finish(o, c, status.New(codes.Internal, err.Error()))
			} else {
				if ep.URL != "" {
					setEndpoint(c.C, ep)
					c.Backend = true
				}
				o.WorkDone = true
			}
			_ = s.Save()
		}
	})
}

// setEndpoint records where the control plane answers: GKE reports a host (clients add https://).
func setEndpoint(c *gkeCluster, ep Endpoint) {
	c.Endpoint = strings.TrimPrefix(ep.URL, "https://")
	c.CA = base64.StdEncoding.EncodeToString(ep.CA)
}

// finish ends operation o: DONE, with fail as its error when it failed; s.Mu held.
func (s *Server) finish(o *opRec, c *clusterRec, fail *status.Status) {
	now := time.Now().UTC()
	o.Op.Status = containerpb.Operation_DONE.String()
	o.Op.End = now
	o.Op.Error = nil
	if c != nil {
		c.Op = ""
	}
	if fail != nil {
		o.Op.Error = &gkeOpError{Code: int32(fail.Code()), Message: fail.Message()}
		o.Op.StatusMessage = fail.Message()
		s.Log.Infof("GKE emulator: %s %s failed: %s", o.Op.Type, o.Op.Name, fail.Message())
		if c == nil {
			return
		}
		switch o.apiType() {
		case containerpb.Operation_CREATE_CLUSTER:
			c.C.Status, c.C.StatusMessage = stError, fail.Message()
			for _, p := range c.C.Pools {
				p.Status, p.StatusMessage = stError, fail.Message()
			}
		case containerpb.Operation_CREATE_NODE_POOL:
			c.C.Status = stRunning
			if p := c.C.pool(o.Pool); p != nil {
				p.Status, p.StatusMessage = stError, fail.Message()
			}
		default:
			if o.Before != nil {
				c.C = o.Before
			}
		}
		c.C.countNodes()
		o.Before = nil
		return
	}
	o.Before = nil
	s.Log.Infof("GKE emulator: %s %s DONE", o.Op.Type, o.Op.Name)
	switch o.apiType() {
	case containerpb.Operation_DELETE_CLUSTER:
		delete(s.St.Clusters, o.Cluster)
		delete(s.Jobs, "checked/"+o.Cluster)
		return
	case containerpb.Operation_UPGRADE_MASTER:
		c.C.MasterVersion = o.Op.Detail
	case containerpb.Operation_DELETE_NODE_POOL:
		c.C.Pools = deletePool(c.C.Pools, o.Pool)
	}
	c.C.Status, c.C.StatusMessage = stRunning, ""
	for _, p := range c.C.Pools {
		if p.Status == stProvisioning || p.Status == stReconciling {
			p.Status = stRunning
		}
	}
	c.C.countNodes()
}

func deletePool(ps []*gkeNodePool, name string) []*gkeNodePool {
	var out []*gkeNodePool
	for _, p := range ps {
		if p.Name != name {
			out = append(out, p)
		}
	}
	return out
}

// nodeGroups is the nodes the cluster's node pools stand for: one group per pool and zone, with
// GKE's labels and providerIDs gce://project/zone/name.
func (s *Server) nodeGroups(c *gkeCluster) []NodeGroup {
	region, _ := regionOf(c.Location)
	var out []NodeGroup
	for _, p := range c.Pools {
		if p.Status == stStopping || p.Status == stError {
			continue
		}
		machine := p.MachineType
		family, _, _ := strings.Cut(machine, "-")
		for _, z := range p.Locations {
			labels := map[string]string{
				"cloud.google.com/gke-nodepool":          p.Name,
				"cloud.google.com/gke-os-distribution":   "cos",
				"cloud.google.com/gke-boot-disk":         "pd-balanced",
				"cloud.google.com/gke-container-runtime": "containerd",
				"cloud.google.com/machine-family":        family,
				"cloud.google.com/gke-provisioning":      "standard",
				"node.kubernetes.io/instance-type":       machine,
				"topology.kubernetes.io/region":          region,
				"topology.kubernetes.io/zone":            z,
				"topology.gke.io/zone":                   z,
				kube.LabelEmulated:                       "gcp",
			}
			if p.Spot {
				labels["cloud.google.com/gke-spot"] = "true"
				labels["cloud.google.com/gke-provisioning"] = "spot"
			}
			maps.Copy(labels, p.Labels)
			var taints []corev1.Taint
			for _, t := range p.Taints {
				taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: taintEffect(apiEffect(t.Effect))})
			}
			sort.Slice(taints, func(i, j int) bool { return taints[i].Key < taints[j].Key })
			name := p.Name
			if len(p.Locations) > 1 {
				name += "-" + z[strings.LastIndex(z, "-")+1:]
			}
			out = append(out, NodeGroup{Name: name, Count: int(p.Count), Labels: labels, Taints: taints,
				ProviderIDPrefix: "gce://" + s.St.Project + "/" + z + "/", InstanceType: machine, Spot: p.Spot})
		}
	}
	return out
}

func taintEffect(e containerpb.NodeTaint_Effect) corev1.TaintEffect {
	switch e {
	case containerpb.NodeTaint_PREFER_NO_SCHEDULE:
		return corev1.TaintEffectPreferNoSchedule
	case containerpb.NodeTaint_NO_EXECUTE:
		return corev1.TaintEffectNoExecute
	}
	return corev1.TaintEffectNoSchedule
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

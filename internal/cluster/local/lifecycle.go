package local

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// The local provider's resources, as the lifecycle engine sees them:
//
//	control-plane/<cluster>  the processes and their state directory (version, HA, flavor and
//	                         networks can only change by replacing it; a stopped or degraded one is
//	                         started or repaired by an update of "running")
//	node-group/<group>       kwok nodes of one group (count, labels, taints, instance type, spot)
//	registry/loopback        the KEP-1755 ConfigMap advertising nuv's loopback registry
const (
	kindControlPlane = "control-plane"
	kindNodeGroup    = "node-group"
	kindRegistry     = "registry"
)

var _ cluster.Provider = Provider{}
var _ cluster.Starter = Provider{}
var _ cluster.LogSource = Provider{}
var _ cluster.Adopter = Provider{}

// RegistryFunc starts nuv's loopback registry if needed and advertises it in the cluster cfg
// points at (the KEP-1755 ConfigMap); it returns the registry's host. The command layer provides
// it, since starting the registry means running nuv itself.
type RegistryFunc func(ctx context.Context, cfg *rest.Config) (host string, err error)

// Validate checks what a local cluster can be.
func (p Provider) Validate(c *spec.Cluster) []spec.FieldError {
	var errs []spec.FieldError
	s := &c.Spec
	if err := localkube.ValidName(c.Metadata.Name); err != nil {
		errs = append(errs, spec.Errorf("metadata.name", "%v", err))
	}
	if s.KubernetesVersion != "" {
		if _, ok := p.version(s.KubernetesVersion); !ok {
			errs = append(errs, spec.Errorf("spec.kubernetesVersion", "%q is not offered by local clusters (valid: %s)", s.KubernetesVersion, strings.Join(localkube.SupportedVersions(), ", ")))
		}
	}
	if s.Region != "" {
		errs = append(errs, spec.Errorf("spec.region", "local clusters have no region"))
	}
	if len(s.Zones) > 0 {
		errs = append(errs, spec.Errorf("spec.zones", "local clusters have no zones"))
	}
	if len(s.Tags) > 0 {
		errs = append(errs, spec.Errorf("spec.tags", "local clusters have no cloud resources to tag"))
	}
	if n := s.ControlPlane.Count; n == 2 {
		errs = append(errs, spec.Errorf("spec.controlPlane.count", "2: a highly available local control plane has 3 etcd members (use 3), or 1"))
	}
	total := 0
	for i, g := range s.NodeGroups {
		path := "spec.nodeGroups[" + strconv.Itoa(i) + "]"
		if g.Manager == "karpenter" {
			errs = append(errs, spec.Errorf(path+".manager", "local clusters have no Karpenter (its nodes come from a cloud); leave manager out"))
		}
		if g.Count == nil && (g.Min != nil || g.Max != nil) {
			errs = append(errs, spec.Errorf(path+".count", "required: local clusters have no autoscaler, so min and max alone do not size a group"))
		}
		total += g.Size()
	}
	if total > localkube.MaxNodes {
		errs = append(errs, spec.Errorf("spec.nodeGroups", "%d nodes in all: a local cluster has at most %d", total, localkube.MaxNodes))
	}
	if len(s.NodeGroups) > 0 && total == 0 {
		errs = append(errs, spec.Errorf("spec.nodeGroups", "no nodes in any group: a local cluster needs at least one"))
	}
	sec, serrs := Key.Decode(c)
	errs = append(errs, serrs...)
	if sec != nil {
		if _, err := cluster.LookupFlavor(sec.Flavor); err != nil {
			errs = append(errs, spec.Errorf("spec.local.flavor", "%v", err))
		}
		if b := sec.PortBase; b != 0 && (b < 1024 || b > 65000) {
			errs = append(errs, spec.Errorf("spec.local.portBase", "%d: want a port between 1024 and 65000", b))
		}
		if err := localkube.ValidDurability(sec.Durability); err != nil {
			errs = append(errs, spec.Errorf("spec.local.durability", "%v", err))
		}
	}
	errs = append(errs, c.CheckSections()...)
	slices.SortFunc(errs, func(a, b spec.FieldError) int { return strings.Compare(a.Path, b.Path) })
	return errs
}

func (p Provider) version(v string) (string, bool) {
	v, ok := spec.NormalVersion(v)
	if !ok {
		return "", false
	}
	for _, s := range localkube.SupportedVersions() {
		if s == v || strings.HasPrefix(s, v+".") {
			return s, true
		}
	}
	return "", false
}

func flavorOf(c *spec.Cluster) string { return Key.Get(c).Flavor }

// Desired lists the control plane, one resource per node group and, if asked, the registry.
func (p Provider) Desired(c *spec.Cluster) ([]cluster.Resource, error) {
	v, ok := p.version(c.Spec.KubernetesVersion)
	if c.Spec.KubernetesVersion == "" {
		v, ok = localkube.KubeVersion, true
	}
	if !ok {
		return nil, fmt.Errorf("unsupported version %q", c.Spec.KubernetesVersion)
	}
	cp := cluster.Resource{Kind: kindControlPlane, Name: c.Metadata.Name, Fields: map[string]string{
		"version":     v,
		"ha":          strconv.FormatBool(c.Spec.ControlPlane.Count > 1),
		"flavor":      flavorOf(c),
		"podCIDR":     orDefault(c.Spec.Networking.PodCIDR, localkube.DefaultPodCIDR),
		"serviceCIDR": orDefault(c.Spec.Networking.ServiceCIDR, localkube.DefaultServiceCIDR),
		"running":     "true",
	}, Replace: []string{"version", "ha", "flavor", "podCIDR", "serviceCIDR"}}
	out := []cluster.Resource{cp}
	for _, g := range localkube.GroupsOf(c) {
		out = append(out, cluster.Resource{Kind: kindNodeGroup, Name: g.Name, Fields: groupFields(g), DependsOn: []string{cp.Key()}})
	}
	if c.Spec.Registry {
		out = append(out, cluster.Resource{Kind: kindRegistry, Name: "loopback", Fields: map[string]string{"advertised": "true"}, DependsOn: []string{cp.Key()}})
	}
	return out, nil
}

func groupFields(g localkube.NodeGroup) map[string]string {
	var labels []string
	for _, k := range slices.Sorted(maps.Keys(g.Labels)) {
		labels = append(labels, k+"="+g.Labels[k])
	}
	var taints []string
	for _, t := range g.Taints {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		taints = append(taints, s+":"+string(t.Effect))
	}
	return map[string]string{
		"count":        strconv.Itoa(g.Count),
		"labels":       strings.Join(labels, ","),
		"taints":       strings.Join(taints, ","),
		"instanceType": g.InstanceType,
		"spot":         map[bool]string{true: "true"}[g.Spot],
	}
}

// Observe reads the cluster's state directory and, when it runs, its API server: node counts are
// what the API shows (a node removed by hand is drift an apply repairs), the rest of a group is what
// nuv recorded.
func (p Provider) Observe(ctx context.Context, c *spec.Cluster, _ []cluster.Resource) ([]cluster.Resource, error) {
	name := c.Metadata.Name
	dir := localkube.StateDir(p.Home, name)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	r, err := localkube.ReadRecord(dir)
	if err != nil {
		// A create killed before it recorded anything, or a state file damaged by hand: only a
		// replacement (or a delete) can mend it, and the plan says so.
		state, why := "corrupt", fmt.Sprintf("its state in %s cannot be read (%v): the cluster is deleted and made again", dir, err)
		if errors.Is(err, os.ErrNotExist) {
			state, why = "incomplete", fmt.Sprintf("its create did not finish (nuv was interrupted before it recorded the cluster in %s): what it started is deleted and the cluster made again", dir)
		}
		return []cluster.Resource{{Kind: kindControlPlane, Name: name, ID: dir, Fields: map[string]string{"running": state}, Broken: why}}, nil
	}
	running := "true"
	if r.Status != cluster.Running {
		running = string(r.Status)
	}
	cp := cluster.Resource{Kind: kindControlPlane, Name: name, ID: dir, Fields: map[string]string{
		"version":     r.Version,
		"ha":          strconv.FormatBool(r.HA),
		"flavor":      r.Flavor,
		"podCIDR":     orDefault(r.PodCIDR, localkube.DefaultPodCIDR),
		"serviceCIDR": orDefault(r.ServiceCIDR, localkube.DefaultServiceCIDR),
		"running":     running,
	}}
	out := []cluster.Resource{cp}
	observed := map[string]int{}
	live := r.Status == cluster.Running
	var cfg *rest.Config
	if live {
		if cfg, err = localkube.AdminConfig(dir); err != nil {
			return nil, err
		}
		cs, err := localkube.ClientForConfig(cfg)
		if err != nil {
			return nil, err
		}
		ogs, err := localkube.ObserveGroups(ctx, cs, name)
		if err != nil {
			return nil, err
		}
		for _, og := range ogs {
			observed[og.Name] = og.Nodes
		}
	}
	recorded := map[string]bool{}
	for _, g := range r.Groups {
		recorded[g.Name] = true
		if live {
			n, ok := observed[g.Name]
			if !ok && !r.Complete {
				continue // not made yet by an interrupted create
			}
			g.Count = n
		}
		out = append(out, cluster.Resource{Kind: kindNodeGroup, Name: g.Name, ID: name + "/" + g.Name, Fields: groupFields(g), DependsOn: []string{cp.Key()}})
	}
	// Groups whose nodes exist without a record (a scale interrupted before it saved the state).
	for _, g := range slices.Sorted(maps.Keys(observed)) {
		if !recorded[g] {
			out = append(out, cluster.Resource{Kind: kindNodeGroup, Name: g, ID: name + "/" + g,
				Fields: groupFields(localkube.NodeGroup{Name: g, Count: observed[g]}), DependsOn: []string{cp.Key()}})
		}
	}
	if live {
		if ok, err := advertised(ctx, cfg); err != nil {
			return nil, err
		} else if ok {
			out = append(out, cluster.Resource{Kind: kindRegistry, Name: "loopback", ID: "kube-public/local-registry-hosting",
				Fields: map[string]string{"advertised": "true"}, DependsOn: []string{cp.Key()}})
		}
	}
	return out, nil
}

func advertised(ctx context.Context, cfg *rest.Config) (bool, error) {
	cs, err := localkube.ClientForConfig(cfg)
	if err != nil {
		return false, err
	}
	cm, err := cs.CoreV1().ConfigMaps("kube-public").Get(ctx, "local-registry-hosting", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read kube-public/local-registry-hosting: %w", err)
	}
	return cm.Labels["app.kubernetes.io/managed-by"] == "nuv", nil
}

// Execute carries out one change.
func (p Provider) Execute(ctx context.Context, c *spec.Cluster, ch cluster.Change, _ func(cluster.Resource) error) (*cluster.Resource, error) {
	name := c.Metadata.Name
	kind, rname, _ := strings.Cut(ch.Key, "/")
	switch kind {
	case kindControlPlane:
		switch ch.Action {
		case cluster.Create:
			return p.createFromSpec(ctx, c)
		case cluster.Update: // only "running" changes in place
			if err := p.Start(ctx, name); err != nil {
				return nil, err
			}
			return p.observed(ctx, c, ch.Key)
		case cluster.Replace:
			if err := p.Delete(ctx, name); err != nil && !errors.Is(err, cluster.ErrNotFound) {
				return nil, err
			}
			return p.createFromSpec(ctx, c)
		case cluster.Delete:
			if err := p.Delete(ctx, name); err != nil && !errors.Is(err, cluster.ErrNotFound) {
				return nil, err
			}
			return nil, nil
		}
	case kindNodeGroup:
		if ch.Action == cluster.Delete {
			gs, err := p.NodeGroups(name)
			if err != nil {
				return nil, nil // the control plane (and its nodes) went first
			}
			if len(gs) == 1 && gs[0].Name == rname {
				// The last group: a cluster keeps at least one node, so its nodes go with the
				// control plane (whose deletion follows in any plan that deletes them).
				return nil, nil
			}
			return nil, p.DeleteNodeGroup(ctx, name, rname)
		}
		for _, g := range localkube.GroupsOf(c) {
			if g.Name == rname {
				if err := p.EnsureNodeGroup(ctx, name, g); err != nil {
					return nil, err
				}
				return p.observed(ctx, c, ch.Key)
			}
		}
		return nil, fmt.Errorf("node group %s is not in the spec", rname)
	case kindRegistry:
		cfg, err := p.RESTConfig(name)
		if err != nil {
			return nil, err
		}
		if ch.Action == cluster.Delete {
			cs, err := localkube.ClientForConfig(cfg)
			if err != nil {
				return nil, err
			}
			err = cs.CoreV1().ConfigMaps("kube-public").Delete(ctx, "local-registry-hosting", metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) && !isUnreachable(err) {
				return nil, fmt.Errorf("delete kube-public/local-registry-hosting: %w", err)
			}
			return nil, nil
		}
		if p.Registry == nil {
			return nil, fmt.Errorf("this nuv cannot start the loopback registry here")
		}
		if _, err := p.Registry(ctx, cfg); err != nil {
			return nil, err
		}
		return p.observed(ctx, c, ch.Key)
	}
	return nil, fmt.Errorf("local provider: cannot %s %s", ch.Action, ch.Key)
}

func isUnreachable(err error) bool {
	return strings.Contains(err.Error(), "connection refused")
}

func (p Provider) createFromSpec(ctx context.Context, c *spec.Cluster) (*cluster.Resource, error) {
	v, _ := p.version(c.Spec.KubernetesVersion)
	o := localkube.CreateOptions{Name: c.Metadata.Name, Version: v, Flavor: flavorOf(c), HA: c.Spec.ControlPlane.Count > 1,
		NodeGroups: localkube.GroupsOf(c), PodCIDR: c.Spec.Networking.PodCIDR, ServiceCIDR: c.Spec.Networking.ServiceCIDR}
	sec := Key.Get(c)
	o.PortBase, o.Durability = sec.PortBase, sec.Durability
	if _, err := p.Create(ctx, o); err != nil {
		return nil, err
	}
	return p.observed(ctx, c, kindControlPlane+"/"+c.Metadata.Name)
}

// observed returns the resource key as Observe now sees it.
func (p Provider) observed(ctx context.Context, c *spec.Cluster, key string) (*cluster.Resource, error) {
	return kit.Observed(ctx, p.Observe, c, key)
}

// Adopt describes an existing local cluster as a spec (for clusters made without a state record).
func (p Provider) Adopt(ctx context.Context, name string) (*spec.Cluster, error) {
	return p.clusters().Adopt(ctx, name)
}

// LogFiles maps each component of a cluster to its log file.
func (p Provider) LogFiles(_ context.Context, name string) (map[string]string, error) {
	dir := localkube.StateDir(p.Home, name)
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("logs %q: %w", name, cluster.ErrNotFound)
	}
	entries, _ := os.ReadDir(dir + "/logs")
	out := map[string]string{}
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".log"); ok {
			out[n] = dir + "/logs/" + e.Name()
		}
	}
	return out, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

package localkube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// LabelNodeGroup names the node group a node of a local cluster belongs to.
const LabelNodeGroup = "nuv.dev/nodegroup"

// DefaultNodeGroup is the group `nuv cluster create local --nodes K` makes; its nodes keep the
// names a flavor gives (cluster-node-1, or kind's control-plane/worker names).
const DefaultNodeGroup = spec.DefaultNodeGroup

// NodeGroup is a set of identical (kwok) nodes of a local cluster.
type NodeGroup struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	// Labels are added to the flavor's and nuv's own labels (and win over the flavor's).
	Labels map[string]string `json:"labels,omitempty"`
	Taints []corev1.Taint    `json:"taints,omitempty"`
	// ProviderIDPrefix, if set, replaces the flavor's providerID: node i gets prefix + its name.
	// Emulated clouds use it for the providerIDs of their instances.
	ProviderIDPrefix string `json:"providerIDPrefix,omitempty"`
	// InstanceType and Spot are what a spec asked for; they show as the labels
	// node.kubernetes.io/instance-type and nuv.dev/capacity-type=spot.
	InstanceType string `json:"instanceType,omitempty"`
	Spot         bool   `json:"spot,omitempty"`
}

// MaxNodes is the most nodes a local cluster has, in all its node groups. It is the size a cluster
// spec allows one node group (spec.nodeGroups[].count <= 1000) and the size local clusters are
// measured at (bench/clusters): 1,000 kwok nodes take about 50 CPU seconds of the cluster's
// processes to come Ready (74 s of wall time on two cores under a load average of 10), peak at
// ~0.8 GB RSS for the whole cluster and idle at about half a core (node lease renewals). The cost
// of a node is linear (etcd, the apiserver's watch cache and the informers of four processes each
// hold every node), but past 1,000 the idle lease traffic alone would take a core of a small
// machine, which is no longer a local test cluster.
const MaxNodes = 1000

// LabelCapacityType marks the nodes of a spot node group.
const LabelCapacityType = "nuv.dev/capacity-type"

// groups returns the node groups of a cluster; state written before node groups existed has one
// default group of s.Nodes.
func (s *state) groups() []NodeGroup {
	if len(s.NodeGroups) > 0 {
		return s.NodeGroups
	}
	return []NodeGroup{{Name: DefaultNodeGroup, Count: s.Nodes}}
}

func totalNodes(gs []NodeGroup) int {
	n := 0
	for _, g := range gs {
		n += g.Count
	}
	return n
}

// validateGroups checks names (unique DNS labels) and counts.
func validateGroups(gs []NodeGroup) error {
	seen := map[string]bool{}
	for _, g := range gs {
		if err := ValidName(g.Name); err != nil {
			return fmt.Errorf("node group: %w", err)
		}
		if seen[g.Name] {
			return fmt.Errorf("node group %q listed twice", g.Name)
		}
		seen[g.Name] = true
		if g.Count < 0 || g.Count > MaxNodes {
			return fmt.Errorf("node group %q: count %d must be between 0 and %d", g.Name, g.Count, MaxNodes)
		}
	}
	// A running cluster may be scaled to no node at all (an emulated EKS cluster without node
	// groups); Create still asks for at least one.
	if n := totalNodes(gs); n > MaxNodes {
		return fmt.Errorf("%d nodes in all: a local cluster has at most %d", n, MaxNodes)
	}
	return nil
}

// nodeSpec is what node i of group g of a cluster looks like.
func nodeSpec(f cluster.Flavor, clusterName, version string, g NodeGroup, i int) *corev1.Node {
	var name, providerID string
	var labels map[string]string
	if g.Name == DefaultNodeGroup {
		name, labels, providerID = cluster.NodeLabels(f, clusterName, i)
	} else {
		_, labels, providerID = cluster.NodeLabels(f, clusterName, i+1) // i+1: never kind's control-plane name
		name = fmt.Sprintf("%s-%s-%d", clusterName, g.Name, i+1)
		labels["kubernetes.io/hostname"] = name
		// The flavor's pool label names this group, as the distribution's own would.
		for _, k := range []string{"eks.amazonaws.com/nodegroup", "kubernetes.azure.com/agentpool", "cloud.google.com/gke-nodepool"} {
			if _, ok := labels[k]; ok {
				labels[k] = g.Name
			}
		}
		delete(labels, "node-role.kubernetes.io/control-plane")
	}
	labels[LabelNodeGroup] = g.Name
	// The deprecated OS and architecture labels a kubelet still sets: without them the node
	// lifecycle controller patches every node to add them.
	labels["beta.kubernetes.io/os"] = labels["kubernetes.io/os"]
	labels["beta.kubernetes.io/arch"] = labels["kubernetes.io/arch"]
	if g.InstanceType != "" {
		labels["node.kubernetes.io/instance-type"] = g.InstanceType
	}
	if g.Spot {
		labels[LabelCapacityType] = "spot"
	}
	maps.Copy(labels, g.Labels)
	if g.ProviderIDPrefix != "" {
		providerID = g.ProviderIDPrefix + name
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{
			nodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0", annotationIndex: strconv.Itoa(i)}},
		Spec: corev1.NodeSpec{ProviderID: providerID, Taints: g.Taints},
		// kwok's node stage keeps what a node says of itself and fills in the rest: nuv's nodes say
		// their capacity and the cluster's Kubernetes version (kwok's own would be "kwok-<version>").
		Status: corev1.NodeStatus{Capacity: nodeResources(), Allocatable: nodeResources(),
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: kubeletVersion(version), KubeProxyVersion: kubeletVersion(version)}},
	}
}

// kubeletVersion is the version a node of a cluster of Kubernetes version reports ("v1.36.3"); ""
// (unknown) leaves it to kwok.
func kubeletVersion(version string) string {
	if version == "" {
		return ""
	}
	return "v" + strings.TrimPrefix(version, "v")
}

// annotationIndex records a node's index within its group, so scaling down removes the newest.
const annotationIndex = "nuv.dev/node-index"

// groupNodes lists the nodes of group name; nodes of clusters made before node groups existed
// carry no group label and belong to the default group.
func groupNodes(ctx context.Context, cs kubernetes.Interface, name string) ([]corev1.Node, error) {
	all, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	var out []corev1.Node
	for _, n := range all.Items {
		g, ok := n.Labels[LabelNodeGroup]
		if !ok && n.Annotations[nodeAnnotation] == "fake" {
			g = DefaultNodeGroup
		}
		if g == name {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(a, b int) bool { return nodeIndex(out[a]) < nodeIndex(out[b]) })
	return out, nil
}

func nodeIndex(n corev1.Node) int {
	if v, err := strconv.Atoi(n.Annotations[annotationIndex]); err == nil {
		return v
	}
	// Nodes made before the index annotation: their names end in the 1-based index.
	if i := strings.LastIndexAny(n.Name, "-"); i >= 0 {
		if v, err := strconv.Atoi(n.Name[i+1:]); err == nil {
			return v - 1
		}
	}
	return 1 << 20
}

// convergeGroup makes group g have exactly g.Count nodes with its labels and taints: it creates the
// missing ones, removes the highest-indexed extra ones and patches labels and taints that differ.
// The requests run nodeWorkers at a time (a 1,000-node group is 1,000 creates).
func convergeGroup(ctx context.Context, cs kubernetes.Interface, f cluster.Flavor, clusterName, version string, g NodeGroup, dropLabels []string) error {
	nodes, err := groupNodes(ctx, cs, g.Name)
	if err != nil {
		return err
	}
	have := map[int]corev1.Node{}
	for _, n := range nodes {
		have[nodeIndex(n)] = n
	}
	var extra []string
	for _, n := range nodes {
		if nodeIndex(n) >= g.Count {
			extra = append(extra, n.Name)
		}
	}
	return errors.Join(
		forEach(ctx, g.Count, func(ctx context.Context, i int) error {
			want := nodeSpec(f, clusterName, version, g, i)
			n, ok := have[i]
			if !ok {
				if _, err := cs.CoreV1().Nodes().Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					return fmt.Errorf("create node %s: %w", want.Name, err)
				}
				return nil
			}
			return patchNode(ctx, cs, n, want, dropLabels)
		}),
		forEach(ctx, len(extra), func(ctx context.Context, i int) error { return deleteNode(ctx, cs, extra[i]) }))
}

// nodeWorkers is how many node requests nuv has in flight at once. The API server of a local
// cluster handles a node create in a few milliseconds of CPU; 16 keep both cores of a small
// machine busy without queueing more than the apiserver's default in-flight limits (400 reads,
// 200 writes) would ever see from nuv.
const nodeWorkers = 16

// forEach calls f for 0..n-1, nodeWorkers at a time; the first error stops the rest (calls already
// running finish) and is returned.
func forEach(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(nodeWorkers)
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error { return f(ctx, i) })
	}
	return g.Wait()
}

// patchNode makes n carry want's group labels and taints (other labels, e.g. the flavor's random
// providerID-derived ones, stay as they are).
func patchNode(ctx context.Context, cs kubernetes.Interface, n corev1.Node, want *corev1.Node, drop []string) error {
	labels := map[string]any{}
	for _, k := range drop {
		if _, has := n.Labels[k]; has {
			if _, keep := want.Labels[k]; !keep {
				labels[k] = nil
			}
		}
	}
	for k, v := range want.Labels {
		if n.Labels[k] != v && k != "kubernetes.io/hostname" {
			labels[k] = v
		}
	}
	// Taints Kubernetes manages (node.kubernetes.io/not-ready while a node comes up, unreachable,
	// ...) are not the group's: they are neither drift nor removed.
	system := systemTaints(n.Spec.Taints)
	taintsDiffer := !sameTaints(withoutSystemTaints(n.Spec.Taints), want.Spec.Taints)
	if len(labels) == 0 && !taintsDiffer {
		return nil
	}
	patch := map[string]any{}
	if len(labels) > 0 {
		patch["metadata"] = map[string]any{"labels": labels}
	}
	if taintsDiffer {
		taints := append(append([]corev1.Taint{}, want.Spec.Taints...), system...)
		patch["spec"] = map[string]any{"taints": taints}
	}
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, b, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("update node %s: %w", n.Name, err)
	}
	return nil
}

// systemTaintPrefix is the key prefix of the taints the control plane puts on nodes.
const systemTaintPrefix = "node.kubernetes.io/"

func systemTaints(ts []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range ts {
		if strings.HasPrefix(t.Key, systemTaintPrefix) {
			out = append(out, t)
		}
	}
	return out
}

func withoutSystemTaints(ts []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range ts {
		if !strings.HasPrefix(t.Key, systemTaintPrefix) {
			out = append(out, t)
		}
	}
	return out
}

func sameTaints(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Value != b[i].Value || a[i].Effect != b[i].Effect {
			return false
		}
	}
	return true
}

func deleteNode(ctx context.Context, cs kubernetes.Interface, name string) error {
	// Pods bound to the node go with it: the pod garbage collector removes pods of deleted nodes.
	err := cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete node %s: %w", name, err)
	}
	return nil
}

// removeGroupsExcept deletes the nodes of every group not in keep.
func removeGroupsExcept(ctx context.Context, cs kubernetes.Interface, keep []NodeGroup) error {
	all, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	want := map[string]bool{}
	for _, g := range keep {
		want[g.Name] = true
	}
	var gone []string
	for _, n := range all.Items {
		if n.Annotations[nodeAnnotation] != "fake" {
			continue
		}
		g, ok := n.Labels[LabelNodeGroup]
		if !ok {
			g = DefaultNodeGroup
		}
		if !want[g] {
			gone = append(gone, n.Name)
		}
	}
	return forEach(ctx, len(gone), func(ctx context.Context, i int) error { return deleteNode(ctx, cs, gone[i]) })
}

// NodeGroups returns the node groups a cluster was given.
func (p Clusters) NodeGroups(name string) ([]NodeGroup, error) {
	s, err := loadState(StateDir(p.Home, name))
	if err != nil {
		return nil, err
	}
	return s.groups(), nil
}

// ObservedGroup is what the API server shows of one node group.
type ObservedGroup struct {
	Name  string
	Nodes int // nodes carrying the group's label
	Ready int
	// Labels and Taints are those of the group's first node (nuv's and the flavor's own included).
	Labels map[string]string
	Taints []corev1.Taint
}

// ObserveNodeGroups reads the node groups of a running cluster from its API server, in name order.
func (p Clusters) ObserveNodeGroups(ctx context.Context, name string) ([]ObservedGroup, error) {
	cs, err := clientFor(StateDir(p.Home, name))
	if err != nil {
		return nil, err
	}
	return ObserveGroups(ctx, cs, name)
}

func ObserveGroups(ctx context.Context, cs kubernetes.Interface, name string) ([]ObservedGroup, error) {
	all, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: list nodes: %w", name, err)
	}
	byName := map[string]*ObservedGroup{}
	for _, n := range all.Items {
		if n.Annotations[nodeAnnotation] != "fake" {
			continue
		}
		g, ok := n.Labels[LabelNodeGroup]
		if !ok {
			g = DefaultNodeGroup
		}
		og := byName[g]
		if og == nil {
			og = &ObservedGroup{Name: g, Labels: n.Labels, Taints: n.Spec.Taints}
			byName[g] = og
		}
		og.Nodes++
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				og.Ready++
			}
		}
	}
	out := make([]ObservedGroup, 0, len(byName))
	for _, g := range byName {
		out = append(out, *g)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}

// SetNodeGroups converges a running cluster's nodes to groups: nodes are added to or removed from
// each group, labels and taints updated, groups not listed removed. It records the groups in the
// cluster's state and waits until every node is Ready.
func (p Clusters) SetNodeGroups(ctx context.Context, name string, groups []NodeGroup) error {
	return p.changeGroups(ctx, name, func([]NodeGroup) []NodeGroup { return groups })
}

// changeGroups applies change to the recorded groups of a cluster, under the cluster's lock.
func (p Clusters) changeGroups(ctx context.Context, name string, change func([]NodeGroup) []NodeGroup) error {
	dir, unlock, err := p.lockExisting(ctx, "scale", name)
	if err != nil {
		return err
	}
	defer unlock()
	s, err := loadState(dir)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", name, err)
	}
	old := s.groups()
	groups := change(append([]NodeGroup(nil), old...))
	if err := validateGroups(groups); err != nil {
		return fmt.Errorf("cluster %s: %w", name, err)
	}
	cs, err := clientFor(dir)
	if err != nil {
		return err
	}
	f, err := cluster.LookupFlavor(s.Flavor)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := applyGroups(ctx, cs, f, s.Name, s.Version, groups, old); err != nil {
		return fmt.Errorf("cluster %s: %w", name, err)
	}
	p.log().V(1).Infof("  node groups of %s converged in %.2fs", name, time.Since(t0).Seconds())
	s.NodeGroups = append([]NodeGroup(nil), groups...)
	s.Nodes = totalNodes(groups)
	if err := saveState(dir, s); err != nil {
		return err
	}
	return waitNodesReady(ctx, dir, s, p.log())
}

func applyGroups(ctx context.Context, cs kubernetes.Interface, f cluster.Flavor, clusterName, version string, groups []NodeGroup, old []NodeGroup) error {
	for _, g := range groups {
		if err := convergeGroup(ctx, cs, f, clusterName, version, g, droppedLabels(old, g)); err != nil {
			return err
		}
	}
	return removeGroupsExcept(ctx, cs, groups)
}

// droppedLabels lists the labels the recorded version of g set that g no longer sets.
func droppedLabels(old []NodeGroup, g NodeGroup) []string {
	var drop []string
	for _, o := range old {
		if o.Name != g.Name {
			continue
		}
		for k := range o.Labels {
			if _, ok := g.Labels[k]; !ok {
				drop = append(drop, k)
			}
		}
		if o.InstanceType != "" && g.InstanceType == "" {
			drop = append(drop, "node.kubernetes.io/instance-type")
		}
		if o.Spot && !g.Spot {
			drop = append(drop, LabelCapacityType)
		}
	}
	return drop
}

// EnsureNodeGroup adds or converges one node group of a running cluster (the others are left as
// they are) and waits until its nodes are Ready.
func (p Clusters) EnsureNodeGroup(ctx context.Context, name string, g NodeGroup) error {
	return p.changeGroups(ctx, name, func(gs []NodeGroup) []NodeGroup {
		for i := range gs {
			if gs[i].Name == g.Name {
				gs[i] = g
				return gs
			}
		}
		return append(gs, g)
	})
}

// DeleteNodeGroup removes one node group and its nodes from a running cluster.
func (p Clusters) DeleteNodeGroup(ctx context.Context, name, group string) error {
	return p.changeGroups(ctx, name, func(gs []NodeGroup) []NodeGroup {
		var out []NodeGroup
		for _, g := range gs {
			if g.Name != group {
				out = append(out, g)
			}
		}
		return out
	})
}

// GroupsOf turns a spec's node groups into local node groups (one default group of one node when
// the spec lists none).
func GroupsOf(c *spec.Cluster) []NodeGroup {
	if len(c.Spec.NodeGroups) == 0 {
		return []NodeGroup{{Name: DefaultNodeGroup, Count: 1}}
	}
	var out []NodeGroup
	for _, g := range c.Spec.NodeGroups {
		ng := NodeGroup{Name: g.Name, Count: g.Size(), Labels: maps.Clone(g.Labels), InstanceType: g.InstanceType, Spot: g.Spot}
		for _, t := range g.Taints {
			if pt, err := spec.ParseTaint(t); err == nil {
				ng.Taints = append(ng.Taints, corev1.Taint{Key: pt.Key, Value: pt.Value, Effect: corev1.TaintEffect(pt.Effect)})
			}
		}
		out = append(out, ng)
	}
	return out
}

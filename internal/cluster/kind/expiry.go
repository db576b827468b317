package kind

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

var _ cluster.Expirer = (*Provider)(nil)

// nuv's marks on the nodes of a kind cluster, besides LabelCluster and LabelProvider: when it
// expires (Unix seconds: a label value cannot hold an RFC 3339 time) and the state store that made
// it. `nuv cluster gc` reads them to find an expired kind cluster whose record was lost.
const (
	LabelExpiresAt = "nuv.dev/expires-at"
	LabelOwner     = kit.TagOwner
)

// markLabels are m as node labels (none for what m lacks).
func markLabels(m spec.Marks) map[string]string {
	return kit.MarkLabelsKeyed(m, LabelExpiresAt, LabelOwner)
}

// nodeMarks reads nuv's marks from the first node of cluster name that carries nuv's labels;
// found is false when no node does (a cluster nuv did not make).
func nodeMarks(nodes []corev1.Node, name string) (m spec.Marks, found bool, err error) {
	for _, n := range nodes {
		if n.Labels[LabelCluster] != name || n.Labels[LabelProvider] != "kind" {
			continue
		}
		m.Owner = n.Labels[LabelOwner]
		if v, ok := n.Labels[LabelExpiresAt]; ok {
			s, perr := strconv.ParseInt(v, 10, 64)
			if perr != nil {
				return m, true, fmt.Errorf("node %s: label %s=%q is not a time in Unix seconds", n.Name, LabelExpiresAt, v)
			}
			t := time.Unix(s, 0).UTC()
			m.ExpiresAt = &t
		}
		return m, true, nil
	}
	return m, false, nil
}

// Tagged lists the kind clusters of the container runtime whose nodes carry nuv's labels, with the
// marks they carry; a kind cluster without them (made with kind itself) is not listed. A cluster
// whose nodes cannot be read (containers stopped, API server not answering) is listed with Err
// when this nuv marked it, and left out otherwise: nuv cannot tell it is its own. No runtime, no
// clusters.
func (p *Provider) Tagged(ctx context.Context) ([]cluster.Tagged, error) {
	rt, err := p.runtime(ctx)
	if err != nil {
		return nil, nil
	}
	names, err := p.kind(rt).List()
	if err != nil {
		return nil, fmt.Errorf("list kind clusters: %w", err)
	}
	where := "container runtime " + rt.Name
	var out []cluster.Tagged
	for _, name := range names {
		nodes, err := p.liveNodes(ctx, rt, name)
		if err != nil {
			if p.marked(ctx, rt, name) {
				out = append(out, cluster.Tagged{Name: name, Where: where, Err: err})
			}
			continue
		}
		m, found, err := nodeMarks(nodes, name)
		if !found {
			continue
		}
		out = append(out, cluster.Tagged{Name: name, Marks: m, Where: where, Err: err})
	}
	return out, nil
}

// liveNodes lists the Kubernetes nodes of cluster name when all its node containers run.
func (p *Provider) liveNodes(ctx context.Context, rt containerrt.Runtime, name string) ([]corev1.Node, error) {
	cs, err := p.containers(ctx, rt, name)
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		if !c.Running {
			return nil, fmt.Errorf("its node container %s is not running: its labels cannot be read", c.Name)
		}
	}
	cfg, err := p.restConfig(rt, name)
	if err != nil {
		return nil, err
	}
	nodes, err := nodesOf(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("its API server does not answer (%v): its labels cannot be read", err)
	}
	return nodes, nil
}

// Mark writes c.Marks on the labels of every node of the kind cluster that carries nuv's labels
// (a mark c lacks is removed): after `nuv cluster extend` or a changed spec.ttl.
func (p *Provider) Mark(ctx context.Context, c *spec.Cluster) error {
	name := c.Metadata.Name
	rt, err := p.runtime(ctx)
	if err != nil {
		return fmt.Errorf("kind cluster %s: %w", name, err)
	}
	cfg, err := p.restConfig(rt, name)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: LabelCluster + "=" + name + "," + LabelProvider + "=kind"})
	if err != nil {
		return fmt.Errorf("kind cluster %s: list its nodes: %w", name, err)
	}
	if len(l.Items) == 0 {
		return fmt.Errorf("kind cluster %s: no node carries nuv's labels", name)
	}
	want := markLabels(c.Marks)
	labels := map[string]any{LabelExpiresAt: nil, LabelOwner: nil}
	for k, v := range want {
		labels[k] = v
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range l.Items {
		if _, err := cs.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			errs = append(errs, fmt.Errorf("kind cluster %s: label node %s: %w", name, n.Name, err))
		}
	}
	return errors.Join(errs...)
}

// ownedByLabel reports whether nodes carry nuv's labels of cluster name with owner, the owner
// Adopt read from them for gc (the engine checked, under the cluster's lock, that it is its own
// store's and expired).
func ownedByLabel(nodes []corev1.Node, name, owner string) bool {
	m, found, err := nodeMarks(nodes, name)
	return owner != "" && found && err == nil && m.Owner == owner
}

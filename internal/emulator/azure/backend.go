package azure

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/emulator/emucore"
	"github.com/nuv-dev/nuv/internal/kube"
)

// Backend runs the control planes behind managed clusters.
type Backend interface {
	// Ensure makes the control plane of spec.Name exist and run, with the nodes of its pools.
	Ensure(ctx context.Context, spec ClusterSpec) error
	// Kubeconfig returns a kubeconfig for the control plane of name whose cluster and context are
	// called clusterName and whose user is user.
	Kubeconfig(name, clusterName, user string) ([]byte, error)
	// Delete stops and removes the control plane; a missing one is no error.
	Delete(ctx context.Context, name string) error
}

// ClusterSpec is what a managed cluster asks of its control plane.
type ClusterSpec struct {
	// Name is the control plane's (local cluster's) name, Cluster the managed cluster's.
	Name, Cluster string
	// Subscription, NodeResourceGroup and Location make the nodes' labels and providerIDs.
	Subscription, NodeResourceGroup, Location string
	Pools                                     []Pool
}

// Pool is an agent pool as nodes.
type Pool struct {
	Name, Mode, VMSize string
	Count              int
	Spot               bool
	Labels             map[string]string
	Taints             []string // key=value:Effect
	Zones              []string
}

// LocalName is the local cluster name of the managed cluster "group/name": a DNS label of at most
// 40 characters, stable.
func LocalName(key string) string {
	h := sha256.Sum256([]byte(key))
	n := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(key))
	n = strings.Trim(n, "-")
	if len(n) > 26 {
		n = strings.Trim(n[:26], "-")
	}
	return "aks-" + n + "-" + hex.EncodeToString(h[:])[:6]
}

// LocalBackend runs each control plane on the emulators' control-plane backend
// (emucore.ControlPlanes: a nuv local cluster of flavor aks under the emulator's directory), with
// AKS's node labels, taints and providerIDs.
type LocalBackend struct {
	*emucore.ControlPlanes
}

// NewLocalBackend keeps the control planes under dir.
func NewLocalBackend(dir string, log cli.Logger) *LocalBackend {
	return &LocalBackend{emucore.NewControlPlanes(dir, "aks", log)}
}

// Ensure creates or starts the local cluster and converges its nodes to the pools (a cluster
// whose pools have no nodes yet is created with one node, then given its pools).
func (b *LocalBackend) Ensure(ctx context.Context, spec ClusterSpec) error {
	groups := make([]emucore.NodeGroup, 0, len(spec.Pools))
	for _, p := range spec.Pools {
		groups = append(groups, nodeGroup(spec, p))
	}
	if _, err := b.ControlPlanes.Ensure(ctx, spec.Name, "", groups); err != nil {
		return err
	}
	return b.SetNodeGroups(ctx, spec.Name, groups)
}

// nodeGroup is pool p as a local node group: AKS's node labels, taints and providerIDs.
func nodeGroup(spec ClusterSpec, p Pool) emucore.NodeGroup {
	labels := map[string]string{
		"kubernetes.azure.com/cluster":   spec.NodeResourceGroup,
		"kubernetes.azure.com/agentpool": p.Name,
		"kubernetes.azure.com/mode":      strings.ToLower(p.Mode),
		"kubernetes.azure.com/role":      "agent",
		"agentpool":                      p.Name,
		"topology.kubernetes.io/region":  spec.Location,
	}
	if len(p.Zones) > 0 {
		labels["topology.kubernetes.io/zone"] = spec.Location + "-" + p.Zones[0]
	} else {
		labels["topology.kubernetes.io/zone"] = "0"
	}
	var taints []corev1.Taint
	if p.Spot {
		labels["kubernetes.azure.com/scalesetpriority"] = "spot"
		taints = append(taints, corev1.Taint{Key: "kubernetes.azure.com/scalesetpriority", Value: "spot", Effect: corev1.TaintEffectNoSchedule})
	}
	for k, v := range p.Labels {
		labels[k] = v
	}
	// Not an AKS label: it says the node was made by this emulator (reports show "emulated by
	// azure"; type detection ignores it), set last so a pool's own labels cannot hide it.
	labels[kube.LabelEmulated] = "azure"
	for _, t := range p.Taints {
		kv, eff, _ := strings.Cut(t, ":")
		k, v, _ := strings.Cut(kv, "=")
		taints = append(taints, corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(eff)})
	}
	prefix := fmt.Sprintf("azure:///subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachineScaleSets/aks-%s-vmss/virtualMachines/",
		spec.Subscription, strings.ToLower(spec.NodeResourceGroup), p.Name)
	return emucore.NodeGroup{Name: p.Name, Count: p.Count, Labels: labels, Taints: taints, ProviderIDPrefix: prefix, InstanceType: p.VMSize, Spot: p.Spot}
}

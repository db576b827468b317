package azure

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/paths"
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

// LocalBackend runs each control plane as a nuv local cluster (flavor aks) under the emulator's
// directory, apart from the user's own local clusters. The control plane runs the local provider's
// Kubernetes version whatever version the managed cluster reports.
type LocalBackend struct {
	Provider local.Provider
}

// NewLocalBackend keeps the control planes under dir.
func NewLocalBackend(dir string, log cli.Logger) *LocalBackend {
	return &LocalBackend{Provider: local.Provider{Home: dir, Project: dir, Log: log, Getenv: os.Getenv}}
}

// Ensure creates or starts the local cluster and converges its nodes to the pools.
func (b *LocalBackend) Ensure(ctx context.Context, spec ClusterSpec) error {
	groups := make([]local.NodeGroup, 0, len(spec.Pools))
	for _, p := range spec.Pools {
		groups = append(groups, nodeGroup(spec, p))
	}
	create := local.CreateOptions{Name: spec.Name, Flavor: "aks", NodeGroups: groups, Durability: local.Safe}
	if countNodes(groups) == 0 {
		create.NodeGroups = nil // a cluster is created with one node, then given its pools
	}
	if _, err := b.Provider.Ensure(ctx, create); err != nil {
		return err
	}
	return b.Provider.SetNodeGroups(ctx, spec.Name, groups)
}

func countNodes(gs []local.NodeGroup) int {
	n := 0
	for _, g := range gs {
		n += g.Count
	}
	return n
}

// nodeGroup is pool p as a local node group: AKS's node labels, taints and providerIDs.
func nodeGroup(spec ClusterSpec, p Pool) local.NodeGroup {
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
	return local.NodeGroup{Name: p.Name, Count: p.Count, Labels: labels, Taints: taints, ProviderIDPrefix: prefix, InstanceType: p.VMSize, Spot: p.Spot}
}

// Kubeconfig reads the local cluster's kubeconfig and names its cluster, context and user as AKS does.
func (b *LocalBackend) Kubeconfig(name, clusterName, user string) ([]byte, error) {
	path := filepath.Join(paths.Clusters(b.Provider.Project), name+".kubeconfig")
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, err
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil, fmt.Errorf("%s has no current context", path)
	}
	out := clientcmdapi.NewConfig()
	out.Clusters[clusterName] = cfg.Clusters[ctx.Cluster]
	out.AuthInfos[user] = cfg.AuthInfos[ctx.AuthInfo]
	out.Contexts[clusterName] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: user}
	out.CurrentContext = clusterName
	if out.Clusters[clusterName] == nil || out.AuthInfos[user] == nil {
		return nil, fmt.Errorf("%s: the current context names a missing cluster or user", path)
	}
	return clientcmd.Write(*out)
}

// Delete deletes the local cluster.
func (b *LocalBackend) Delete(ctx context.Context, name string) error {
	err := b.Provider.Delete(ctx, name)
	if errors.Is(err, cluster.ErrNotFound) {
		return nil
	}
	return err
}

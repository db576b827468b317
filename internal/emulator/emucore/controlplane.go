package emucore

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/controlplane"
)

// This file is the emulators' one control-plane backend, and the only place where they use nuv's
// local control planes (package controlplane): every emulated cluster (EKS, AKS, GKE) is a real local cluster of the cloud's
// flavor whose state lives under the emulator's directory, apart from the user's own clusters.

// ControlPlanes runs the control planes (and the nodes) of an emulator's clusters as nuv local
// clusters of one flavor. The control planes run the local provider's Kubernetes version
// whatever version the emulated cluster reports.
type ControlPlanes struct {
	// Provider manages the control planes; its home and project are the control planes' directory.
	Provider controlplane.Manager
	// Flavor is the local flavor of the clusters: eks, aks or gke.
	Flavor string
}

// NewControlPlanes keeps control planes of flavor under dir.
func NewControlPlanes(dir, flavor string, log cli.Logger) *ControlPlanes {
	return &ControlPlanes{Provider: controlplane.Manager{Home: dir, Project: dir, Log: log, Getenv: os.Getenv}, Flavor: flavor}
}

// NodeGroup is a group of nodes of an emulated cluster, as the cloud shapes them.
type NodeGroup struct {
	Name  string
	Count int
	// Labels and Taints are the cloud's (and the user's) on each node.
	Labels map[string]string
	Taints []corev1.Taint
	// ProviderIDPrefix is the cloud's providerID of a node without its name.
	ProviderIDPrefix string
	// InstanceType and Spot are what the group asked for.
	InstanceType string
	Spot         bool
}

// Endpoint is where a control plane answers: its HTTPS URL and CA certificate (PEM).
type Endpoint struct {
	URL string
	CA  []byte
}

// ValidName reports why name cannot name a control plane (a local cluster), if it cannot.
func ValidName(name string) error { return controlplane.ValidName(name) }

// Ensure creates the control plane name (or starts it when stopped) and returns where it answers.
// webhook, if set, is the TokenReview webhook its API server asks about bearer tokens. A new
// control plane gets groups as its nodes, or one node when they have none (the emulator sets its
// node groups before the cluster is ready).
func (c *ControlPlanes) Ensure(ctx context.Context, name, webhook string, groups []NodeGroup) (Endpoint, error) {
	o := controlplane.Options{Name: name, Nodes: 1, Flavor: c.Flavor, TokenWebhook: webhook, Durability: controlplane.Safe}
	if n := localGroups(groups); countNodes(n) > 0 {
		o.Nodes, o.NodeGroups = 0, n
	}
	ep, err := c.Provider.Ensure(ctx, o)
	if err != nil {
		return Endpoint{}, err
	}
	return Endpoint{URL: ep.URL, CA: ep.CA}, nil
}

// SetNodeGroups makes the nodes of control plane name those of groups: nodes added, removed,
// relabelled, then Ready.
func (c *ControlPlanes) SetNodeGroups(ctx context.Context, name string, groups []NodeGroup) error {
	return c.Provider.SetNodeGroups(ctx, name, localGroups(groups))
}

// Delete stops and removes control plane name; a missing one is no error.
func (c *ControlPlanes) Delete(ctx context.Context, name string) error {
	return c.Provider.Delete(ctx, name)
}

// Kubeconfig is a kubeconfig of control plane name whose cluster and context are called
// clusterName and whose user is user (as the cloud names them).
func (c *ControlPlanes) Kubeconfig(name, clusterName, user string) ([]byte, error) {
	path := c.Provider.Kubeconfig(name)
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

// localGroups converts groups (nil stays nil: a cluster whose groups were never set).
func localGroups(groups []NodeGroup) []controlplane.NodeGroup {
	if groups == nil {
		return nil
	}
	out := make([]controlplane.NodeGroup, 0, len(groups))
	for _, g := range groups {
		out = append(out, controlplane.NodeGroup{Name: g.Name, Count: g.Count, Labels: g.Labels, Taints: g.Taints,
			ProviderIDPrefix: g.ProviderIDPrefix, InstanceType: g.InstanceType, Spot: g.Spot})
	}
	return out
}

func countNodes(gs []controlplane.NodeGroup) int {
	n := 0
	for _, g := range gs {
		n += g.Count
	}
	return n
}

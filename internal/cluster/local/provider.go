// Package local is nuv's local cluster provider: clusters of a real Kubernetes control plane with
// kwok faking nodes, run on this machine by package localkube (its processes, state directory and
// record are described there). This package is what the lifecycle engine sees of them: the
// cluster.Provider (validate, desired and observed resources, changes carried out, adoption,
// logs), the spec.local section, the `nuv cluster create local` shorthand and the
// `nuv cluster prepare` verb.
package local

import (
	"context"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"k8s.io/client-go/rest"
)

// Provider manages local clusters.
type Provider struct {
	// Home is nuv's state directory (paths.Home); clusters live in Home/clusters/<name>.
	Home string
	// Project is the project root; kubeconfigs are written to Project/clusters/<name>.kubeconfig.
	Project string
	// Log receives progress; nil is quiet.
	Log cli.Logger
	// Getenv reads the environment (companion build settings, NUV_LOCAL_PORT_BASE); nil is os.Getenv.
	Getenv func(string) string
	// Registry wires a cluster to nuv's loopback registry (a spec's `registry: true`); nil: refused.
	Registry RegistryFunc
}

// clusters is the machinery p's clusters run on.
func (p Provider) clusters() localkube.Clusters {
	return localkube.Clusters{Home: p.Home, Project: p.Project, Log: p.Log, Getenv: p.Getenv}
}

// Name is "local".
func (p Provider) Name() string { return "local" }

// Create creates and starts a cluster (localkube.Clusters.Create).
func (p Provider) Create(ctx context.Context, o localkube.CreateOptions) (cluster.Info, error) {
	return p.clusters().Create(ctx, o)
}

// Ensure returns the cluster o.Name running, made, started or repaired as needed
// (localkube.Clusters.Ensure).
func (p Provider) Ensure(ctx context.Context, o localkube.CreateOptions) (cluster.Info, error) {
	return p.clusters().Ensure(ctx, o)
}

// Start starts a stopped cluster, or repairs a degraded one.
func (p Provider) Start(ctx context.Context, name string) error { return p.clusters().Start(ctx, name) }

// Stop stops every process of a cluster and keeps its state.
func (p Provider) Stop(ctx context.Context, name string) error { return p.clusters().Stop(ctx, name) }

// Delete stops a cluster and removes its state directory and kubeconfig.
func (p Provider) Delete(ctx context.Context, name string) error {
	return p.clusters().Delete(ctx, name)
}

// Names lists the clusters in Home, sorted.
func (p Provider) Names() ([]string, error) { return p.clusters().Names() }

// Status reports one cluster: its processes, and its nodes when the API answers. The cluster's
// own record (in its directory) says all there is to know, so of c only the name counts.
func (p Provider) Status(ctx context.Context, c *spec.Cluster) (cluster.Info, error) {
	return p.clusters().Status(ctx, c.Metadata.Name)
}

// List reports every local cluster; a cluster whose state cannot be read is reported as corrupt.
func (p Provider) List(ctx context.Context) ([]cluster.Info, error) { return p.clusters().List(ctx) }

// RESTConfig returns an admin client configuration for a cluster (from its state directory).
func (p Provider) RESTConfig(name string) (*rest.Config, error) { return p.clusters().RESTConfig(name) }

// NodeGroups returns the node groups a cluster's record holds.
func (p Provider) NodeGroups(name string) ([]localkube.NodeGroup, error) {
	return p.clusters().NodeGroups(name)
}

// ObserveNodeGroups reports a running cluster's node groups as its API shows them.
func (p Provider) ObserveNodeGroups(ctx context.Context, name string) ([]localkube.ObservedGroup, error) {
	return p.clusters().ObserveNodeGroups(ctx, name)
}

// SetNodeGroups makes the cluster's nodes those of groups.
func (p Provider) SetNodeGroups(ctx context.Context, name string, groups []localkube.NodeGroup) error {
	return p.clusters().SetNodeGroups(ctx, name, groups)
}

// EnsureNodeGroup makes one node group of the cluster what g says, the others unchanged.
func (p Provider) EnsureNodeGroup(ctx context.Context, name string, g localkube.NodeGroup) error {
	return p.clusters().EnsureNodeGroup(ctx, name, g)
}

// DeleteNodeGroup removes one node group of the cluster and its nodes.
func (p Provider) DeleteNodeGroup(ctx context.Context, name, group string) error {
	return p.clusters().DeleteNodeGroup(ctx, name, group)
}

package gke

import (
	"context"

	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Ready says whether a GKE cluster is ready for its users (cluster.Readier): through the
// kubeconfig apply wrote, the API answers and at least the spec's nodes are registered (a regional
// pool's count is per zone, so there may be more), every one Ready. A node pool's operation is DONE
// before its nodes are Ready.
func (p *Provider) Ready(ctx context.Context, c *spec.Cluster) error {
	return kit.NodesReady(ctx, p.kubeconfigPath(c.Metadata.Name), kit.SpecNodes(c))
}

package aks

import (
	"context"

	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Ready says whether an AKS cluster is ready for its users (cluster.Readier): through the
// kubeconfig apply wrote, the API answers and every node of the spec's agent pools is registered
// and Ready. ARM answers Succeeded for a pool before its nodes are Ready.
func (p *Provider) Ready(ctx context.Context, c *spec.Cluster) error {
	return kit.NodesReady(ctx, p.kubeconfigPath(c.Metadata.Name), kit.SpecNodes(c))
}

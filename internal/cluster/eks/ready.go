package eks

import (
	"context"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Ready does not say (cluster.ErrUnsupported, cluster.Readier): apply already waits for each
// node group to be ACTIVE.
func (p *Provider) Ready(context.Context, *spec.Cluster) error {
	return cluster.ErrUnsupported
}

package eks

import (
	"context"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Ready says whether a self-managed cluster is ready for its users (cluster.Readier): through the
// kubeconfig apply wrote, whose server is the load balancer, the API answers /readyz and every
// node of the spec — each control plane and each worker of its node groups — is registered and
// Ready. kubeadm's join returns before the kubelet reports Ready (the pod network still starting),
// so without this wait an apply returned with nodes NotReady. For EKS, apply already waits for
// each node group to be ACTIVE, and the provider does not say here (cluster.ErrUnsupported).
func (p *Provider) Ready(ctx context.Context, c *spec.Cluster) error {
	return cluster.ErrUnsupported
}

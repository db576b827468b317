package eks

import (
	"context"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// KarpenterCluster is what the Karpenter mapping needs to know of an EKS cluster: its name (the
// discovery tag that selects subnets and security groups), the nodes' IAM role and the cluster's
// Kubernetes version.
type KarpenterCluster struct {
	Name    string
	Role    string // the nodes' IAM role name
	Version string
	Region  string
}

// Karpenter maps a `manager: karpenter` node group to Karpenter objects (a NodePool and an
// EC2NodeClass) and installs or removes them on a cluster, CRDs first. Package karpenter
// implements it; the provider only calls it, so the mapping lives in one place.
type Karpenter interface {
	Objects(c KarpenterCluster, g spec.NodeGroup) ([]*unstructured.Unstructured, error)
	Apply(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error
	Delete(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error
}

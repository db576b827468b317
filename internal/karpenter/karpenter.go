// Package karpenter turns the node groups of a cluster spec that say `manager: karpenter` into
// Karpenter's own objects, the way kOps maps an instance group: one NodePool (karpenter.sh/v1) and
// one EC2NodeClass (karpenter.k8s.aws/v1) per group. It installs Karpenter's real CRDs (taken from
// the Karpenter Go module, github.com/aws/karpenter-provider-aws, never copied into nuv) so the
// cluster's API server validates the objects with Karpenter's own OpenAPI schema and CEL rules, and
// applies, observes and deletes the objects with server-side apply (field manager "nuv"), labelled
// as nuv's so that an object nuv did not make is never changed or deleted.
//
// The mapping (Objects):
//
//   - instanceType (comma-separated for several) → a node.kubernetes.io/instance-type In requirement;
//     spot → karpenter.sh/capacity-type In [spot], else [on-demand]; kubernetes.io/os In [linux];
//   - max → limits.nodes (required: an unbounded pool could launch nodes without end);
//   - count → replicas, a static NodePool of exactly that many nodes (Karpenter's alpha static
//     capacity); without count the pool is dynamic and scales with pending pods up to max. NodePool
//     v1 has no minimum size, so min cannot be mapped: a group with min > 0 and no count is refused;
//   - labels and taints → the NodeClaim template (plus nuv.dev/nodegroup on every node);
//   - the EC2NodeClass selects subnets and security groups by the cluster's karpenter.sh/discovery
//     tag (or IDs the caller knows), runs the AMI alias (al2023@latest unless set) with the node
//     role, gives diskSize GiB of encrypted gp3 root volume, and tags instances nuv.dev/cluster.
package karpenter

import (
	"fmt"

	awsapis "github.com/aws/karpenter-provider-aws/pkg/apis"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// ModuleVersion is the version of github.com/aws/karpenter-provider-aws whose CRDs nuv installs (go.mod
// requires it; a test keeps the two in step). v1.14.2 and later declare go >= 1.26.9, which the Go
// toolchain nuv builds with here refuses; v1.14.1 requires a sigs.k8s.io/karpenter pseudo-version the
// module proxy does not serve. The v1 APIs (karpenter.sh/v1, karpenter.k8s.aws/v1) are the same.
const ModuleVersion = "v1.13.1"

// API groups, versions and kinds nuv writes.
const (
	GroupCore      = "karpenter.sh"
	GroupAWS       = "karpenter.k8s.aws"
	Version        = "v1"
	KindNodePool   = "NodePool"
	KindNodeClass  = "EC2NodeClass"
	KindNodeClaim  = "NodeClaim"
	FieldManager   = "nuv"
	DefaultAMI     = "al2023@latest"
	DiscoveryTag   = "karpenter.sh/discovery"
	LabelCluster   = "nuv.dev/cluster"
	LabelNodeGroup = "nuv.dev/nodegroup"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	managedByValue = "nuv"
)

// crdNames are the CRDs Install applies, in order: the node pool, its claims, the AWS node class.
var crdNames = []string{"nodepools.karpenter.sh", "nodeclaims.karpenter.sh", "ec2nodeclasses.karpenter.k8s.aws"}

// CRDs returns copies of Karpenter's NodePool, NodeClaim and EC2NodeClass CRDs as the Karpenter AWS
// provider module ships them (the ones its Helm chart installs), in that order. NodeOverlay, an alpha
// API nuv does not map, is left out.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range awsapis.CRDs {
		if c != nil {
			byName[c.Name] = c
		}
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(crdNames))
	for _, n := range crdNames {
		c, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("karpenter: the Karpenter module %s ships no CRD %s", ModuleVersion, n)
		}
		out = append(out, c.DeepCopy())
	}
	return out, nil
}

package eks

import (
	"context"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// KarpenterCluster is what the Karpenter mapping needs to know of an EKS cluster. Its fields are
// those of package karpenter's Cluster, in the same order, so one converts to the other.
type KarpenterCluster struct {
	// Name is the cluster's name: the objects' nuv.dev/cluster label and, unless the IDs say
	// otherwise, the karpenter.sh/discovery tag that selects subnets and security groups (nuv puts
	// it on the private subnets and the cluster's security group).
	Name string
	// NodeRole is the nodes' IAM role name.
	NodeRole string
	// AMIAlias is the EC2NodeClass AMI alias (default: the mapping's).
	AMIAlias string
	// Tags are the spec's tags, put on what Karpenter launches.
	Tags map[string]string
	// SubnetIDs and SecurityGroupIDs select by id (an existing VPC, whose subnets nuv does not tag).
	SubnetIDs, SecurityGroupIDs []string
	// SubnetTags and SecurityGroupTags select by tags (default: the discovery tag).
	SubnetTags, SecurityGroupTags map[string]string
}

// Karpenter maps a `manager: karpenter` node group to Karpenter objects (a NodePool and an
// EC2NodeClass) and installs or removes them on a cluster, the CRDs first. Package karpenter
// implements it (see KarpenterPackage); the provider only calls it, so the mapping lives in one
// place.
type Karpenter interface {
	// Validate checks the spec's karpenter groups, with field paths.
	Validate(c *spec.Cluster) []spec.FieldError
	// Objects are the group's objects.
	Objects(c KarpenterCluster, g spec.NodeGroup) ([]*unstructured.Unstructured, error)
	// Named are the objects of a group the spec no longer lists, enough to delete them.
	Named(cluster, group string) []*unstructured.Unstructured
	// Install puts Karpenter's CRDs on the cluster.
	Install(ctx context.Context, cfg *rest.Config) error
	Apply(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error
	Delete(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error
}

type objectsFunc = func(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error

// KarpenterPackage makes a Karpenter of package karpenter's functions, C being its Cluster type:
//
//	p.Karpenter = eks.KarpenterPackage(karpenter.Validate, karpenter.Objects, karpenter.Named,
//		karpenter.Install, karpenter.Apply, karpenter.Delete)
func KarpenterPackage[C ~struct {
	Name, NodeRole, AMIAlias      string
	Tags                          map[string]string
	SubnetIDs, SecurityGroupIDs   []string
	SubnetTags, SecurityGroupTags map[string]string
}](validate func(*spec.Cluster) []spec.FieldError, objects func(C, spec.NodeGroup) ([]*unstructured.Unstructured, error),
	named func(cluster, group string) []*unstructured.Unstructured, install func(context.Context, *rest.Config) error,
	apply, del objectsFunc) Karpenter {
	return karpenterFuncs[C]{validate, objects, named, install, apply, del}
}

type karpenterFuncs[C ~struct {
	Name, NodeRole, AMIAlias      string
	Tags                          map[string]string
	SubnetIDs, SecurityGroupIDs   []string
	SubnetTags, SecurityGroupTags map[string]string
}] struct {
	validate   func(*spec.Cluster) []spec.FieldError
	objects    func(C, spec.NodeGroup) ([]*unstructured.Unstructured, error)
	named      func(cluster, group string) []*unstructured.Unstructured
	install    func(context.Context, *rest.Config) error
	apply, del objectsFunc
}

func (k karpenterFuncs[C]) Validate(c *spec.Cluster) []spec.FieldError { return k.validate(c) }
func (k karpenterFuncs[C]) Objects(c KarpenterCluster, g spec.NodeGroup) ([]*unstructured.Unstructured, error) {
	return k.objects(C(c), g)
}
func (k karpenterFuncs[C]) Named(cluster, group string) []*unstructured.Unstructured {
	return k.named(cluster, group)
}
func (k karpenterFuncs[C]) Install(ctx context.Context, cfg *rest.Config) error {
	return k.install(ctx, cfg)
}
func (k karpenterFuncs[C]) Apply(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	return k.apply(ctx, cfg, objs)
}
func (k karpenterFuncs[C]) Delete(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	return k.del(ctx, cfg, objs)
}

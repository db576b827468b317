package eks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
	"github.com/nuv-dev/nuv/internal/karpenter"
)

// Node groups with `manager: karpenter` are one karpenter/GROUP resource each: a NodePool and an
// EC2NodeClass that package karpenter maps, installs (with Karpenter's CRDs), observes and deletes;
// this file only connects it to the provider's plan, so the mapping lives in one place.

// karpenterObserveTimeout bounds how long Observe waits for the cluster's API server.
const karpenterObserveTimeout = 30 * time.Second

// karpenterCluster is what the Karpenter mapping knows of the cluster: the nodes' role, the spec's
// tags and, in an existing VPC (whose subnets nuv does not tag), the subnets and security group
// by id.
func karpenterCluster(c *spec.Cluster, sec Section, clusterSG string) karpenter.Cluster {
	k := karpenter.Cluster{Name: c.Metadata.Name, NodeRole: nodeRoleName(c.Metadata.Name), Tags: map[string]string(c.Spec.Tags)}
	if sec.VPCID != "" {
		k.SubnetIDs = sec.SubnetIDs
		if clusterSG != "" {
			k.SecurityGroupIDs = []string{clusterSG}
		}
	}
	return k
}

// groupNamed returns the spec's node group called name.
func groupNamed(c *spec.Cluster, name string) (spec.NodeGroup, error) {
	for _, g := range c.Spec.NodeGroups {
		if g.Name == name {
			return g, nil
		}
	}
	return spec.NodeGroup{}, fmt.Errorf("the spec has no node group %q", name)
}

// karpenterDeps are what a karpenter/GROUP resource needs first: the cluster and the nodes' role.
func karpenterDeps(clusterName string) []string {
	return []string{awsnet.Key(kindCluster, clusterName), awsnet.Key(kindRole, nodeRoleName(clusterName))}
}

// karpenterDesired is the plan resource of Karpenter group g: the fields of the objects it maps
// to (karpenter.Fields: requirements, limits, replicas, labels, taints, the node class), compared
// with the objects the cluster has. In an existing VPC the security group is selected by the
// cluster's own security group id, known only once the cluster exists, so that selector is left
// out of the comparison.
func karpenterDesired(c *spec.Cluster, sec Section, g spec.NodeGroup) (cluster.Resource, error) {
	objs, err := karpenter.Objects(karpenterCluster(c, sec, ""), g)
	if err != nil {
		return cluster.Resource{}, fmt.Errorf("%s: %w", awsnet.Key(kindKarpenter, g.Name), err)
	}
	f := karpenter.Fields(objs)
	if sec.VPCID != "" {
		delete(f, "nodeclass.securityGroupTerms")
	}
	return cluster.Resource{Kind: kindKarpenter, Name: g.Name, Fields: f, Replace: slices.Clone(karpenter.ReplaceFields),
		DependsOn: karpenterDeps(c.Metadata.Name)}, nil
}

// observeKarpenter adds the cluster's Karpenter groups as the cluster's API server has them
// (karpenter.Observe): one karpenter/GROUP per name among the NodePools and EC2NodeClasses
// labelled as this cluster's, so a hand edit or deletion shows in the plan (a group of the spec
// whose NodePool is gone is absent: the plan creates it again); a name also taken by objects that
// are not this cluster's is Foreign. When the API server cannot be asked (no
// kubeconfig of this cluster, or it does not answer) the state record's groups stand in, with a
// warning.
func (p *Provider) observeKarpenter(ctx context.Context, o *awsnet.Observation, c *spec.Cluster, server string, recorded []cluster.Resource) error {
	name := o.Name
	fromRecord := func(why string) {
		var groups []string
		for _, r := range recorded {
			if r.Kind == kindKarpenter {
				r.DependsOn = karpenterDeps(name)
				r.Foreign = false
				o.Add(r)
				groups = append(groups, r.Name)
			}
		}
		if len(groups) > 0 {
			p.log().Warnf("eks: cluster %s: the Karpenter objects of %v were not read from the cluster (%s); the plan uses the state record", name, groups, why)
		}
	}
	if !p.kubeconfigMatches(name, server) {
		fromRecord("clusters/" + name + ".kubeconfig is missing or is not this cluster's")
		return nil
	}
	cfg, err := p.restConfig(name)
	if err != nil {
		fromRecord(err.Error())
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, karpenterObserveTimeout)
	defer cancel()
	obs, err := karpenter.Observe(cctx, cfg, name)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		fromRecord(err.Error())
		return nil
	}
	names := obs.Groups()
	for _, f := range obs.Foreign {
		if !slices.Contains(names, f.GetName()) {
			names = append(names, f.GetName())
		}
	}
	slices.Sort(names)
	for _, g := range names {
		r := cluster.Resource{Kind: kindKarpenter, Name: g, DependsOn: karpenterDeps(name)}
		objs := obs.Group(g)
		switch {
		case len(obs.ForeignNamed(g)) > 0:
			r.Foreign = true
		case !hasKind(objs, karpenter.KindNodePool) && wantsKarpenter(c, g):
			// The NodePool is what the group is: without it the group is made again (the
			// plan shows a create; applying it updates the EC2NodeClass that is left).
			continue
		default:
			r.ID = name + "/" + g
			r.Fields = karpenter.Fields(objs)
		}
		o.Add(r)
	}
	return nil
}

// hasKind reports whether objs has an object of kind.
func hasKind(objs []*unstructured.Unstructured, kind string) bool {
	return slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == kind })
}

// wantsKarpenter reports whether the spec has a Karpenter group called name.
func wantsKarpenter(c *spec.Cluster, name string) bool {
	g, err := groupNamed(c, name)
	return err == nil && g.Manager == "karpenter"
}

// karpenter installs Karpenter's CRDs and applies group's objects; a replace (a pool that turns
// static or dynamic, which Karpenter refuses in place) deletes the old objects first.
func (x *exec) karpenter(ctx context.Context, ch cluster.Change) error {
	group := x.RName
	g, err := groupNamed(x.C, group)
	if err != nil {
		return fmt.Errorf("%s: %w", ch.Key, err)
	}
	out, err := x.p.waitCluster(ctx, x.s, x.Name, true)
	if err != nil {
		return err
	}
	sg := ""
	if vc := out.Cluster.ResourcesVpcConfig; vc != nil {
		sg = aws.ToString(vc.ClusterSecurityGroupId)
	}
	objs, err := karpenter.Objects(karpenterCluster(x.C, x.sec, sg), g)
	if err != nil {
		return fmt.Errorf("%s: %w", ch.Key, err)
	}
	cfg, err := x.p.restConfig(x.Name)
	if err != nil {
		return err
	}
	if err := karpenter.Install(ctx, cfg); err != nil {
		return fmt.Errorf("%s: install Karpenter's CRDs: %w", ch.Key, err)
	}
	if ch.Action == cluster.Replace {
		if err := karpenter.Delete(ctx, cfg, karpenter.Named(x.Name, group)); err != nil {
			return fmt.Errorf("%s: delete the old objects: %w", ch.Key, err)
		}
	}
	if err := karpenter.Apply(ctx, cfg, objs); err != nil {
		return fmt.Errorf("%s: %w", ch.Key, err)
	}
	x.Res.ID = x.Name + "/" + group
	return nil
}

// deleteKarpenter removes the objects of a group (one the spec no longer lists, or of a cluster
// being deleted) by name; without a kubeconfig the cluster, and its objects, went first.
func (x *exec) deleteKarpenter(ctx context.Context, _ cluster.Change) error {
	group := x.RName
	cfg, err := x.p.restConfig(x.Name)
	if err != nil {
		return nil
	}
	return karpenter.Delete(ctx, cfg, karpenter.Named(x.Name, group))
}

// karpenter writes the objects of every Karpenter group of the plan, at the first karpenter/GROUP
// resource, as kubernetes_manifest resources (karpenter.Terraform, under one note on the CRDs)
// that depend on the cluster and the nodes' role; the other karpenter/GROUP resources are then
// written already. In an existing VPC the module also tags the cluster's security group with the
// discovery tag the node classes select security groups by.
func (w *tfWriter) karpenter(r cluster.Resource) error {
	if w.karpenterDone {
		return nil
	}
	w.karpenterDone = true
	var objs []*unstructured.Unstructured
	for _, rr := range w.desired {
		if rr.Kind != kindKarpenter {
			continue
		}
		g, err := groupNamed(w.C, rr.Name)
		if err != nil {
			return fmt.Errorf("terraform: %s: %w", rr.Key(), err)
		}
		o, err := karpenter.Objects(karpenterCluster(w.C, w.sec, ""), g)
		if err != nil {
			return fmt.Errorf("terraform: %s: %w", rr.Key(), err)
		}
		objs = append(objs, o...)
	}
	var deps []hclwrite.Tokens
	for _, k := range r.DependsOn {
		a, ok := w.Addr[k]
		if !ok {
			return fmt.Errorf("terraform: %s depends on %s, which comes later or has no Terraform form", r.Key(), k)
		}
		typ, name, _ := strings.Cut(a, ".")
		deps = append(deps, tfgen.Ref(typ, name))
	}
	if w.sec.VPCID != "" {
		// In an existing VPC nuv makes no security group for the discovery tag to mark: the
		// module tags the one EKS makes for the cluster, which the node classes then select.
		name := w.C.Metadata.Name
		label := tfgen.Name("karpenter_discovery_" + name)
		w.Body.AppendNewline()
		b := w.Body.AppendNewBlock("resource", []string{"aws_ec2_tag", label}).Body()
		b.SetAttributeRaw("resource_id", tfgen.Ident("aws_eks_cluster."+tfgen.Name(name)+".vpc_config[0].cluster_security_group_id"))
		b.SetAttributeValue("key", cty.StringVal(karpenter.DiscoveryTag))
		b.SetAttributeValue("value", cty.StringVal(name))
		deps = append(deps, tfgen.Ref("aws_ec2_tag", label))
	}
	w.Body.AppendNewline()
	if err := karpenter.Terraform(w.Body, objs, deps...); err != nil {
		return fmt.Errorf("terraform: %w", err)
	}
	return nil
}

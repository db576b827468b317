package eks

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/zclconf/go-cty/cty"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
)

// The EKS cluster (the control plane) and its kubeconfig. Each kind's create and update, delete, Terraform form and observation.

func loggingOf(types string) *ekstypes.Logging {
	var on, off []ekstypes.LogType
	enabled := strings.Split(types, ",")
	for _, t := range LogTypes {
		if slices.Contains(enabled, t) {
			on = append(on, ekstypes.LogType(t))
		} else {
			off = append(off, ekstypes.LogType(t))
		}
	}
	l := &ekstypes.Logging{}
	if len(on) > 0 {
		l.ClusterLogging = append(l.ClusterLogging, ekstypes.LogSetup{Types: on, Enabled: aws.Bool(true)})
	}
	if len(off) > 0 {
		l.ClusterLogging = append(l.ClusterLogging, ekstypes.LogSetup{Types: off, Enabled: aws.Bool(false)})
	}
	return l
}

// subnetIDs are the cluster's subnets: the spec's existing ones, else every subnet nuv made.
func (x *exec) subnetIDs(private bool) ([]string, error) {
	if x.sec.VPCID != "" {
		return x.sec.SubnetIDs, nil
	}
	var out []string
	for _, s := range x.r.subnets {
		if private && s.Public {
			continue
		}
		id, err := x.ID(awsnet.Key(awsnet.KindSubnet, s.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

// cluster creates the EKS cluster, or updates what EKS updates in place: the version (one minor
// at a time), the endpoint access, the logging and the tags.
func (x *exec) cluster(ctx context.Context, ch cluster.Change) error {
	f := x.Res.Fields
	if x.Res.ID == "" {
		return x.createCluster(ctx)
	}
	if _, err := x.p.waitCluster(ctx, x.s, x.Name, true); err != nil {
		return err
	}
	old := map[string]string{}
	if ch.Actual != nil {
		old = ch.Actual.Fields
	}
	// The control plane goes up one minor version at a time, as EKS requires.
	if old["version"] != f["version"] {
		for _, v := range upgradePath(old["version"], f["version"]) {
			out, err := x.s.eks.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String(x.Name), Version: aws.String(v)})
			if err != nil {
				return x.Fail("eks:UpdateClusterVersion", x.Res.Key()+" (to "+v+")", err)
			}
			if err := x.p.waitUpdate(ctx, x.s, x.Res.Key()+" upgrade to "+v, x.Name, aws.ToString(out.Update.Id), "", ""); err != nil {
				return err
			}
		}
	}
	if old["endpointPublic"] != f["endpointPublic"] || old["endpointPrivate"] != f["endpointPrivate"] || old["publicCIDRs"] != f["publicCIDRs"] {
		out, err := x.s.eks.UpdateClusterConfig(ctx, &eks.UpdateClusterConfigInput{Name: aws.String(x.Name), ResourcesVpcConfig: &ekstypes.VpcConfigRequest{
			EndpointPublicAccess: aws.Bool(kit.ParseBool(f["endpointPublic"])), EndpointPrivateAccess: aws.Bool(kit.ParseBool(f["endpointPrivate"])),
			PublicAccessCidrs: strings.Split(f["publicCIDRs"], ",")}})
		if err != nil {
			return x.Fail("eks:UpdateClusterConfig", x.Res.Key()+" (endpoint access)", err)
		}
		if err := x.p.waitUpdate(ctx, x.s, x.Res.Key()+" endpoint access", x.Name, aws.ToString(out.Update.Id), "", ""); err != nil {
			return err
		}
	}
	if old["logging"] != f["logging"] {
		out, err := x.s.eks.UpdateClusterConfig(ctx, &eks.UpdateClusterConfigInput{Name: aws.String(x.Name), Logging: loggingOf(f["logging"])})
		if err != nil {
			return x.Fail("eks:UpdateClusterConfig", x.Res.Key()+" (logging)", err)
		}
		if err := x.p.waitUpdate(ctx, x.s, x.Res.Key()+" logging", x.Name, aws.ToString(out.Update.Id), "", ""); err != nil {
			return err
		}
	}
	if old["tags"] != f["tags"] {
		return x.retagCluster(ctx, old["tags"])
	}
	return nil
}

// createCluster creates the EKS cluster, retrying while IAM has not yet made its new role
// assumable by EKS, and waits for it to be active.
func (x *exec) createCluster(ctx context.Context) error {
	f := x.Res.Fields
	roleArn, err := x.ID(awsnet.Key(kindRole, clusterRoleName(x.Name)))
	if err != nil {
		return err
	}
	subnets, err := x.subnetIDs(false)
	if err != nil {
		return err
	}
	vc := &ekstypes.VpcConfigRequest{SubnetIds: subnets, EndpointPublicAccess: aws.Bool(kit.ParseBool(f["endpointPublic"])),
		EndpointPrivateAccess: aws.Bool(kit.ParseBool(f["endpointPrivate"])), PublicAccessCidrs: strings.Split(f["publicCIDRs"], ",")}
	if x.sec.VPCID == "" {
		sg, err := x.ID(awsnet.Key(awsnet.KindSG, x.Name))
		if err != nil {
			return err
		}
		vc.SecurityGroupIds = []string{sg}
	}
	in := &eks.CreateClusterInput{Name: aws.String(x.Name), Version: aws.String(f["version"]), RoleArn: aws.String(roleArn),
		ResourcesVpcConfig: vc, Logging: loggingOf(f["logging"]), Tags: x.Tags()}
	if cidr := f["serviceCIDR"]; cidr != "" {
		in.KubernetesNetworkConfig = &ekstypes.KubernetesNetworkConfigRequest{ServiceIpv4Cidr: aws.String(cidr)}
	}
	var out *eks.CreateClusterOutput
	// A role made a moment ago may not be assumable by EKS yet (IAM is eventually consistent).
	err = x.s.RetryWhile(ctx, 2*time.Minute, func() error {
		var err error
		out, err = x.s.eks.CreateCluster(ctx, in)
		return err
	}, func(err error) bool {
		return awsnet.APICode(err) == "InvalidParameterException" && strings.Contains(awsnet.APIMessage(err), "role")
	})
	if err != nil {
		return x.Fail("eks:CreateCluster", x.Res.Key(), err)
	}
	if err := x.Made(aws.ToString(out.Cluster.Arn)); err != nil {
		return err
	}
	_, err = x.p.waitCluster(ctx, x.s, x.Name, true)
	return err
}

// retagCluster sets the cluster's tags to the spec's, removing those of oldTags it no longer has.
func (x *exec) retagCluster(ctx context.Context, oldTags string) error {
	want := x.Tags()
	var gone []string
	for _, kv := range strings.Split(oldTags, ",") {
		if k, _, _ := strings.Cut(kv, "="); k != "" {
			if _, ok := want[k]; !ok {
				gone = append(gone, k)
			}
		}
	}
	if len(gone) > 0 {
		if _, err := x.s.eks.UntagResource(ctx, &eks.UntagResourceInput{ResourceArn: aws.String(x.Res.ID), TagKeys: gone}); err != nil {
			return x.Fail("eks:UntagResource", x.Res.Key(), err)
		}
	}
	if _, err := x.s.eks.TagResource(ctx, &eks.TagResourceInput{ResourceArn: aws.String(x.Res.ID), Tags: want}); err != nil {
		return x.Fail("eks:TagResource", x.Res.Key(), err)
	}
	return nil
}

// upgradePath lists the minor versions from (exclusive) to to (inclusive): 1.34 -> 1.36 is 1.35, 1.36.
func upgradePath(from, to string) []string {
	fm, tm := minor(from), minor(to)
	if fm < 0 || tm < 0 || tm <= fm {
		return []string{to}
	}
	major, _, _ := strings.Cut(to, ".")
	var out []string
	for m := fm + 1; m <= tm; m++ {
		out = append(out, major+"."+strconv.Itoa(m))
	}
	return out
}

func minor(v string) int {
	_, m, ok := strings.Cut(v, ".")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(m)
	if err != nil {
		return -1
	}
	return n
}

func (x *exec) kubeconfig(ctx context.Context, _ cluster.Change) error {
	out, err := x.p.waitCluster(ctx, x.s, x.Name, true)
	if err != nil {
		return err
	}
	cl := out.Cluster
	if cl.CertificateAuthority == nil || aws.ToString(cl.Endpoint) == "" {
		return fmt.Errorf("eks-cluster/%s is ACTIVE without an endpoint or certificate authority", x.Name)
	}
	b, err := x.p.kubeconfig(x.Name, aws.ToString(cl.Endpoint), aws.ToString(cl.CertificateAuthority.Data), x.s.Config.Region, x.s.Endpoint, x.sec.Profile)
	if err != nil {
		return err
	}
	if err := kit.WriteKubeconfig(x.p.KubeconfigPath(x.Name), b); err != nil {
		return err
	}
	x.Res.ID = x.p.KubeconfigPath(x.Name)
	return nil
}

func (x *exec) deleteCluster(ctx context.Context, ch cluster.Change) error {
	k := ch.Key
	_, err := x.s.eks.DeleteCluster(ctx, &eks.DeleteClusterInput{Name: aws.String(x.Name)})
	if awsnet.NotFound(err) && err != nil {
		return nil
	}
	if err != nil && !(awsnet.APICode(err) == "ResourceInUseException" && strings.Contains(awsnet.APIMessage(err), "DELETING")) {
		return x.Fail("eks:DeleteCluster", k, err)
	}
	_, err = x.p.waitCluster(ctx, x.s, x.Name, false)
	return err
}

func (x *exec) deleteKubeconfig(ctx context.Context, ch cluster.Change) error {
	if err := os.Remove(x.p.KubeconfigPath(x.Name)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

func (w *tfWriter) cluster(r cluster.Resource) error {
	f := r.Fields
	name := w.C.Metadata.Name
	b := w.Block("aws_eks_cluster", r.Key())
	b.SetAttributeValue("name", cty.StringVal(name))
	b.SetAttributeValue("version", cty.StringVal(f["version"]))
	roleKey := awsnet.Key(kindRole, clusterRoleName(name))
	role, err := w.Ref(roleKey, "arn")
	if err != nil {
		return err
	}
	b.SetAttributeRaw("role_arn", role)
	vc := b.AppendNewBlock("vpc_config", nil).Body()
	if err := w.subnetsAttr(vc, false); err != nil {
		return err
	}
	if w.sec.VPCID == "" {
		sg, err := w.Refs("id", awsnet.Key(awsnet.KindSG, name))
		if err != nil {
			return err
		}
		vc.SetAttributeRaw("security_group_ids", sg)
	}
	vc.SetAttributeValue("endpoint_public_access", cty.BoolVal(f["endpointPublic"] == "true"))
	vc.SetAttributeValue("endpoint_private_access", cty.BoolVal(f["endpointPrivate"] == "true"))
	vc.SetAttributeValue("public_access_cidrs", tfgen.Strings(kit.ParseList(f["publicCIDRs"])...))
	if f["logging"] != "" {
		b.SetAttributeValue("enabled_cluster_log_types", tfgen.Strings(kit.ParseList(f["logging"])...))
	}
	if f["serviceCIDR"] != "" {
		b.AppendNewBlock("kubernetes_network_config", nil).Body().SetAttributeValue("service_ipv4_cidr", cty.StringVal(f["serviceCIDR"]))
	}
	b.SetAttributeRaw("depends_on", rawList(w.policyAttachments[roleKey]))
	return nil
}

func (s *session) observeCluster(ctx context.Context, o *awsnet.Observation, c *spec.Cluster, sec Section) (*ekstypes.Cluster, bool, error) {
	name := o.Name
	out, err := s.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)})
	if awsnet.APICode(err) == "ResourceNotFoundException" {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("eks:DescribeCluster %s: %s", name, awsnet.APIMessage(err))
	}
	cl := out.Cluster
	if cl.Tags[awsnet.TagCluster] != name {
		o.Out = append(o.Out, cluster.Resource{Kind: kindCluster, Name: name, ID: aws.ToString(cl.Arn), Foreign: true})
		return cl, true, nil
	}
	f := map[string]string{"version": aws.ToString(cl.Version)}
	var deps []string
	if vc := cl.ResourcesVpcConfig; vc != nil {
		f["endpointPublic"] = kit.Bool(vc.EndpointPublicAccess)
		f["endpointPrivate"] = kit.Bool(vc.EndpointPrivateAccess)
		cidrs := slices.Clone(vc.PublicAccessCidrs)
		slices.Sort(cidrs)
		f["publicCIDRs"] = strings.Join(cidrs, ",")
		ids := slices.Clone(vc.SubnetIds)
		if sec.VPCID != "" {
			f["subnets"] = strings.Join(ids, ",")
		}
		for _, id := range ids {
			if k := o.Ref(id); k != id {
				deps = append(deps, k)
			}
		}
		for _, id := range vc.SecurityGroupIds {
			if k := o.Ref(id); k != id {
				deps = append(deps, k)
			}
		}
	}
	var logs []string
	if cl.Logging != nil {
		for _, ls := range cl.Logging.ClusterLogging {
			if aws.ToBool(ls.Enabled) {
				for _, t := range ls.Types {
					logs = append(logs, string(t))
				}
			}
		}
	}
	slices.Sort(logs)
	f["logging"] = strings.Join(logs, ",")
	if c.Spec.Networking.ServiceCIDR != "" && cl.KubernetesNetworkConfig != nil {
		f["serviceCIDR"] = aws.ToString(cl.KubernetesNetworkConfig.ServiceIpv4Cidr)
	} else {
		f["serviceCIDR"] = ""
	}
	f["tags"] = kit.Map(kit.Unmarked(cl.Tags))
	deps = append(deps, awsnet.Key(kindRole, clusterRoleName(name)))
	o.Add(cluster.Resource{Kind: kindCluster, Name: name, ID: aws.ToString(cl.Arn), Fields: f, DependsOn: deps})
	return cl, false, nil
}

// kubeconfigOf reports whether clusters/NAME.kubeconfig is one nuv wrote for EKS cluster name.
func (p *Provider) kubeconfigOf(name string) bool {
	b, err := os.ReadFile(p.KubeconfigPath(name))
	return err == nil && strings.Contains(string(b), "-eks-token") && strings.Contains(string(b), name)
}

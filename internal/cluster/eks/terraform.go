package eks

import (
	"slices"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
)

// Terraform writes the resources Desired returned as a Terraform module (main.tf, variables.tf,
// outputs.tf) for the hashicorp/aws provider: the same VPC, subnets, gateways, route tables,
// security group, roles and policy attachments, EKS cluster, node groups and add-ons an apply
// makes, and the Karpenter objects as kubernetes_manifest resources. Tags come from the region
// and tags variables (the provider's default_tags), so every resource carries nuv.dev/cluster.
func (p *Provider) Terraform(c *spec.Cluster, desired []cluster.Resource) (map[string][]byte, error) {
	sec := sectionOf(c)
	m := tfgen.NewModule()
	tags := kit.Tags(c.Spec.Tags, awsnet.TagCluster, c.Metadata.Name)
	region := c.Spec.Region
	if region == "" {
		if r, ok := p.cachedRegion(c); ok {
			region = r
		}
	}
	m.Variables(region, tags)
	w := &tfWriter{TF: awsnet.NewTF(c, m.File("main.tf")), p: p, sec: sec, desired: desired}
	w.header()
	for _, r := range desired {
		w.ByKey[r.Key()] = r
	}
	for _, r := range desired {
		if err := kinds.Get().Terraform(w, r); err != nil {
			return nil, err
		}
	}
	w.outputs(m.File("outputs.tf"))
	return m.Bytes(), nil
}

func (p *Provider) cachedRegion(c *spec.Cluster) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.resolved[awsnet.SpecKey(c, "eks")]
	if !ok {
		return "", false
	}
	return r.region, true
}

// tfWriter writes a cluster's Terraform module: the network's blocks (awsnet.TF) and the
// provider's.
type tfWriter struct {
	*awsnet.TF
	p   *Provider
	sec Section
	// policyAttachments are the attachment addresses of each role, for depends_on.
	policyAttachments map[string][]string
	nodeGroups        []string
	// desired are all the plan's resources; karpenterDone is set once the Karpenter objects are
	// written (all groups at once).
	desired       []cluster.Resource
	karpenterDone bool
}

func (w *tfWriter) header() {
	tf := w.Body.AppendNewBlock("terraform", nil).Body()
	rp := tf.AppendNewBlock("required_providers", nil).Body()
	rp.SetAttributeValue("aws", cty.ObjectVal(map[string]cty.Value{"source": cty.StringVal("hashicorp/aws"), "version": cty.StringVal(">= 5.40")}))
	if w.hasKarpenter() {
		rp.SetAttributeValue("kubernetes", cty.ObjectVal(map[string]cty.Value{"source": cty.StringVal("hashicorp/kubernetes"), "version": cty.StringVal(">= 2.25")}))
	}
	w.Body.AppendNewline()
	pb := w.Body.AppendNewBlock("provider", []string{"aws"}).Body()
	pb.SetAttributeRaw("region", tfgen.Ref("var", "region"))
	pb.AppendNewBlock("default_tags", nil).Body().SetAttributeRaw("tags", tfgen.Ref("var", "tags"))
	if w.hasKarpenter() {
		// The Karpenter objects go to the cluster itself, authenticated as nuv's kubeconfigs are.
		name := w.C.Metadata.Name
		cl := "aws_eks_cluster." + tfgen.Name(name)
		w.Body.AppendNewline()
		kb := w.Body.AppendNewBlock("provider", []string{"kubernetes"}).Body()
		kb.SetAttributeRaw("host", tfgen.Ident(cl+".endpoint"))
		kb.SetAttributeRaw("cluster_ca_certificate", tfgen.Ident("base64decode("+cl+".certificate_authority[0].data)"))
		eb := kb.AppendNewBlock("exec", nil).Body()
		eb.SetAttributeValue("api_version", cty.StringVal("client.authentication.k8s.io/v1"))
		eb.SetAttributeValue("command", cty.StringVal("nuv"))
		eb.SetAttributeValue("args", tfgen.Strings("-eks-token", "--cluster", name))
	}
}

func (w *tfWriter) hasKarpenter() bool {
	for _, g := range w.C.Spec.NodeGroups {
		if g.Manager == "karpenter" {
			return true
		}
	}
	return false
}

// subnetsAttr sets subnet_ids: the existing subnets of the spec, else the private (nodes) or all
// (cluster) subnets nuv makes.
func (w *tfWriter) subnetsAttr(b *hclwrite.Body, private bool) error {
	if w.sec.VPCID != "" {
		b.SetAttributeValue("subnet_ids", tfgen.Strings(w.sec.SubnetIDs...))
		return nil
	}
	var keys []string
	for _, r := range w.ByKey {
		if r.Kind == awsnet.KindSubnet && (!private || r.Fields["public"] != "true") {
			keys = append(keys, r.Key())
		}
	}
	slices.Sort(keys)
	t, err := w.Refs("id", keys...)
	if err != nil {
		return err
	}
	b.SetAttributeRaw("subnet_ids", t)
	return nil
}

func (w *tfWriter) outputs(b *hclwrite.Body) {
	name := w.C.Metadata.Name
	for i, o := range []struct{ name, attr, desc string }{
		{"cluster_name", "name", "The EKS cluster's name (nuv -eks-token --cluster takes it)."},
		{"endpoint", "endpoint", "The cluster's API server endpoint."},
		{"certificate_authority", "certificate_authority[0].data", "The cluster's CA, base64 (a kubeconfig's certificate-authority-data)."},
	} {
		if i > 0 {
			b.AppendNewline()
		}
		ob := b.AppendNewBlock("output", []string{o.name}).Body()
		ob.SetAttributeValue("description", cty.StringVal(o.desc))
		ob.SetAttributeRaw("value", tfgen.Ident("aws_eks_cluster."+tfgen.Name(name)+"."+o.attr))
	}
}

func rawList(addrs []string) hclwrite.Tokens {
	var items []hclwrite.Tokens
	for _, a := range addrs {
		items = append(items, tfgen.Ident(a))
	}
	return tfgen.List(items...)
}

// jsonencode is the trust policy letting service assume a role, as Terraform's jsonencode().
func jsonencode(service string) hclwrite.Tokens {
	stmt := cty.ObjectVal(map[string]cty.Value{
		"Effect":    cty.StringVal("Allow"),
		"Principal": cty.ObjectVal(map[string]cty.Value{"Service": cty.StringVal(service)}),
		"Action":    cty.StringVal("sts:AssumeRole"),
	})
	doc := cty.ObjectVal(map[string]cty.Value{"Version": cty.StringVal("2012-10-17"), "Statement": cty.TupleVal([]cty.Value{stmt})})
	t := tfgen.Ident("jsonencode(")
	t = append(t, hclwrite.TokensForValue(doc)...)
	return append(t, tfgen.Ident(")")...)
}

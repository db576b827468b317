package eks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/nuv-dev/nuv/internal/cluster"
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
	if p.selfManaged {
		return p.machinesTerraform(c, desired)
	}
	sec := sectionOf(c)
	m := tfgen.NewModule()
	tags := kit.Tags(c.Spec.Tags, TagCluster, c.Metadata.Name)
	region := c.Spec.Region
	if region == "" {
		if r, ok := p.cachedRegion(c); ok {
			region = r
		}
	}
	m.Variables(region, tags)
	w := &tfWriter{p: p, c: c, sec: sec, body: m.File("main.tf"), addr: map[string]string{}, byKey: map[string]cluster.Resource{}, desired: desired}
	w.header()
	for _, r := range desired {
		w.byKey[r.Key()] = r
	}
	for _, r := range desired {
		if err := kinds.Terraform(w, r); err != nil {
			return nil, err
		}
	}
	w.outputs(m.File("outputs.tf"))
	return m.Bytes(), nil
}

func (p *Provider) cachedRegion(c *spec.Cluster) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.resolved[cacheKey(c)]
	if !ok {
		return "", false
	}
	return r.region, true
}

type tfWriter struct {
	p     *Provider
	c     *spec.Cluster
	sec   Section
	body  *hclwrite.Body
	addr  map[string]string // resource key -> terraform address (type.name)
	byKey map[string]cluster.Resource
	// policyAttachments are the attachment addresses of each role, for depends_on.
	policyAttachments map[string][]string
	nodeGroups        []string
	// desired are all the plan's resources; karpenterDone is set once the Karpenter objects are
	// written (all groups at once).
	desired       []cluster.Resource
	karpenterDone bool
}

func (w *tfWriter) header() {
	tf := w.body.AppendNewBlock("terraform", nil).Body()
	rp := tf.AppendNewBlock("required_providers", nil).Body()
	rp.SetAttributeValue("aws", cty.ObjectVal(map[string]cty.Value{"source": cty.StringVal("hashicorp/aws"), "version": cty.StringVal(">= 5.40")}))
	if w.hasKarpenter() {
		rp.SetAttributeValue("kubernetes", cty.ObjectVal(map[string]cty.Value{"source": cty.StringVal("hashicorp/kubernetes"), "version": cty.StringVal(">= 2.25")}))
	}
	w.body.AppendNewline()
	pb := w.body.AppendNewBlock("provider", []string{"aws"}).Body()
	pb.SetAttributeRaw("region", tfgen.Ref("var", "region"))
	pb.AppendNewBlock("default_tags", nil).Body().SetAttributeRaw("tags", tfgen.Ref("var", "tags"))
	if w.hasKarpenter() {
		// The Karpenter objects go to the cluster itself, authenticated as nuv's kubeconfigs are.
		name := w.c.Metadata.Name
		cl := "aws_eks_cluster." + tfgen.Name(name)
		w.body.AppendNewline()
		kb := w.body.AppendNewBlock("provider", []string{"kubernetes"}).Body()
		kb.SetAttributeRaw("host", tfgen.Ident(cl+".endpoint"))
		kb.SetAttributeRaw("cluster_ca_certificate", tfgen.Ident("base64decode("+cl+".certificate_authority[0].data)"))
		eb := kb.AppendNewBlock("exec", nil).Body()
		eb.SetAttributeValue("api_version", cty.StringVal("client.authentication.k8s.io/v1"))
		eb.SetAttributeValue("command", cty.StringVal("nuv"))
		eb.SetAttributeValue("args", tfgen.Strings("-eks-token", "--cluster", name))
	}
}

func (w *tfWriter) hasKarpenter() bool {
	for _, g := range w.c.Spec.NodeGroups {
		if g.Manager == "karpenter" {
			return true
		}
	}
	return false
}

func (w *tfWriter) block(typ, key string) *hclwrite.Body {
	_, name, _ := strings.Cut(key, "/")
	label := tfgen.Name(name)
	w.body.AppendNewline()
	w.addr[key] = typ + "." + label
	return w.body.AppendNewBlock("resource", []string{typ, label}).Body()
}

// ref is a reference to attr of the block made for resource key.
func (w *tfWriter) ref(key, attr string) (hclwrite.Tokens, error) {
	a, ok := w.addr[key]
	if !ok {
		return nil, fmt.Errorf("terraform: %s refers to %s, which comes later or does not exist", key, key)
	}
	typ, name, _ := strings.Cut(a, ".")
	return tfgen.Ref(typ, name, attr), nil
}

func (w *tfWriter) refs(attr string, keys ...string) (hclwrite.Tokens, error) {
	var items []hclwrite.Tokens
	for _, k := range keys {
		t, err := w.ref(k, attr)
		if err != nil {
			return nil, err
		}
		items = append(items, t)
	}
	return tfgen.List(items...), nil
}

func (w *tfWriter) addrs(keys ...string) hclwrite.Tokens {
	var items []hclwrite.Tokens
	for _, k := range keys {
		if a, ok := w.addr[k]; ok {
			typ, name, _ := strings.Cut(a, ".")
			items = append(items, tfgen.Ref(typ, name))
		}
	}
	return tfgen.List(items...)
}

func (w *tfWriter) nameTags(r cluster.Resource, extra ...string) cty.Value {
	t := map[string]string{"Name": nameTag(w.c.Metadata.Name, r), TagResource: r.Key()}
	for i := 0; i+1 < len(extra); i += 2 {
		t[extra[i]] = extra[i+1]
	}
	return tfgen.StringMap(t)
}

// subnetsAttr sets subnet_ids: the existing subnets of the spec, else the private (nodes) or all
// (cluster) subnets nuv makes.
func (w *tfWriter) subnetsAttr(b *hclwrite.Body, private bool) error {
	if w.sec.VPCID != "" {
		b.SetAttributeValue("subnet_ids", tfgen.Strings(w.sec.SubnetIDs...))
		return nil
	}
	var keys []string
	for _, r := range w.byKey {
		if r.Kind == kindSubnet && (!private || r.Fields["public"] != "true") {
			keys = append(keys, r.Key())
		}
	}
	slices.Sort(keys)
	t, err := w.refs("id", keys...)
	if err != nil {
		return err
	}
	b.SetAttributeRaw("subnet_ids", t)
	return nil
}

func (w *tfWriter) outputs(b *hclwrite.Body) {
	name := w.c.Metadata.Name
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

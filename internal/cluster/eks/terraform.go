package eks

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/nuv-dev/nuv/internal/cluster"
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
	tags := map[string]string(maps.Clone(c.Spec.Tags))
	if tags == nil {
		tags = map[string]string{}
	}
	tags[TagCluster] = c.Metadata.Name
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
		if err := w.resource(r); err != nil {
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

func (w *tfWriter) resource(r cluster.Resource) error {
	f := r.Fields
	name := w.c.Metadata.Name
	switch r.Kind {
	case kindVPC:
		b := w.block("aws_vpc", r.Key())
		b.SetAttributeValue("cidr_block", cty.StringVal(f["cidr"]))
		b.SetAttributeValue("enable_dns_support", cty.True)
		b.SetAttributeValue("enable_dns_hostnames", cty.True)
		b.SetAttributeValue("tags", w.nameTags(r))
	case kindSubnet:
		b := w.block("aws_subnet", r.Key())
		vpc, err := w.ref(key(kindVPC, name), "id")
		if err != nil {
			return err
		}
		b.SetAttributeRaw("vpc_id", vpc)
		b.SetAttributeValue("cidr_block", cty.StringVal(f["cidr"]))
		b.SetAttributeValue("availability_zone", cty.StringVal(f["zone"]))
		b.SetAttributeValue("map_public_ip_on_launch", cty.BoolVal(f["public"] == "true"))
		b.SetAttributeValue("tags", w.nameTags(r, subnetTags(name, f["public"] == "true")...))
	case kindIGW:
		b := w.block("aws_internet_gateway", r.Key())
		vpc, err := w.ref(key(kindVPC, name), "id")
		if err != nil {
			return err
		}
		b.SetAttributeRaw("vpc_id", vpc)
		b.SetAttributeValue("tags", w.nameTags(r))
	case kindEIP:
		b := w.block("aws_eip", r.Key())
		b.SetAttributeValue("domain", cty.StringVal("vpc"))
		b.SetAttributeValue("tags", w.nameTags(r))
	case kindNAT:
		b := w.block("aws_nat_gateway", r.Key())
		eip, err := w.ref(f["eip"], "id")
		if err != nil {
			return err
		}
		sub, err := w.ref(f["subnet"], "id")
		if err != nil {
			return err
		}
		b.SetAttributeRaw("allocation_id", eip)
		b.SetAttributeRaw("subnet_id", sub)
		b.SetAttributeValue("tags", w.nameTags(r))
		b.SetAttributeRaw("depends_on", w.addrs(key(kindIGW, name)))
	case kindRouteTable:
		b := w.block("aws_route_table", r.Key())
		vpc, err := w.ref(key(kindVPC, name), "id")
		if err != nil {
			return err
		}
		b.SetAttributeRaw("vpc_id", vpc)
		if d := f["default"]; d != "" {
			rb := b.AppendNewBlock("route", nil).Body()
			rb.SetAttributeValue("cidr_block", cty.StringVal("0.0.0.0/0"))
			target, err := w.ref(d, "id")
			if err != nil {
				return err
			}
			if strings.HasPrefix(d, kindNAT+"/") {
				rb.SetAttributeRaw("nat_gateway_id", target)
			} else {
				rb.SetAttributeRaw("gateway_id", target)
			}
		}
		b.SetAttributeValue("tags", w.nameTags(r))
		rt, _ := w.ref(r.Key(), "id")
		for _, sn := range parseList(f["subnets"]) {
			sk := key(kindSubnet, sn)
			sub, err := w.ref(sk, "id")
			if err != nil {
				return err
			}
			w.body.AppendNewline()
			ab := w.body.AppendNewBlock("resource", []string{"aws_route_table_association", tfgen.Name(sn)}).Body()
			ab.SetAttributeRaw("subnet_id", sub)
			ab.SetAttributeRaw("route_table_id", rt)
		}
	case kindSG:
		b := w.block("aws_security_group", r.Key())
		vpc, err := w.ref(key(kindVPC, name), "id")
		if err != nil {
			return err
		}
		b.SetAttributeValue("name", cty.StringVal("nuv-"+name))
		b.SetAttributeValue("description", cty.StringVal("nuv cluster "+name+": control plane and nodes"))
		b.SetAttributeRaw("vpc_id", vpc)
		in := b.AppendNewBlock("ingress", nil).Body()
		in.SetAttributeValue("description", cty.StringVal("everything between the control plane and the nodes"))
		in.SetAttributeValue("from_port", cty.NumberIntVal(0))
		in.SetAttributeValue("to_port", cty.NumberIntVal(0))
		in.SetAttributeValue("protocol", cty.StringVal("-1"))
		in.SetAttributeValue("self", cty.True)
		eg := b.AppendNewBlock("egress", nil).Body()
		eg.SetAttributeValue("from_port", cty.NumberIntVal(0))
		eg.SetAttributeValue("to_port", cty.NumberIntVal(0))
		eg.SetAttributeValue("protocol", cty.StringVal("-1"))
		eg.SetAttributeValue("cidr_blocks", tfgen.Strings("0.0.0.0/0"))
		b.SetAttributeValue("tags", w.nameTags(r, "karpenter.sh/discovery", name))
	case kindRole:
		b := w.block("aws_iam_role", r.Key())
		b.SetAttributeValue("name", cty.StringVal(r.Name))
		b.SetAttributeRaw("assume_role_policy", jsonencode(f["service"]))
		role, _ := w.ref(r.Key(), "name")
		if w.policyAttachments == nil {
			w.policyAttachments = map[string][]string{}
		}
		for _, pol := range parseList(f["policies"]) {
			label := tfgen.Name(r.Name + "-" + pol)
			w.body.AppendNewline()
			ab := w.body.AppendNewBlock("resource", []string{"aws_iam_role_policy_attachment", label}).Body()
			ab.SetAttributeRaw("role", role)
			ab.SetAttributeValue("policy_arn", cty.StringVal("arn:aws:iam::aws:policy/"+pol))
			w.policyAttachments[r.Key()] = append(w.policyAttachments[r.Key()], "aws_iam_role_policy_attachment."+label)
		}
	case kindCluster:
		b := w.block("aws_eks_cluster", r.Key())
		b.SetAttributeValue("name", cty.StringVal(name))
		b.SetAttributeValue("version", cty.StringVal(f["version"]))
		roleKey := key(kindRole, clusterRoleName(name))
		role, err := w.ref(roleKey, "arn")
		if err != nil {
			return err
		}
		b.SetAttributeRaw("role_arn", role)
		vc := b.AppendNewBlock("vpc_config", nil).Body()
		if err := w.subnetsAttr(vc, false); err != nil {
			return err
		}
		if w.sec.VPCID == "" {
			sg, err := w.refs("id", key(kindSG, name))
			if err != nil {
				return err
			}
			vc.SetAttributeRaw("security_group_ids", sg)
		}
		vc.SetAttributeValue("endpoint_public_access", cty.BoolVal(f["endpointPublic"] == "true"))
		vc.SetAttributeValue("endpoint_private_access", cty.BoolVal(f["endpointPrivate"] == "true"))
		vc.SetAttributeValue("public_access_cidrs", tfgen.Strings(parseList(f["publicCIDRs"])...))
		if f["logging"] != "" {
			b.SetAttributeValue("enabled_cluster_log_types", tfgen.Strings(parseList(f["logging"])...))
		}
		if f["serviceCIDR"] != "" {
			b.AppendNewBlock("kubernetes_network_config", nil).Body().SetAttributeValue("service_ipv4_cidr", cty.StringVal(f["serviceCIDR"]))
		}
		b.SetAttributeRaw("depends_on", rawList(w.policyAttachments[roleKey]))
	case kindKubeconfig:
		// nuv writes the kubeconfig (`nuv cluster apply`); Terraform users get the endpoint and CA
		// as outputs and `aws eks update-kubeconfig` or nuv's exec credential.
	case kindNodeGroup:
		b := w.block("aws_eks_node_group", r.Key())
		cl, err := w.ref(key(kindCluster, name), "name")
		if err != nil {
			return err
		}
		roleKey := key(kindRole, nodeRoleName(name))
		role, err := w.ref(roleKey, "arn")
		if err != nil {
			return err
		}
		b.SetAttributeRaw("cluster_name", cl)
		b.SetAttributeValue("node_group_name", cty.StringVal(r.Name))
		b.SetAttributeRaw("node_role_arn", role)
		if err := w.subnetsAttr(b, true); err != nil {
			return err
		}
		b.SetAttributeValue("version", cty.StringVal(f["version"]))
		b.SetAttributeValue("instance_types", tfgen.Strings(parseList(f["instanceTypes"])...))
		b.SetAttributeValue("capacity_type", cty.StringVal(f["capacity"]))
		b.SetAttributeValue("ami_type", cty.StringVal(f["amiType"]))
		disk, _ := strconv.Atoi(f["diskSize"])
		b.SetAttributeValue("disk_size", cty.NumberIntVal(int64(disk)))
		sc := b.AppendNewBlock("scaling_config", nil).Body()
		for _, k := range []struct{ tf, f string }{{"desired_size", "desired"}, {"max_size", "max"}, {"min_size", "min"}} {
			n, _ := strconv.Atoi(f[k.f])
			sc.SetAttributeValue(k.tf, cty.NumberIntVal(int64(n)))
		}
		if l := labelsOf(f["labels"]); len(l) > 0 {
			b.SetAttributeValue("labels", tfgen.StringMap(l))
		}
		for _, t := range taintsOf(f["taints"]) {
			tb := b.AppendNewBlock("taint", nil).Body()
			tb.SetAttributeValue("key", cty.StringVal(*t.Key))
			if t.Value != nil {
				tb.SetAttributeValue("value", cty.StringVal(*t.Value))
			}
			tb.SetAttributeValue("effect", cty.StringVal(string(t.Effect)))
		}
		deps := slices.Clone(w.policyAttachments[roleKey])
		for _, d := range r.DependsOn {
			if strings.HasPrefix(d, kindRouteTable+"/") {
				deps = append(deps, w.addr[d])
			}
		}
		b.SetAttributeRaw("depends_on", rawList(deps))
		w.nodeGroups = append(w.nodeGroups, w.addr[r.Key()])
	case kindAddon:
		b := w.block("aws_eks_addon", r.Key())
		cl, err := w.ref(key(kindCluster, name), "name")
		if err != nil {
			return err
		}
		b.SetAttributeRaw("cluster_name", cl)
		b.SetAttributeValue("addon_name", cty.StringVal(r.Name))
		b.SetAttributeValue("addon_version", cty.StringVal(f["version"]))
		b.SetAttributeValue("resolve_conflicts_on_create", cty.StringVal("OVERWRITE"))
		b.SetAttributeValue("resolve_conflicts_on_update", cty.StringVal("OVERWRITE"))
		if len(w.nodeGroups) > 0 {
			b.SetAttributeRaw("depends_on", rawList(w.nodeGroups))
		}
	case kindKarpenter:
		return w.karpenter(r)
	default:
		return fmt.Errorf("terraform: no Terraform form for %s", r.Key())
	}
	return nil
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

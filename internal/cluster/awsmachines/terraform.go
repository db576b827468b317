package awsmachines

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	"go.yaml.in/yaml/v3"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
	"github.com/nuv-dev/nuv/internal/lazy"
	"github.com/nuv-dev/nuv/internal/machine/userdata"
)

// machineKinds are the resource kinds of a self-managed cluster with their Terraform forms; the
// network's are awsnet's (its security groups are the machines').
// (Built on first use: nothing at init.)
var machineKinds = lazy.Value[kit.Kinds[*exec, *tfWriter]]{New: func() kit.Kinds[*exec, *tfWriter] {
	byKind := awsnet.NetworkKinds[*exec, *tfWriter]()
	for k, h := range map[string]kit.Kind[*exec, *tfWriter]{
		awsnet.KindSG:    {Apply: (*exec).machineSG, Delete: (*exec).DeleteSecurityGroup, Terraform: (*tfWriter).machineSecurityGroup},
		kindKeyPair:      {Apply: (*exec).keyPair, Delete: (*exec).deleteKeyPair, Terraform: (*tfWriter).keyPair},
		kindInstance:     {Apply: (*exec).instanceChange, Delete: (*exec).deleteInstance, Replace: true, Terraform: (*tfWriter).instance},
		kindLoadBalancer: {Apply: (*exec).loadBalancer, Delete: (*exec).deleteLoadBalancer, Terraform: (*tfWriter).loadBalancer},
		kindTargetGroup:  {Apply: (*exec).targetGroup, Delete: (*exec).deleteTargetGroup, Terraform: (*tfWriter).targetGroup},
		kindListener:     {Apply: (*exec).listener, Delete: (*exec).deleteListener, Terraform: (*tfWriter).listener},
		// The bootstrap runs on the machines over SSH; in Terraform it is one provisioner step after
		// the machines are made (bootstrap), which nuv's own apply carries out. Its steps go with
		// their machines; a join's delete drains the node when the cluster stays.
		kindHAProxy:     {Apply: (*exec).haproxy, Delete: noop, Terraform: (*tfWriter).bootstrap},
		kindEtcdMember:  {Apply: (*exec).etcdMember, Delete: (*exec).removeEtcdMember, Terraform: (*tfWriter).bootstrap},
		kindKubeadmInit: {Apply: (*exec).kubeadmInit, Delete: noop, Terraform: (*tfWriter).bootstrap},
		kindKubeadmJoin: {Apply: (*exec).kubeadmJoin, Delete: (*exec).leaving, Terraform: (*tfWriter).bootstrap},
		kindCNI:         {Apply: (*exec).cni, Delete: noop, Terraform: (*tfWriter).bootstrap},
		kindKubeconfig:  {Apply: (*exec).machinesKubeconfig, Delete: (*exec).deleteKubeconfig},
		// The pod network's steps (podnet.go): in Terraform the check is the
		// instance's source_dest_check; the routes need the nodes' pod ranges, which exist
		// once they joined, so nuv's apply (the bootstrap step) makes them.
		kindSourceDestCheck: {Apply: (*exec).sourceDestCheck, Delete: noop},
		kindPodRoute:        {Apply: (*exec).podRoute, Delete: (*exec).deletePodRoute, Terraform: (*tfWriter).bootstrap},
	} {
		byKind[k] = h
	}
	return kit.Kinds[*exec, *tfWriter]{Provider: Name, ByKind: byKind, Refuse: (*exec).Refuse, Stranger: (*exec).Stranger}
}}

// tfWriter writes a cluster's Terraform module: the network's blocks (awsnet.TF) and the
// machines'.
type tfWriter struct {
	*awsnet.TF
	p *Provider
	// desired are all the plan's resources.
	desired []cluster.Resource
}

// machinesTerraform writes a self-managed cluster as a Terraform module for the hashicorp/aws and
// hashicorp/tls providers: the network, the security groups with one rule resource per port and
// source, the key pair (its private key made by tls_private_key), nuv's machine image looked up
// by name, the instances, the Network Load Balancer, and the bootstrap as one terraform_data
// step whose local-exec runs `nuv cluster apply` on the same spec, written beside the module
// (NAME.yaml): nuv adopts the machines by their tags and runs kubeadm on them over SSH, as its own
// apply does, with the SSH key Terraform made (in its environment, EnvSSHKey) and each machine's
// host key pinned from its tag.
func (p *Provider) machinesTerraform(c *spec.Cluster, desired []cluster.Resource) (map[string][]byte, error) {
	m := tfgen.NewModule()
	m.Variables(c.Spec.Region, kit.Tags(c.Spec.Tags, awsnet.TagCluster, c.Metadata.Name))
	w := &tfWriter{TF: awsnet.NewTF(c, m.File("main.tf")), p: p, desired: desired}
	w.machinesHeader()
	for _, r := range desired {
		w.ByKey[r.Key()] = r
	}
	for _, r := range desired {
		if err := machineKinds.Get().Terraform(w, r); err != nil {
			return nil, err
		}
	}
	w.machinesOutputs(m.File("outputs.tf"))
	files := m.Bytes()
	// the spec beside the module, which the bootstrap step applies
	var doc bytes.Buffer
	doc.WriteString("# The spec of cluster " + c.Metadata.Name + ", written beside its Terraform module by `nuv cluster plan --terraform`:\n# terraform_data.bootstrap runs `nuv cluster apply -f` on it once Terraform made the machines.\n")
	enc := yaml.NewEncoder(&doc)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("terraform: the spec of cluster %s: %w", c.Metadata.Name, err)
	}
	files[c.Metadata.Name+".yaml"] = doc.Bytes()
	return files, nil
}

func (w *tfWriter) machinesHeader() {
	tf := w.Body.AppendNewBlock("terraform", nil).Body()
	rp := tf.AppendNewBlock("required_providers", nil).Body()
	rp.SetAttributeValue("aws", cty.ObjectVal(map[string]cty.Value{"source": cty.StringVal("hashicorp/aws"), "version": cty.StringVal(">= 5.40")}))
	rp.SetAttributeValue("tls", cty.ObjectVal(map[string]cty.Value{"source": cty.StringVal("hashicorp/tls"), "version": cty.StringVal(">= 4.0")}))
	w.Body.AppendNewline()
	pb := w.Body.AppendNewBlock("provider", []string{"aws"}).Body()
	pb.SetAttributeRaw("region", tfgen.Ref("var", "region"))
	pb.AppendNewBlock("default_tags", nil).Body().SetAttributeRaw("tags", tfgen.Ref("var", "tags"))
}

// machineImage declares the AMI lookup once, by the name the plan's instances carry.
func (w *tfWriter) machineImage(name string) hclwrite.Tokens {
	const label = "machine"
	if _, ok := w.Addr["ami"]; !ok {
		w.Addr["ami"] = "data.aws_ami." + label
		w.Body.AppendNewline()
		b := w.Body.AppendNewBlock("data", []string{"aws_ami", label}).Body()
		b.SetAttributeValue("most_recent", cty.True)
		b.SetAttributeValue("owners", tfgen.Strings("self"))
		f := b.AppendNewBlock("filter", nil).Body()
		f.SetAttributeValue("name", cty.StringVal("name"))
		f.SetAttributeValue("values", tfgen.Strings(name))
	}
	return tfgen.Ident("data.aws_ami." + label + ".id")
}

// machineSecurityGroup is the group and one aws_vpc_security_group_ingress_rule per port range and
// source (separate rule resources: groups that name each other make no cycle), and egress to
// anywhere.
func (w *tfWriter) machineSecurityGroup(r cluster.Resource) error {
	b := w.Block("aws_security_group", r.Key())
	vpc, err := w.Ref(r.Fields["vpc"], "id")
	if err != nil {
		return err
	}
	b.SetAttributeValue("name", cty.StringVal("nuv-"+w.C.Metadata.Name+"-"+r.Name))
	b.SetAttributeValue("description", cty.StringVal("nuv cluster "+w.C.Metadata.Name+": "+r.Name))
	b.SetAttributeRaw("vpc_id", vpc)
	b.SetAttributeValue("tags", w.NameTags(r))
	self, _ := w.Ref(r.Key(), "id")
	label := tfgen.Name(r.Name)
	n := 0
	for _, rl := range kit.ParseList(r.Fields["ingress"]) {
		proto, ports, _ := strings.Cut(rl, ":")
		from, to := -1, -1
		if proto != "all" {
			pr, _, _ := strings.Cut(ports, ":")
			lo, hi, ranged := strings.Cut(pr, "-")
			from, _ = strconv.Atoi(lo)
			to = from
			if ranged {
				to, _ = strconv.Atoi(hi)
			}
		}
		for _, src := range ruleSources(rl) {
			w.Body.AppendNewline()
			rb := w.Body.AppendNewBlock("resource", []string{"aws_vpc_security_group_ingress_rule", fmt.Sprintf("%s_%d", label, n)}).Body()
			n++
			rb.SetAttributeRaw("security_group_id", self)
			if proto == "all" {
				rb.SetAttributeValue("ip_protocol", cty.StringVal("-1"))
			} else {
				rb.SetAttributeValue("ip_protocol", cty.StringVal(proto))
				rb.SetAttributeValue("from_port", cty.NumberIntVal(int64(from)))
				rb.SetAttributeValue("to_port", cty.NumberIntVal(int64(to)))
			}
			if strings.HasPrefix(src, awsnet.KindSG+"/") {
				if src == r.Key() {
					rb.SetAttributeRaw("referenced_security_group_id", self)
					continue
				}
				// A group declared later is referenced by its address all the same: Terraform
				// orders by references, not by position in the file.
				rb.SetAttributeRaw("referenced_security_group_id", tfgen.Ref("aws_security_group", tfgen.Name(strings.TrimPrefix(src, awsnet.KindSG+"/")), "id"))
				continue
			}
			rb.SetAttributeValue("cidr_ipv4", cty.StringVal(src))
		}
	}
	w.Body.AppendNewline()
	eb := w.Body.AppendNewBlock("resource", []string{"aws_vpc_security_group_egress_rule", label}).Body()
	eb.SetAttributeRaw("security_group_id", self)
	eb.SetAttributeValue("ip_protocol", cty.StringVal("-1"))
	eb.SetAttributeValue("cidr_ipv4", cty.StringVal("0.0.0.0/0"))
	return nil
}

// keyPair is nuv's SSH key: made by tls_private_key (it stays in Terraform's state, which the user
// keeps safe), its public half imported as the key pair.
func (w *tfWriter) keyPair(r cluster.Resource) error {
	label := tfgen.Name(r.Name)
	w.Body.AppendNewline()
	kb := w.Body.AppendNewBlock("resource", []string{"tls_private_key", label}).Body()
	kb.SetAttributeValue("algorithm", cty.StringVal(strings.ToUpper(r.Fields["algorithm"])))
	b := w.Block("aws_key_pair", r.Key())
	b.SetAttributeValue("key_name", cty.StringVal(r.Name))
	b.SetAttributeRaw("public_key", tfgen.Ref("tls_private_key", label, "public_key_openssh"))
	b.SetAttributeValue("tags", w.NameTags(r))
	return nil
}

// instance is one machine, tagged with its role; a node's (control plane's, worker's)
// source/destination check is off because the pod network routes pods' addresses through the
// nodes (the etcd and HAProxy machines keep theirs). Its SSH host key is made by
// tls_private_key and installed by the user data nuv gives its own machines (userdata.Template,
// the same script with Terraform's keys in it); the key's public half is the machine's
// nuv.dev/host-key tag, so nuv's bootstrap pins it as it pins the keys of machines it launched.
func (w *tfWriter) instance(r cluster.Resource) error {
	f := r.Fields
	hostKey := tfgen.Name("host-" + r.Name)
	w.Body.AppendNewline()
	hb := w.Body.AppendNewBlock("resource", []string{"tls_private_key", hostKey}).Body()
	hb.SetAttributeValue("algorithm", cty.StringVal("ED25519"))
	client, err := w.clientKeyLabel()
	if err != nil {
		return err
	}
	interp := func(label, attr string) string { return "${trimspace(tls_private_key." + label + "." + attr + ")}" }
	ud, err := userdata.Template(w.C.Metadata.Name+"-"+r.Name, "", userdata.Holes{
		HostKey:    interp(hostKey, "private_key_openssh"),
		HostPub:    interp(hostKey, "public_key_openssh"),
		Authorized: interp(client, "public_key_openssh"),
	}, tfgen.TemplateEscape)
	if err != nil {
		return err
	}
	ami := w.machineImage(f["image"])
	b := w.Block("aws_instance", r.Key())
	b.SetAttributeRaw("ami", ami)
	b.SetAttributeValue("instance_type", cty.StringVal(f["instanceType"]))
	sub, err := w.Ref(f["subnet"], "id")
	if err != nil {
		return err
	}
	b.SetAttributeRaw("subnet_id", sub)
	sgs, err := w.Refs("id", kit.ParseList(f["securityGroups"])...)
	if err != nil {
		return err
	}
	b.SetAttributeRaw("vpc_security_group_ids", sgs)
	kp, err := w.Ref(f["keyPair"], "key_name")
	if err != nil {
		return err
	}
	b.SetAttributeRaw("key_name", kp)
	if carriesPods(f["role"]) {
		// the pod network routes pods' addresses to the nodes (podnet.go)
		b.SetAttributeValue("source_dest_check", cty.False)
	}
	b.SetAttributeRaw("user_data", tfgen.Heredoc(ud))
	// the host key's public half is known only when Terraform made it: an expression in the tags
	tags := []hclwrite.ObjectAttrTokens{}
	static := map[string]string{"Name": awsnet.NameTag(w.C.Metadata.Name, r), awsnet.TagResource: r.Key(), TagRole: f["role"]}
	for _, k := range slices.Sorted(maps.Keys(static)) {
		tags = append(tags, hclwrite.ObjectAttrTokens{Name: hclwrite.TokensForValue(cty.StringVal(k)), Value: hclwrite.TokensForValue(cty.StringVal(static[k]))})
	}
	tags = append(tags, hclwrite.ObjectAttrTokens{Name: hclwrite.TokensForValue(cty.StringVal(TagHostKey)), Value: tfgen.Ident("trimspace(tls_private_key." + hostKey + ".public_key_openssh)")})
	b.SetAttributeRaw("tags", hclwrite.TokensForObject(tags))
	return nil
}

// clientKeyLabel is the tls_private_key of nuv's SSH key (the cluster's key pair), written before
// any instance.
func (w *tfWriter) clientKeyLabel() (string, error) {
	for _, r := range w.desired {
		if r.Kind == kindKeyPair {
			if _, ok := w.Addr[r.Key()]; !ok {
				return "", fmt.Errorf("terraform: the key pair %s comes after the machines", r.Key())
			}
			return tfgen.Name(r.Name), nil
		}
	}
	return "", errors.New("terraform: the cluster has no key pair")
}

func (w *tfWriter) loadBalancer(r cluster.Resource) error {
	b := w.Block("aws_lb", r.Key())
	b.SetAttributeValue("name", cty.StringVal("nuv-"+r.Name))
	b.SetAttributeValue("load_balancer_type", cty.StringVal(r.Fields["type"]))
	b.SetAttributeValue("internal", cty.BoolVal(r.Fields["scheme"] == "internal"))
	var subs []string
	for _, s := range kit.ParseList(r.Fields["subnets"]) {
		subs = append(subs, awsnet.Key(awsnet.KindSubnet, s))
	}
	t, err := w.Refs("id", subs...)
	if err != nil {
		return err
	}
	b.SetAttributeRaw("subnets", t)
	b.SetAttributeValue("tags", w.NameTags(r))
	return nil
}

// targetGroup is the API's target group and an attachment per control plane.
func (w *tfWriter) targetGroup(r cluster.Resource) error {
	f := r.Fields
	b := w.Block("aws_lb_target_group", r.Key())
	b.SetAttributeValue("name", cty.StringVal("nuv-"+r.Name))
	b.SetAttributeValue("protocol", cty.StringVal(f["protocol"]))
	port, _ := strconv.Atoi(f["port"])
	b.SetAttributeValue("port", cty.NumberIntVal(int64(port)))
	vpc, err := w.Ref(f["vpc"], "id")
	if err != nil {
		return err
	}
	b.SetAttributeRaw("vpc_id", vpc)
	b.SetAttributeValue("target_type", cty.StringVal("instance"))
	hc := b.AppendNewBlock("health_check", nil).Body()
	hc.SetAttributeValue("protocol", cty.StringVal("TCP"))
	b.SetAttributeValue("tags", w.NameTags(r))
	tg, _ := w.Ref(r.Key(), "arn")
	for _, t := range kit.ParseList(f["targets"]) {
		id, err := w.Ref(awsnet.Key(kindInstance, t), "id")
		if err != nil {
			return err
		}
		w.Body.AppendNewline()
		ab := w.Body.AppendNewBlock("resource", []string{"aws_lb_target_group_attachment", tfgen.Name(t)}).Body()
		ab.SetAttributeRaw("target_group_arn", tg)
		ab.SetAttributeRaw("target_id", id)
		ab.SetAttributeValue("port", cty.NumberIntVal(int64(port)))
	}
	return nil
}

func (w *tfWriter) listener(r cluster.Resource) error {
	f := r.Fields
	b := w.Block("aws_lb_listener", r.Key())
	lb, err := w.Ref(f["loadBalancer"], "arn")
	if err != nil {
		return err
	}
	tg, err := w.Ref(f["targetGroup"], "arn")
	if err != nil {
		return err
	}
	b.SetAttributeRaw("load_balancer_arn", lb)
	b.SetAttributeValue("protocol", cty.StringVal(f["protocol"]))
	port, _ := strconv.Atoi(f["port"])
	b.SetAttributeValue("port", cty.NumberIntVal(int64(port)))
	ab := b.AppendNewBlock("default_action", nil).Body()
	ab.SetAttributeValue("type", cty.StringVal("forward"))
	ab.SetAttributeRaw("target_group_arn", tg)
	return nil
}

// bootstrap writes, once, the step that bootstraps Kubernetes on the machines Terraform made:
// `nuv cluster apply` on the cluster's spec, run again whenever a machine is replaced.
func (w *tfWriter) bootstrap(cluster.Resource) error {
	if _, ok := w.Addr["bootstrap"]; ok {
		return nil
	}
	w.Addr["bootstrap"] = "terraform_data.bootstrap"
	var machines, after []string
	for _, r := range w.desired {
		switch r.Kind {
		case kindInstance:
			machines = append(machines, r.Key())
			after = append(after, r.Key())
		case kindListener, kindTargetGroup:
			after = append(after, r.Key())
		}
	}
	ids, err := w.Refs("id", machines...)
	if err != nil {
		return err
	}
	w.Body.AppendNewline()
	b := w.Body.AppendNewBlock("resource", []string{"terraform_data", "bootstrap"}).Body()
	b.SetAttributeRaw("triggers_replace", ids)
	pb := b.AppendNewBlock("provisioner", []string{"local-exec"}).Body()
	// A template: Terraform fills in the module's directory, where the spec is kept beside it.
	pb.SetAttributeRaw("command", tfgen.Ident(`"nuv cluster apply -f ${path.module}/`+w.C.Metadata.Name+`.yaml --yes"`))
	// nuv connects with the key Terraform made (the key pair's): it reaches nuv in the
	// environment, never on the command line or on disk
	client, err := w.clientKeyLabel()
	if err != nil {
		return err
	}
	env := []hclwrite.ObjectAttrTokens{{Name: tfgen.Ident(EnvSSHKey), Value: tfgen.Ref("tls_private_key", client, "private_key_openssh")}}
	pb.SetAttributeRaw("environment", hclwrite.TokensForObject(env))
	b.SetAttributeRaw("depends_on", w.Addrs(after...))
	return nil
}

func (w *tfWriter) machinesOutputs(b *hclwrite.Body) {
	name := w.C.Metadata.Name
	if a, ok := w.Addr[awsnet.Key(kindLoadBalancer, name)]; ok {
		ob := b.AppendNewBlock("output", []string{"endpoint"}).Body()
		ob.SetAttributeValue("description", cty.StringVal("The API servers' load balancer (port 6443)."))
		ob.SetAttributeRaw("value", tfgen.Ident(a+".dns_name"))
		return
	}
	if a, ok := w.Addr[awsnet.Key(kindInstance, "lb-0")]; ok {
		ob := b.AppendNewBlock("output", []string{"endpoint"}).Body()
		ob.SetAttributeValue("description", cty.StringVal("The HAProxy machine in front of the API servers (port 6443)."))
		ob.SetAttributeRaw("value", tfgen.Ident(a+".private_ip"))
	}
}

package karpenter

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/lazy"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Cluster is what the mapping needs to know of the cluster Karpenter runs in; the provider that
// makes the cluster (eks) fills it.
type Cluster struct {
	// Name is the nuv cluster's name: it labels the objects (nuv.dev/cluster) and, unless
	// SubnetIDs/SubnetTags say otherwise, selects subnets and security groups by their
	// karpenter.sh/discovery tag.
	Name string
	// NodeRole is the IAM role the nodes run as: its name, not its ARN (EC2NodeClass spec.role;
	// Karpenter makes the instance profile from it).
	NodeRole string
	// AMIAlias is the EC2NodeClass AMI alias, family@version; default al2023@latest.
	AMIAlias string
	// Tags are put on what Karpenter launches (instances, volumes, network interfaces), besides
	// nuv.dev/cluster and nuv.dev/nodegroup: the spec's tags.
	Tags map[string]string
	// SubnetIDs and SecurityGroupIDs select by ID (subnets nuv does not tag, an existing VPC);
	// they win over the tags.
	SubnetIDs, SecurityGroupIDs []string
	// SubnetTags and SecurityGroupTags select by tags; default {karpenter.sh/discovery: Name}.
	SubnetTags, SecurityGroupTags map[string]string
}

// DiscoveryTags are the tags the provider puts on the private subnets and the node security group
// of cluster name so the default selectors find them (Karpenter's documented convention).
func DiscoveryTags(name string) map[string]string { return map[string]string{DiscoveryTag: name} }

var (
	instanceTypeRE = lazy.MustCompile(`^[a-z][a-z0-9-]*\.[a-z0-9-]+$`)
	labelValueRE   = lazy.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
	aliasRE        = lazy.MustCompile(`^(al2|al2023|bottlerocket|windows2019|windows2022|windows2025)@(.+)$`)
)

// maxDiskGiB is the largest gp3 volume.
const maxDiskGiB = 16384

// Validate checks the Karpenter node groups of a spec (manager: karpenter) and the spec's tags
// (they go on the instances) against what the mapping and Karpenter accept, with field paths
// ("spec.nodeGroups[1].max"). It leaves out what the spec's own validation reports (taint syntax,
// label key syntax, min above max). Providers call it from Validate.
func Validate(c *spec.Cluster) []spec.FieldError {
	var errs []spec.FieldError
	found := false
	for i, g := range c.Spec.NodeGroups {
		if g.Manager != "karpenter" {
			continue
		}
		found = true
		errs = append(errs, checkGroup(fmt.Sprintf("spec.nodeGroups[%d]", i), g)...)
	}
	if found {
		for _, k := range slices.Sorted(maps.Keys(c.Spec.Tags)) {
			if msg := restrictedTag(k); msg != "" {
				errs = append(errs, spec.Errorf("spec.tags."+k, "%s", msg))
			}
		}
	}
	return errs
}

// Static reports whether g maps to a static NodePool (replicas set: a fixed number of nodes).
func Static(g spec.NodeGroup) bool { return g.Count != nil }

// Replaces reports whether going from group old to group new needs the NodePool replaced (deleted
// and created again) rather than updated, and why: Karpenter refuses (a CEL transition rule) to
// turn a static pool into a dynamic one or back.
func Replaces(old, new spec.NodeGroup) (bool, string) {
	if Static(old) != Static(new) {
		return true, "count added or removed: a NodePool cannot switch between static (replicas) and dynamic"
	}
	return false, ""
}

// checkGroup returns the problems of one Karpenter group, paths under prefix.
func checkGroup(prefix string, g spec.NodeGroup) []spec.FieldError {
	var errs []spec.FieldError
	at := func(f string) string {
		if prefix == "" {
			return f
		}
		return prefix + "." + f
	}
	if g.Max == nil {
		errs = append(errs, spec.Errorf(at("max"), "required for a Karpenter group: it becomes the NodePool's limits.nodes (without it Karpenter could launch nodes without bound)"))
	}
	if g.Min != nil && *g.Min > 0 && g.Count == nil {
		errs = append(errs, spec.Errorf(at("min"), "a Karpenter NodePool (karpenter.sh/v1) has no minimum size: set count for a static pool of that many nodes, or leave min out"))
	}
	seen := map[string]bool{}
	for _, t := range splitTypes(g.InstanceType) {
		switch {
		case !instanceTypeRE.MatchString(t):
			errs = append(errs, spec.Errorf(at("instanceType"), "%q is not an EC2 instance type (family.size, e.g. m5.large; several: m5.large,m6i.large)", t))
		case seen[t]:
			errs = append(errs, spec.Errorf(at("instanceType"), "%q is listed twice", t))
		}
		seen[t] = true
	}
	if g.InstanceType != "" && len(splitTypes(g.InstanceType)) == 0 {
		errs = append(errs, spec.Errorf(at("instanceType"), "%q names no instance type", g.InstanceType))
	}
	for _, k := range slices.Sorted(maps.Keys(g.Labels)) {
		if msg := restrictedLabel(k); msg != "" {
			errs = append(errs, spec.Errorf(at("labels."+k), "%s", msg))
		}
		if v := g.Labels[k]; len(v) > 63 || !labelValueRE.MatchString(v) {
			errs = append(errs, spec.Errorf(at("labels."+k), "invalid label value %q: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit", v))
		}
	}
	if g.DiskSize > maxDiskGiB {
		errs = append(errs, spec.Errorf(at("diskSize"), "%d: at most %d GiB (a gp3 volume)", g.DiskSize, maxDiskGiB))
	}
	return errs
}

// splitTypes splits a comma-separated instanceType, dropping blanks.
func splitTypes(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// restrictedLabel says why a template label key is refused ("" if it is fine): Karpenter reserves
// its domains and the hostname label; nuv sets nuv.dev/nodegroup itself.
func restrictedLabel(k string) string {
	switch k {
	case "kubernetes.io/hostname":
		return "label kubernetes.io/hostname is restricted by Karpenter (the kubelet sets it)"
	case LabelNodeGroup:
		return "label " + LabelNodeGroup + " is set by nuv to the group's name"
	case "node.kubernetes.io/instance-type":
		return "use instanceType: it becomes the NodePool's instance-type requirement"
	}
	domain, _, ok := strings.Cut(k, "/")
	if !ok {
		return ""
	}
	for _, d := range []string{GroupCore, GroupAWS} {
		if strings.HasSuffix(domain, d) {
			return fmt.Sprintf("label domain %q is Karpenter's (capacity type comes from spot, instance type from instanceType)", d)
		}
	}
	return ""
}

// restrictedTag says why an instance tag key is refused: the EC2NodeClass CRD reserves these.
func restrictedTag(k string) string {
	switch {
	case k == "":
		return "empty tag keys are not supported on Karpenter's instances"
	case strings.HasPrefix(k, "kubernetes.io/cluster"), k == "eks:eks-cluster-name",
		k == "karpenter.sh/nodepool", k == "karpenter.sh/nodeclaim", k == "karpenter.k8s.aws/ec2nodeclass":
		return fmt.Sprintf("tag %q is reserved by Karpenter on the instances it launches", k)
	}
	return ""
}

// check returns what is wrong with the cluster facts (the provider's, not the user's).
func (c Cluster) check() error {
	var msgs []string
	if err := spec.ValidName(c.Name); err != nil {
		msgs = append(msgs, "cluster name: "+err.Error())
	}
	if c.NodeRole == "" {
		msgs = append(msgs, "the node role is required (EC2NodeClass spec.role)")
	} else if strings.HasPrefix(c.NodeRole, "arn:") {
		msgs = append(msgs, fmt.Sprintf("node role %q: give the role's name, not its ARN", c.NodeRole))
	}
	if a := c.alias(); len(a) > 30 {
		msgs = append(msgs, fmt.Sprintf("AMI alias %q: at most 30 characters", a))
	} else if !aliasRE.MatchString(a) {
		msgs = append(msgs, fmt.Sprintf("AMI alias %q: want family@version with family one of al2, al2023, bottlerocket, windows2019, windows2022, windows2025", a))
	} else if m := aliasRE.FindStringSubmatch(a); strings.HasPrefix(m[1], "windows") && m[2] != "latest" {
		msgs = append(msgs, fmt.Sprintf("AMI alias %q: windows families only take version latest", a))
	}
	for _, s := range []struct {
		what string
		ids  []string
		tags map[string]string
	}{{"subnet", c.SubnetIDs, c.SubnetTags}, {"security group", c.SecurityGroupIDs, c.SecurityGroupTags}} {
		for _, id := range s.ids {
			if id == "" {
				msgs = append(msgs, "an empty "+s.what+" ID")
			}
		}
		for k, v := range s.tags {
			if k == "" || v == "" {
				msgs = append(msgs, fmt.Sprintf("%s selector tag %q=%q: empty keys and values select nothing", s.what, k, v))
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Tags)) {
		if msg := restrictedTag(k); msg != "" {
			msgs = append(msgs, msg)
		}
	}
	if len(msgs) > 0 {
		return fmt.Errorf("karpenter: cluster %q: %s", c.Name, strings.Join(msgs, "; "))
	}
	return nil
}

func (c Cluster) alias() string {
	if c.AMIAlias == "" {
		return DefaultAMI
	}
	return c.AMIAlias
}

// Objects maps one node group with manager: karpenter to its EC2NodeClass and NodePool (in that
// order: the pool refers to the class), both named after the group and labelled as nuv's. Input
// the mapping cannot express is refused with the group's field names.
func Objects(c Cluster, g spec.NodeGroup) ([]*unstructured.Unstructured, error) {
	if g.Manager != "karpenter" {
		return nil, fmt.Errorf("karpenter: node group %q has manager %q, not karpenter", g.Name, g.Manager)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	if err := spec.ValidName(g.Name); err != nil {
		return nil, fmt.Errorf("karpenter: node group: %w", err)
	}
	errs := checkGroup("", g)
	var taints []any
	for i, s := range g.Taints {
		t, err := spec.ParseTaint(s)
		if err != nil {
			errs = append(errs, spec.Errorf(fmt.Sprintf("taints[%d]", i), "%v", err))
			continue
		}
		m := map[string]any{"key": t.Key, "effect": t.Effect}
		if t.Value != "" {
			m["value"] = t.Value
		}
		taints = append(taints, m)
	}
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return nil, fmt.Errorf("karpenter: node group %q: %s", g.Name, strings.Join(msgs, "; "))
	}
	return []*unstructured.Unstructured{nodeClass(c, g), nodePool(c, g, taints)}, nil
}

// Named returns the objects of group as Delete needs them (kind, name and nuv's labels, no spec):
// to delete a group the spec no longer lists, whose other settings are not known any more.
func Named(cluster, group string) []*unstructured.Unstructured {
	c, g := Cluster{Name: cluster}, spec.NodeGroup{Name: group}
	return []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": GroupAWS + "/" + Version, "kind": KindNodeClass, "metadata": objectMeta(c, g)}},
		{Object: map[string]any{"apiVersion": GroupCore + "/" + Version, "kind": KindNodePool, "metadata": objectMeta(c, g)}},
	}
}

// objectMeta is the metadata of both objects: the group's name and nuv's labels.
func objectMeta(c Cluster, g spec.NodeGroup) map[string]any {
	return map[string]any{
		"name": g.Name,
		"labels": map[string]any{
			LabelCluster: c.Name, LabelNodeGroup: g.Name, LabelManagedBy: managedByValue,
		},
	}
}

func nodePool(c Cluster, g spec.NodeGroup, taints []any) *unstructured.Unstructured {
	reqs := []any{req("kubernetes.io/os", "linux")}
	if types := splitTypes(g.InstanceType); len(types) > 0 {
		reqs = append(reqs, req("node.kubernetes.io/instance-type", types...))
	}
	capacity := "on-demand"
	if g.Spot {
		capacity = "spot"
	}
	reqs = append(reqs, req("karpenter.sh/capacity-type", capacity))
	labels := map[string]any{LabelNodeGroup: g.Name}
	for k, v := range g.Labels {
		labels[k] = v
	}
	tspec := map[string]any{
		"requirements": reqs,
		"nodeClassRef": map[string]any{"group": GroupAWS, "kind": KindNodeClass, "name": g.Name},
	}
	if len(taints) > 0 {
		tspec["taints"] = taints
	}
	s := map[string]any{
		"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": tspec},
		"limits":   map[string]any{"nodes": int64(*g.Max)},
	}
	if g.Count != nil {
		s["replicas"] = int64(*g.Count)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": GroupCore + "/" + Version, "kind": KindNodePool, "metadata": objectMeta(c, g), "spec": s,
	}}
}

func req(key string, values ...string) map[string]any {
	vs := make([]any, len(values))
	for i, v := range values {
		vs[i] = v
	}
	return map[string]any{"key": key, "operator": "In", "values": vs}
}

func nodeClass(c Cluster, g spec.NodeGroup) *unstructured.Unstructured {
	tags := map[string]any{}
	for k, v := range c.Tags {
		tags[k] = v
	}
	tags[LabelCluster], tags[LabelNodeGroup] = c.Name, g.Name
	s := map[string]any{
		"role":                       c.NodeRole,
		"amiSelectorTerms":           []any{map[string]any{"alias": c.alias()}},
		"subnetSelectorTerms":        selector(c.SubnetIDs, c.SubnetTags, c.Name),
		"securityGroupSelectorTerms": selector(c.SecurityGroupIDs, c.SecurityGroupTags, c.Name),
		"tags":                       tags,
	}
	if g.DiskSize > 0 {
		s["blockDeviceMappings"] = disks(c.alias(), g.DiskSize)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": GroupAWS + "/" + Version, "kind": KindNodeClass, "metadata": objectMeta(c, g), "spec": s,
	}}
}

// selector is a list of selector terms: one per ID, else one term with all the tags.
func selector(ids []string, tags map[string]string, cluster string) []any {
	if len(ids) > 0 {
		out := make([]any, len(ids))
		for i, id := range ids {
			out[i] = map[string]any{"id": id}
		}
		return out
	}
	if len(tags) == 0 {
		tags = DiscoveryTags(cluster)
	}
	m := map[string]any{}
	for k, v := range tags {
		m[k] = v
	}
	return []any{map[string]any{"tags": m}}
}

// disks are the block device mappings that give the node size GiB where kubelet keeps images and
// pods: the root volume of the AL2, AL2023 and Windows AMIs; for Bottlerocket its data volume
// (/dev/xvdb), beside the 4 GiB OS volume Karpenter would otherwise default.
func disks(alias string, size int) []any {
	family, _, _ := strings.Cut(alias, "@")
	ebs := func(size int) map[string]any {
		return map[string]any{
			"volumeSize": strconv.Itoa(size) + "Gi", "volumeType": "gp3", "encrypted": true, "deleteOnTermination": true,
		}
	}
	switch {
	case family == "bottlerocket":
		return []any{
			map[string]any{"deviceName": "/dev/xvda", "ebs": ebs(4)},
			map[string]any{"deviceName": "/dev/xvdb", "rootVolume": true, "ebs": ebs(size)},
		}
	case strings.HasPrefix(family, "windows"):
		return []any{map[string]any{"deviceName": "/dev/sda1", "rootVolume": true, "ebs": ebs(size)}}
	}
	return []any{map[string]any{"deviceName": "/dev/xvda", "rootVolume": true, "ebs": ebs(size)}}
}

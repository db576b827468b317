package eks

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

func sectionOf(c *spec.Cluster) Section {
	s, _ := DecodeSection(c.SectionMap("eks"))
	return s
}

// observation collects what exists, with the EC2 ids mapped to resource keys so references
// (a NAT gateway's subnet, a route's target) read as keys like the desired resources' fields.
type observation struct {
	name     string
	recorded map[string]string // id -> key, from the state record
	out      []cluster.Resource
	keys     map[string]string // EC2 id -> resource key
	seen     map[string]bool   // EC2 ids observed
}

func (o *observation) add(r cluster.Resource) {
	o.out = append(o.out, r)
	if r.ID != "" {
		o.keys[r.ID] = r.Key()
		o.seen[r.ID] = true
	}
}

func (o *observation) ref(id string) string {
	if k, ok := o.keys[id]; ok {
		return k
	}
	return id
}

func (o *observation) keysOf(kind string) []string {
	var out []string
	for _, r := range o.out {
		if r.Kind == kind {
			out = append(out, r.Key())
		}
	}
	return out
}

func tagsOf(tags []ec2types.Tag) map[string]string {
	m := map[string]string{}
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

// resourceKey is an EC2 resource's key: its nuv.dev/resource tag, else the key the state record
// gives its id (a resource whose tags were edited by hand), else kind/id.
func (o *observation) resourceKey(tags map[string]string, kind, id string) (string, string) {
	if k, ok := tags[TagResource]; ok {
		if kd, n, ok := strings.Cut(k, "/"); ok && kd == kind {
			return kd, n
		}
	}
	if k, ok := o.recorded[id]; ok {
		if kd, n, ok := strings.Cut(k, "/"); ok && kd == kind {
			return kd, n
		}
	}
	return kind, id
}

// Observe finds what exists of the cluster: EC2 resources by the nuv.dev/cluster tag and by the
// IDs recorded, IAM roles and the EKS cluster by name (Foreign when not tagged as this cluster's),
// the node groups and add-ons of the cluster, the kubeconfig, and anything else EC2 lists with the
// cluster's tag.
func (p *Provider) Observe(ctx context.Context, c *spec.Cluster, recorded []cluster.Resource) ([]cluster.Resource, error) {
	sec := sectionOf(c)
	s, err := p.session(ctx, c, sec)
	if err != nil {
		return nil, err
	}
	name := c.Metadata.Name
	o := &observation{name: name, keys: map[string]string{}, seen: map[string]bool{}, recorded: map[string]string{}}
	rec := map[string][]string{}
	for _, r := range recorded {
		if r.ID != "" {
			rec[r.Kind] = append(rec[r.Kind], r.ID)
			o.recorded[r.ID] = r.Key()
		}
	}
	if err := s.observeNetwork(ctx, o, rec); err != nil {
		return nil, err
	}
	for _, rn := range []string{clusterRoleName(name), nodeRoleName(name)} {
		if err := s.observeRole(ctx, o, rn); err != nil {
			return nil, err
		}
	}
	cl, foreign, err := s.observeCluster(ctx, o, c, sec)
	if err != nil {
		return nil, err
	}
	if foreign {
		cl = nil
	}
	if cl != nil && cl.Status != ekstypes.ClusterStatusDeleting {
		if err := s.observeGroups(ctx, o, name); err != nil {
			return nil, err
		}
		if err := p.observeKarpenter(ctx, o, c, aws.ToString(cl.Endpoint), recorded); err != nil {
			return nil, err
		}
	}
	server := ""
	if cl != nil {
		server = aws.ToString(cl.Endpoint)
	}
	if _, err := os.Stat(p.KubeconfigPath(name)); err == nil && (server == "" || p.kubeconfigMatches(name, server)) {
		if server != "" || p.kubeconfigOf(name) {
			o.add(cluster.Resource{Kind: kindKubeconfig, Name: name, ID: p.KubeconfigPath(name),
				Fields: map[string]string{"path": "clusters/" + name + ".kubeconfig"}, DependsOn: []string{key(kindCluster, name)}})
		}
	}
	if err := s.sweep(ctx, o); err != nil {
		return nil, err
	}
	for _, r := range o.out {
		if !r.Foreign {
			p.remember(name, r.Key(), r.ID)
		}
	}
	return o.out, nil
}

// kubeconfigOf reports whether clusters/NAME.kubeconfig is one nuv wrote for EKS cluster name.
func (p *Provider) kubeconfigOf(name string) bool {
	b, err := os.ReadFile(p.KubeconfigPath(name))
	return err == nil && strings.Contains(string(b), "-eks-token") && strings.Contains(string(b), name)
}

func tagFilter(name string) []ec2types.Filter {
	return []ec2types.Filter{{Name: aws.String("tag:" + TagCluster), Values: []string{name}}}
}

// describe calls f once with the cluster's tag filter and once per recorded id not found by it
// (an id that no longer exists is skipped).
func describe[T any](ctx context.Context, o *observation, ids []string, f func(ctx context.Context, filters []ec2types.Filter, ids []string) ([]T, error), id func(T) string) ([]T, error) {
	all, err := f(ctx, tagFilter(o.name), nil)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, x := range all {
		have[id(x)] = true
	}
	for _, rid := range ids {
		if have[rid] {
			continue
		}
		more, err := f(ctx, nil, []string{rid})
		if err != nil {
			if strings.Contains(apiCode(err), "NotFound") {
				continue
			}
			return nil, err
		}
		all = append(all, more...)
	}
	return all, nil
}

func (s *session) observeNetwork(ctx context.Context, o *observation, rec map[string][]string) error {
	wrap := func(op string, err error) error { return fmt.Errorf("ec2:%s: %s", op, apiMessage(err)) }
	vpcs, err := describe(ctx, o, rec[kindVPC], func(ctx context.Context, f []ec2types.Filter, ids []string) ([]ec2types.Vpc, error) {
		out, err := s.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{Filters: f, VpcIds: ids})
		if err != nil {
			return nil, err
		}
		return out.Vpcs, nil
	}, func(v ec2types.Vpc) string { return aws.ToString(v.VpcId) })
	if err != nil {
		return wrap("DescribeVpcs", err)
	}
	for _, v := range vpcs {
		t := tagsOf(v.Tags)
		k, n := o.resourceKey(t, kindVPC, aws.ToString(v.VpcId))
		o.add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(v.VpcId), Fields: map[string]string{"cidr": aws.ToString(v.CidrBlock)}})
	}
	// A VPC named like the cluster's that nuv did not make: a conflict, never touched.
	named, err := s.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{Filters: []ec2types.Filter{{Name: aws.String("tag:Name"), Values: []string{o.name}}}})
	if err != nil {
		return wrap("DescribeVpcs", err)
	}
	for _, v := range named.Vpcs {
		if tagsOf(v.Tags)[TagCluster] != o.name && !o.seen[aws.ToString(v.VpcId)] {
			o.out = append(o.out, cluster.Resource{Kind: kindVPC, Name: o.name, ID: aws.ToString(v.VpcId), Foreign: true})
		}
	}
	vpcKey := func(id string) []string {
		if k := o.ref(id); k != id {
			return []string{k}
		}
		return nil
	}

	subnets, err := describe(ctx, o, rec[kindSubnet], func(ctx context.Context, f []ec2types.Filter, ids []string) ([]ec2types.Subnet, error) {
		out, err := s.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: f, SubnetIds: ids})
		if err != nil {
			return nil, err
		}
		return out.Subnets, nil
	}, func(v ec2types.Subnet) string { return aws.ToString(v.SubnetId) })
	if err != nil {
		return wrap("DescribeSubnets", err)
	}
	for _, sn := range subnets {
		k, n := o.resourceKey(tagsOf(sn.Tags), kindSubnet, aws.ToString(sn.SubnetId))
		o.add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(sn.SubnetId), Fields: map[string]string{
			"cidr": aws.ToString(sn.CidrBlock), "zone": aws.ToString(sn.AvailabilityZone), "public": strconv.FormatBool(aws.ToBool(sn.MapPublicIpOnLaunch))},
			DependsOn: vpcKey(aws.ToString(sn.VpcId))})
	}

	igws, err := describe(ctx, o, rec[kindIGW], func(ctx context.Context, f []ec2types.Filter, ids []string) ([]ec2types.InternetGateway, error) {
		out, err := s.ec2.DescribeInternetGateways(ctx, &ec2.DescribeInternetGatewaysInput{Filters: f, InternetGatewayIds: ids})
		if err != nil {
			return nil, err
		}
		return out.InternetGateways, nil
	}, func(v ec2types.InternetGateway) string { return aws.ToString(v.InternetGatewayId) })
	if err != nil {
		return wrap("DescribeInternetGateways", err)
	}
	for _, g := range igws {
		k, n := o.resourceKey(tagsOf(g.Tags), kindIGW, aws.ToString(g.InternetGatewayId))
		vpc, attachment := "", ""
		for _, a := range g.Attachments {
			vpc, attachment = o.ref(aws.ToString(a.VpcId)), aws.ToString(a.VpcId)
		}
		o.add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(g.InternetGatewayId), Fields: map[string]string{"vpc": vpc}, DependsOn: vpcKey(attachment)})
	}
	igwKeys := o.keysOf(kindIGW)

	eips, err := describe(ctx, o, rec[kindEIP], func(ctx context.Context, f []ec2types.Filter, ids []string) ([]ec2types.Address, error) {
		out, err := s.ec2.DescribeAddresses(ctx, &ec2.DescribeAddressesInput{Filters: f, AllocationIds: ids})
		if err != nil {
			return nil, err
		}
		return out.Addresses, nil
	}, func(v ec2types.Address) string { return aws.ToString(v.AllocationId) })
	if err != nil {
		return wrap("DescribeAddresses", err)
	}
	for _, a := range eips {
		k, n := o.resourceKey(tagsOf(a.Tags), kindEIP, aws.ToString(a.AllocationId))
		o.add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(a.AllocationId), Fields: map[string]string{"domain": string(a.Domain)}, DependsOn: igwKeys})
	}

	nats, err := describe(ctx, o, rec[kindNAT], func(ctx context.Context, f []ec2types.Filter, ids []string) ([]ec2types.NatGateway, error) {
		out, err := s.ec2.DescribeNatGateways(ctx, &ec2.DescribeNatGatewaysInput{Filter: f, NatGatewayIds: ids})
		if err != nil {
			return nil, err
		}
		return out.NatGateways, nil
	}, func(v ec2types.NatGateway) string { return aws.ToString(v.NatGatewayId) })
	if err != nil {
		return wrap("DescribeNatGateways", err)
	}
	for _, g := range nats {
		if g.State == ec2types.NatGatewayStateDeleted {
			continue
		}
		k, n := o.resourceKey(tagsOf(g.Tags), kindNAT, aws.ToString(g.NatGatewayId))
		eip := ""
		for _, a := range g.NatGatewayAddresses {
			eip = o.ref(aws.ToString(a.AllocationId))
		}
		sub := o.ref(aws.ToString(g.SubnetId))
		deps := append([]string{sub}, igwKeys...)
		if eip != "" {
			deps = append(deps, eip)
		}
		o.add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(g.NatGatewayId), Fields: map[string]string{"subnet": sub, "eip": eip}, DependsOn: deps})
	}

	rts, err := describe(ctx, o, rec[kindRouteTable], func(ctx context.Context, f []ec2types.Filter, ids []string) ([]ec2types.RouteTable, error) {
		out, err := s.ec2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: f, RouteTableIds: ids})
		if err != nil {
			return nil, err
		}
		return out.RouteTables, nil
	}, func(v ec2types.RouteTable) string { return aws.ToString(v.RouteTableId) })
	if err != nil {
		return wrap("DescribeRouteTables", err)
	}
	for _, rt := range rts {
		k, n := o.resourceKey(tagsOf(rt.Tags), kindRouteTable, aws.ToString(rt.RouteTableId))
		def := ""
		deps := vpcKey(aws.ToString(rt.VpcId))
		for _, r := range rt.Routes {
			if aws.ToString(r.DestinationCidrBlock) != "0.0.0.0/0" {
				continue
			}
			if r.GatewayId != nil {
				def = o.ref(aws.ToString(r.GatewayId))
			}
			if r.NatGatewayId != nil {
				def = o.ref(aws.ToString(r.NatGatewayId))
			}
			deps = append(deps, def)
		}
		var subs []string
		for _, a := range rt.Associations {
			if a.SubnetId != nil {
				sk := o.ref(aws.ToString(a.SubnetId))
				_, sn, _ := strings.Cut(sk, "/")
				subs = append(subs, sn)
				deps = append(deps, sk)
			}
		}
		slices.Sort(subs)
		o.add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(rt.RouteTableId), Fields: map[string]string{"default": def, "subnets": strings.Join(subs, ",")}, DependsOn: deps})
	}

	sgs, err := describe(ctx, o, rec[kindSG], func(ctx context.Context, f []ec2types.Filter, ids []string) ([]ec2types.SecurityGroup, error) {
		out, err := s.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: f, GroupIds: ids})
		if err != nil {
			return nil, err
		}
		return out.SecurityGroups, nil
	}, func(v ec2types.SecurityGroup) string { return aws.ToString(v.GroupId) })
	if err != nil {
		return wrap("DescribeSecurityGroups", err)
	}
	for _, g := range sgs {
		k, n := o.resourceKey(tagsOf(g.Tags), kindSG, aws.ToString(g.GroupId))
		ingress := ""
		for _, perm := range g.IpPermissions {
			for _, pair := range perm.UserIdGroupPairs {
				if aws.ToString(pair.GroupId) == aws.ToString(g.GroupId) {
					ingress = "self"
				}
			}
		}
		o.add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(g.GroupId), Fields: map[string]string{"vpc": o.ref(aws.ToString(g.VpcId)), "ingress": ingress},
			DependsOn: vpcKey(aws.ToString(g.VpcId))})
	}
	return nil
}

// sweep adds every other EC2 resource tagged with the cluster's name, so nothing tagged for it
// goes unnoticed (delete fails naming it).
func (s *session) sweep(ctx context.Context, o *observation) error {
	pg := ec2.NewDescribeTagsPaginator(s.ec2, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{
		{Name: aws.String("key"), Values: []string{TagCluster}}, {Name: aws.String("value"), Values: []string{o.name}}}})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("ec2:DescribeTags: %s", apiMessage(err))
		}
		for _, t := range page.Tags {
			id := aws.ToString(t.ResourceId)
			if o.seen[id] {
				continue
			}
			if t.ResourceType == ec2types.ResourceTypeNatgateway {
				continue // a deleted NAT gateway keeps its tags for a while
			}
			o.add(cluster.Resource{Kind: "tagged", Name: id, ID: id, Fields: map[string]string{"type": string(t.ResourceType)}})
		}
	}
	return nil
}

// trustService reads the service principal of a role's trust policy (IAM returns it URL-encoded).
func trustService(doc string) string {
	if d, err := url.QueryUnescape(doc); err == nil {
		doc = d
	}
	var p struct {
		Statement []struct {
			Principal struct {
				Service any
			}
		}
	}
	if json.Unmarshal([]byte(doc), &p) != nil || len(p.Statement) == 0 {
		return ""
	}
	switch v := p.Statement[0].Principal.Service.(type) {
	case string:
		return v
	case []any:
		if len(v) > 0 {
			return fmt.Sprint(v[0])
		}
	}
	return ""
}

func (s *session) observeRole(ctx context.Context, o *observation, rn string) error {
	out, err := s.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(rn)})
	if apiCode(err) == "NoSuchEntity" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("iam:GetRole %s: %s", rn, apiMessage(err))
	}
	r := out.Role
	mine := false
	for _, t := range r.Tags {
		mine = mine || aws.ToString(t.Key) == TagCluster && aws.ToString(t.Value) == o.name
	}
	if !mine {
		o.out = append(o.out, cluster.Resource{Kind: kindRole, Name: rn, ID: aws.ToString(r.Arn), Foreign: true})
		return nil
	}
	var pols []string
	pg := iam.NewListAttachedRolePoliciesPaginator(s.iam, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(rn)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("iam:ListAttachedRolePolicies %s: %s", rn, apiMessage(err))
		}
		for _, ap := range page.AttachedPolicies {
			pols = append(pols, aws.ToString(ap.PolicyName))
		}
	}
	slices.Sort(pols)
	o.out = append(o.out, cluster.Resource{Kind: kindRole, Name: rn, ID: aws.ToString(r.Arn),
		Fields: map[string]string{"service": trustService(aws.ToString(r.AssumeRolePolicyDocument)), "policies": strings.Join(pols, ",")}})
	return nil
}

func (s *session) observeCluster(ctx context.Context, o *observation, c *spec.Cluster, sec Section) (*ekstypes.Cluster, bool, error) {
	name := o.name
	out, err := s.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)})
	if apiCode(err) == "ResourceNotFoundException" {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("eks:DescribeCluster %s: %s", name, apiMessage(err))
	}
	cl := out.Cluster
	if cl.Tags[TagCluster] != name {
		o.out = append(o.out, cluster.Resource{Kind: kindCluster, Name: name, ID: aws.ToString(cl.Arn), Foreign: true})
		return cl, true, nil
	}
	f := map[string]string{"version": aws.ToString(cl.Version)}
	var deps []string
	if vc := cl.ResourcesVpcConfig; vc != nil {
		f["endpointPublic"] = strconv.FormatBool(vc.EndpointPublicAccess)
		f["endpointPrivate"] = strconv.FormatBool(vc.EndpointPrivateAccess)
		cidrs := slices.Clone(vc.PublicAccessCidrs)
		slices.Sort(cidrs)
		f["publicCIDRs"] = strings.Join(cidrs, ",")
		ids := slices.Clone(vc.SubnetIds)
		if sec.VPCID != "" {
			f["subnets"] = strings.Join(ids, ",")
		}
		for _, id := range ids {
			if k := o.ref(id); k != id {
				deps = append(deps, k)
			}
		}
		for _, id := range vc.SecurityGroupIds {
			if k := o.ref(id); k != id {
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
	tags := maps.Clone(cl.Tags)
	delete(tags, TagCluster)
	f["tags"] = tagString(tags)
	deps = append(deps, key(kindRole, clusterRoleName(name)))
	o.add(cluster.Resource{Kind: kindCluster, Name: name, ID: aws.ToString(cl.Arn), Fields: f, DependsOn: deps})
	return cl, false, nil
}

var effects = map[ekstypes.TaintEffect]string{ekstypes.TaintEffectNoSchedule: "NoSchedule", ekstypes.TaintEffectNoExecute: "NoExecute", ekstypes.TaintEffectPreferNoSchedule: "PreferNoSchedule"}

func (s *session) observeGroups(ctx context.Context, o *observation, name string) error {
	ck := key(kindCluster, name)
	var subnetsAndRoutes []string
	for _, r := range o.out {
		if r.Kind == kindSubnet || r.Kind == kindRouteTable {
			subnetsAndRoutes = append(subnetsAndRoutes, r.Key())
		}
	}
	ngs := eks.NewListNodegroupsPaginator(s.eks, &eks.ListNodegroupsInput{ClusterName: aws.String(name)})
	for ngs.HasMorePages() {
		page, err := ngs.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("eks:ListNodegroups %s: %s", name, apiMessage(err))
		}
		for _, gn := range page.Nodegroups {
			out, err := s.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(name), NodegroupName: aws.String(gn)})
			if apiCode(err) == "ResourceNotFoundException" {
				continue
			}
			if err != nil {
				return fmt.Errorf("eks:DescribeNodegroup %s/%s: %s", name, gn, apiMessage(err))
			}
			o.add(cluster.Resource{Kind: kindNodeGroup, Name: gn, ID: aws.ToString(out.Nodegroup.NodegroupArn), Fields: nodegroupFields(out.Nodegroup),
				DependsOn: append([]string{ck, key(kindRole, nodeRoleName(name))}, subnetsAndRoutes...)})
		}
	}
	ads := eks.NewListAddonsPaginator(s.eks, &eks.ListAddonsInput{ClusterName: aws.String(name)})
	for ads.HasMorePages() {
		page, err := ads.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("eks:ListAddons %s: %s", name, apiMessage(err))
		}
		for _, an := range page.Addons {
			out, err := s.eks.DescribeAddon(ctx, &eks.DescribeAddonInput{ClusterName: aws.String(name), AddonName: aws.String(an)})
			if apiCode(err) == "ResourceNotFoundException" {
				continue
			}
			if err != nil {
				return fmt.Errorf("eks:DescribeAddon %s/%s: %s", name, an, apiMessage(err))
			}
			o.add(cluster.Resource{Kind: kindAddon, Name: an, ID: aws.ToString(out.Addon.AddonArn), Fields: map[string]string{"version": aws.ToString(out.Addon.AddonVersion)}, DependsOn: []string{ck}})
		}
	}
	return nil
}

func nodegroupFields(ng *ekstypes.Nodegroup) map[string]string {
	var labels, taints []string
	for k, v := range ng.Labels {
		labels = append(labels, k+"="+v)
	}
	for _, t := range ng.Taints {
		kv := aws.ToString(t.Key)
		if v := aws.ToString(t.Value); v != "" {
			kv += "=" + v
		}
		taints = append(taints, kv+":"+effects[t.Effect])
	}
	slices.Sort(labels)
	slices.Sort(taints)
	f := map[string]string{
		"instanceTypes": strings.Join(ng.InstanceTypes, ","),
		"capacity":      string(ng.CapacityType),
		"labels":        strings.Join(labels, ","),
		"taints":        strings.Join(taints, ","),
		"diskSize":      strconv.Itoa(int(aws.ToInt32(ng.DiskSize))),
		"version":       aws.ToString(ng.Version),
		"amiType":       string(ng.AmiType),
	}
	if sc := ng.ScalingConfig; sc != nil {
		f["min"] = strconv.Itoa(int(aws.ToInt32(sc.MinSize)))
		f["max"] = strconv.Itoa(int(aws.ToInt32(sc.MaxSize)))
		f["desired"] = strconv.Itoa(int(aws.ToInt32(sc.DesiredSize)))
	}
	return f
}

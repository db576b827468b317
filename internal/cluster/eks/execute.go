package eks

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Execute carries out one change. A resource is saved (save) the moment AWS returns its id,
// before any wait, so an interrupted apply finds it and never makes it twice.
func (p *Provider) Execute(ctx context.Context, c *spec.Cluster, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	sec := sectionOf(c)
	s, err := p.session(ctx, c, sec)
	if err != nil {
		return nil, err
	}
	x := &exec{p: p, s: s, c: c, sec: sec, name: c.Metadata.Name, save: save}
	kind, rname, _ := strings.Cut(ch.Key, "/")
	if ch.Action == cluster.Delete {
		err := x.delete(ctx, kind, rname, ch.Actual)
		if err == nil {
			p.remember(x.name, ch.Key, "")
		}
		return nil, err
	}
	if ch.Action == cluster.Replace && kind != kindNodeGroup && kind != kindKarpenter {
		var fs []string
		for _, f := range ch.Fields {
			if f.ForcesReplace {
				fs = append(fs, fmt.Sprintf("%s: %s -> %s", f.Field, f.Old, f.New))
			}
		}
		return nil, fmt.Errorf("%s cannot change in place (%s) and nuv does not replace it under a running cluster: delete the cluster (`nuv cluster delete %s`) and apply again, or keep the old value",
			ch.Key, strings.Join(fs, ", "), x.name)
	}
	r, errs := p.resolve(ctx, c)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %v", ch.Key, errs[0])
	}
	x.r = r
	res := *ch.Desired
	if ch.Actual != nil {
		res.ID = ch.Actual.ID
	}
	x.res = &res
	switch kind {
	case kindVPC:
		err = x.vpc(ctx)
	case kindSubnet:
		err = x.subnet(ctx, ch)
	case kindIGW:
		err = x.igw(ctx)
	case kindEIP:
		err = x.eip(ctx)
	case kindNAT:
		err = x.nat(ctx, rname)
	case kindRouteTable:
		err = x.routeTable(ctx, ch)
	case kindSG:
		err = x.securityGroup(ctx)
	case kindRole:
		err = x.role(ctx, ch)
	case kindCluster:
		err = x.cluster(ctx, ch)
	case kindKubeconfig:
		err = x.kubeconfig(ctx)
	case kindNodeGroup:
		err = x.nodegroup(ctx, ch, rname)
	case kindAddon:
		err = x.addon(ctx, ch, rname)
	case kindKarpenter:
		err = x.karpenter(ctx, ch, rname)
	default:
		err = fmt.Errorf("eks provider: cannot %s %s", ch.Action, ch.Key)
	}
	if err != nil {
		return nil, err
	}
	p.remember(x.name, ch.Key, res.ID)
	return &res, nil
}

// exec is one change being carried out.
type exec struct {
	p    *Provider
	s    *session
	c    *spec.Cluster
	sec  Section
	r    *resolved
	name string
	res  *cluster.Resource
	save func(cluster.Resource) error
}

// made records the new resource's id at once.
func (x *exec) made(id string) error {
	x.res.ID = id
	x.p.remember(x.name, x.res.Key(), id)
	return x.save(*x.res)
}

func (x *exec) id(key string) (string, error) { return x.p.id(x.name, key) }

// fail names the AWS operation and the resource of a failed call.
func (x *exec) fail(op, resource string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s on %s: %s", op, resource, apiMessage(err))
}

// tags are the cluster's tags plus nuv's own.
func (x *exec) tags() map[string]string {
	t := maps.Clone(map[string]string(x.c.Spec.Tags))
	if t == nil {
		t = map[string]string{}
	}
	t[TagCluster] = x.name
	return t
}

func (x *exec) ec2Tags(rt ec2types.ResourceType, extra ...string) []ec2types.TagSpecification {
	t := x.tags()
	t[TagResource] = x.res.Key()
	t["Name"] = nameTag(x.name, *x.res)
	for i := 0; i+1 < len(extra); i += 2 {
		t[extra[i]] = extra[i+1]
	}
	var out []ec2types.Tag
	for _, k := range slices.Sorted(maps.Keys(t)) {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(t[k])})
	}
	return []ec2types.TagSpecification{{ResourceType: rt, Tags: out}}
}

// nameTag is an EC2 resource's Name: the cluster's for its VPC, CLUSTER-KIND for the others named
// after the cluster, CLUSTER-NAME for the rest ("shop-private-us-east-1a").
func nameTag(clusterName string, r cluster.Resource) string {
	switch {
	case r.Kind == kindVPC:
		return clusterName
	case r.Name == clusterName:
		return clusterName + "-" + r.Kind
	}
	return clusterName + "-" + r.Name
}

func (x *exec) vpc(ctx context.Context) error {
	if x.res.ID == "" {
		out, err := x.s.ec2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String(x.res.Fields["cidr"]), TagSpecifications: x.ec2Tags(ec2types.ResourceTypeVpc)})
		if err != nil {
			return x.fail("ec2:CreateVpc", x.res.Key(), err)
		}
		if err := x.made(aws.ToString(out.Vpc.VpcId)); err != nil {
			return err
		}
	}
	for _, attr := range []*ec2.ModifyVpcAttributeInput{
		{VpcId: aws.String(x.res.ID), EnableDnsSupport: &ec2types.AttributeBooleanValue{Value: aws.Bool(true)}},
		{VpcId: aws.String(x.res.ID), EnableDnsHostnames: &ec2types.AttributeBooleanValue{Value: aws.Bool(true)}},
	} {
		if _, err := x.s.ec2.ModifyVpcAttribute(ctx, attr); err != nil {
			return x.fail("ec2:ModifyVpcAttribute", x.res.Key(), err)
		}
	}
	return x.p.waitVPC(ctx, x.s, x.res.ID)
}

func (x *exec) subnet(ctx context.Context, ch cluster.Change) error {
	f := x.res.Fields
	public := f["public"] == "true"
	if x.res.ID == "" {
		vpc, err := x.id(key(kindVPC, x.name))
		if err != nil {
			return err
		}
		out, err := x.s.ec2.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: aws.String(vpc), CidrBlock: aws.String(f["cidr"]), AvailabilityZone: aws.String(f["zone"]),
			TagSpecifications: x.ec2Tags(ec2types.ResourceTypeSubnet, subnetTags(x.name, public)...)})
		if err != nil {
			return x.fail("ec2:CreateSubnet", x.res.Key(), err)
		}
		if err := x.made(aws.ToString(out.Subnet.SubnetId)); err != nil {
			return err
		}
	}
	if ch.Actual == nil || ch.Actual.Fields["public"] != f["public"] {
		if _, err := x.s.ec2.ModifySubnetAttribute(ctx, &ec2.ModifySubnetAttributeInput{SubnetId: aws.String(x.res.ID),
			MapPublicIpOnLaunch: &ec2types.AttributeBooleanValue{Value: aws.Bool(public)}}); err != nil {
			return x.fail("ec2:ModifySubnetAttribute", x.res.Key(), err)
		}
	}
	return x.p.waitSubnet(ctx, x.s, x.res.ID)
}

// subnetTags are the tags of a subnet besides nuv's: the load balancer role Kubernetes' cloud
// controllers look for, and on private subnets Karpenter's discovery tag (its nodes go there).
func subnetTags(clusterName string, public bool) []string {
	if public {
		return []string{"kubernetes.io/role/elb", "1"}
	}
	return []string{"kubernetes.io/role/internal-elb", "1", "karpenter.sh/discovery", clusterName}
}

func (x *exec) igw(ctx context.Context) error {
	vpc, err := x.id(key(kindVPC, x.name))
	if err != nil {
		return err
	}
	if x.res.ID == "" {
		out, err := x.s.ec2.CreateInternetGateway(ctx, &ec2.CreateInternetGatewayInput{TagSpecifications: x.ec2Tags(ec2types.ResourceTypeInternetGateway)})
		if err != nil {
			return x.fail("ec2:CreateInternetGateway", x.res.Key(), err)
		}
		if err := x.made(aws.ToString(out.InternetGateway.InternetGatewayId)); err != nil {
			return err
		}
	}
	_, err = x.s.ec2.AttachInternetGateway(ctx, &ec2.AttachInternetGatewayInput{InternetGatewayId: aws.String(x.res.ID), VpcId: aws.String(vpc)})
	if err != nil && apiCode(err) != "Resource.AlreadyAssociated" {
		return x.fail("ec2:AttachInternetGateway", x.res.Key(), err)
	}
	return nil
}

func (x *exec) eip(ctx context.Context) error {
	out, err := x.s.ec2.AllocateAddress(ctx, &ec2.AllocateAddressInput{Domain: ec2types.DomainTypeVpc, TagSpecifications: x.ec2Tags(ec2types.ResourceTypeElasticIp)})
	if err != nil {
		return x.fail("ec2:AllocateAddress", x.res.Key(), err)
	}
	return x.made(aws.ToString(out.AllocationId))
}

func (x *exec) nat(ctx context.Context, zone string) error {
	if x.res.ID == "" {
		sub, err := x.id(x.res.Fields["subnet"])
		if err != nil {
			return err
		}
		eip, err := x.id(x.res.Fields["eip"])
		if err != nil {
			return err
		}
		out, err := x.s.ec2.CreateNatGateway(ctx, &ec2.CreateNatGatewayInput{SubnetId: aws.String(sub), AllocationId: aws.String(eip),
			TagSpecifications: x.ec2Tags(ec2types.ResourceTypeNatgateway)})
		if err != nil {
			return x.fail("ec2:CreateNatGateway", x.res.Key(), err)
		}
		if err := x.made(aws.ToString(out.NatGateway.NatGatewayId)); err != nil {
			return err
		}
	}
	return x.p.waitNAT(ctx, x.s, x.res.ID, true)
}

func (x *exec) routeTable(ctx context.Context, ch cluster.Change) error {
	f := x.res.Fields
	if x.res.ID == "" {
		vpc, err := x.id(key(kindVPC, x.name))
		if err != nil {
			return err
		}
		out, err := x.s.ec2.CreateRouteTable(ctx, &ec2.CreateRouteTableInput{VpcId: aws.String(vpc), TagSpecifications: x.ec2Tags(ec2types.ResourceTypeRouteTable)})
		if err != nil {
			return x.fail("ec2:CreateRouteTable", x.res.Key(), err)
		}
		if err := x.made(aws.ToString(out.RouteTable.RouteTableId)); err != nil {
			return err
		}
	}
	cur, err := x.s.ec2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{RouteTableIds: []string{x.res.ID}})
	if err != nil || len(cur.RouteTables) == 0 {
		return x.fail("ec2:DescribeRouteTables", x.res.Key(), err)
	}
	rt := cur.RouteTables[0]
	// The default route: to the internet gateway, a NAT gateway, or none.
	target := ""
	if f["default"] != "" {
		if target, err = x.id(f["default"]); err != nil {
			return err
		}
	}
	have := ""
	for _, r := range rt.Routes {
		if aws.ToString(r.DestinationCidrBlock) == "0.0.0.0/0" {
			have = aws.ToString(r.GatewayId) + aws.ToString(r.NatGatewayId)
		}
	}
	if have != target && have != "" {
		if _, err := x.s.ec2.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(x.res.ID), DestinationCidrBlock: aws.String("0.0.0.0/0")}); err != nil {
			return x.fail("ec2:DeleteRoute", x.res.Key(), err)
		}
	}
	if have != target && target != "" {
		in := &ec2.CreateRouteInput{RouteTableId: aws.String(x.res.ID), DestinationCidrBlock: aws.String("0.0.0.0/0")}
		if strings.HasPrefix(f["default"], kindNAT+"/") {
			if err := x.p.waitNAT(ctx, x.s, target, true); err != nil {
				return err
			}
			in.NatGatewayId = aws.String(target)
		} else {
			in.GatewayId = aws.String(target)
		}
		if _, err := x.s.ec2.CreateRoute(ctx, in); err != nil {
			return x.fail("ec2:CreateRoute", x.res.Key(), err)
		}
	}
	// Associations: every subnet the spec lists, no other.
	want := map[string]bool{}
	for _, sn := range strings.Split(f["subnets"], ",") {
		if sn == "" {
			continue
		}
		id, err := x.id(key(kindSubnet, sn))
		if err != nil {
			return err
		}
		want[id] = true
	}
	for _, a := range rt.Associations {
		id := aws.ToString(a.SubnetId)
		if id == "" || aws.ToBool(a.Main) {
			continue
		}
		if want[id] {
			delete(want, id)
			continue
		}
		if _, err := x.s.ec2.DisassociateRouteTable(ctx, &ec2.DisassociateRouteTableInput{AssociationId: a.RouteTableAssociationId}); err != nil {
			return x.fail("ec2:DisassociateRouteTable", x.res.Key(), err)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if _, err := x.s.ec2.AssociateRouteTable(ctx, &ec2.AssociateRouteTableInput{RouteTableId: aws.String(x.res.ID), SubnetId: aws.String(id)}); err != nil {
			return x.fail("ec2:AssociateRouteTable", x.res.Key()+" and "+id, err)
		}
	}
	return nil
}

func (x *exec) securityGroup(ctx context.Context) error {
	if x.res.ID == "" {
		vpc, err := x.id(key(kindVPC, x.name))
		if err != nil {
			return err
		}
		out, err := x.s.ec2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("nuv-" + x.name), VpcId: aws.String(vpc),
			Description:       aws.String("nuv cluster " + x.name + ": control plane and nodes"),
			TagSpecifications: x.ec2Tags(ec2types.ResourceTypeSecurityGroup, "karpenter.sh/discovery", x.name)})
		if err != nil {
			return x.fail("ec2:CreateSecurityGroup", x.res.Key(), err)
		}
		if err := x.made(aws.ToString(out.GroupId)); err != nil {
			return err
		}
	}
	_, err := x.s.ec2.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(x.res.ID),
		IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("-1"), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(x.res.ID),
			Description: aws.String("everything between the control plane and the nodes")}}}}})
	if err != nil && apiCode(err) != "InvalidPermission.Duplicate" {
		return x.fail("ec2:AuthorizeSecurityGroupIngress", x.res.Key(), err)
	}
	return nil
}

func trustPolicy(service string) string {
	return `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"` + service + `"},"Action":"sts:AssumeRole"}]}`
}

func (x *exec) role(ctx context.Context, ch cluster.Change) error {
	rn := x.res.Name
	if x.res.ID == "" {
		var tags []iamtypes.Tag
		t := x.tags()
		for _, k := range slices.Sorted(maps.Keys(t)) {
			tags = append(tags, iamtypes.Tag{Key: aws.String(k), Value: aws.String(t[k])})
		}
		out, err := x.s.iam.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(rn), AssumeRolePolicyDocument: aws.String(trustPolicy(x.res.Fields["service"])),
			Description: aws.String("nuv cluster " + x.name), Tags: tags})
		if err != nil {
			return x.fail("iam:CreateRole", "role "+rn, err)
		}
		if err := x.made(aws.ToString(out.Role.Arn)); err != nil {
			return err
		}
	}
	have := map[string]bool{}
	if ch.Actual != nil {
		for _, pn := range strings.Split(ch.Actual.Fields["policies"], ",") {
			have[pn] = pn != ""
		}
	}
	want := strings.Split(x.res.Fields["policies"], ",")
	for _, pn := range want {
		if have[pn] {
			continue
		}
		arn := "arn:aws:iam::aws:policy/" + pn
		if _, err := x.s.iam.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String(rn), PolicyArn: aws.String(arn)}); err != nil {
			return x.fail("iam:AttachRolePolicy", "role "+rn+" (policy "+pn+")", err)
		}
	}
	for pn, ok := range have {
		if ok && !slices.Contains(want, pn) {
			if _, err := x.s.iam.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(rn), PolicyArn: aws.String("arn:aws:iam::aws:policy/" + pn)}); err != nil {
				return x.fail("iam:DetachRolePolicy", "role "+rn+" (policy "+pn+")", err)
			}
		}
	}
	return nil
}

func boolField(f map[string]string, k string) bool { return f[k] == "true" }

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
		id, err := x.id(key(kindSubnet, s.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

func (x *exec) cluster(ctx context.Context, ch cluster.Change) error {
	f := x.res.Fields
	if x.res.ID == "" {
		roleArn, err := x.id(key(kindRole, clusterRoleName(x.name)))
		if err != nil {
			return err
		}
		subnets, err := x.subnetIDs(false)
		if err != nil {
			return err
		}
		vc := &ekstypes.VpcConfigRequest{SubnetIds: subnets, EndpointPublicAccess: aws.Bool(boolField(f, "endpointPublic")),
			EndpointPrivateAccess: aws.Bool(boolField(f, "endpointPrivate")), PublicAccessCidrs: strings.Split(f["publicCIDRs"], ",")}
		if x.sec.VPCID == "" {
			sg, err := x.id(key(kindSG, x.name))
			if err != nil {
				return err
			}
			vc.SecurityGroupIds = []string{sg}
		}
		in := &eks.CreateClusterInput{Name: aws.String(x.name), Version: aws.String(f["version"]), RoleArn: aws.String(roleArn),
			ResourcesVpcConfig: vc, Logging: loggingOf(f["logging"]), Tags: x.tags()}
		if cidr := f["serviceCIDR"]; cidr != "" {
			in.KubernetesNetworkConfig = &ekstypes.KubernetesNetworkConfigRequest{ServiceIpv4Cidr: aws.String(cidr)}
		}
		var out *eks.CreateClusterOutput
		// A role made a moment ago may not be assumable by EKS yet (IAM is eventually consistent).
		err = x.p.retryWhile(ctx, x.s, 2*time.Minute, func() error {
			var err error
			out, err = x.s.eks.CreateCluster(ctx, in)
			return err
		}, func(err error) bool {
			return apiCode(err) == "InvalidParameterException" && strings.Contains(apiMessage(err), "role")
		})
		if err != nil {
			return x.fail("eks:CreateCluster", x.res.Key(), err)
		}
		if err := x.made(aws.ToString(out.Cluster.Arn)); err != nil {
			return err
		}
		_, err = x.p.waitCluster(ctx, x.s, x.name, true)
		return err
	}
	if _, err := x.p.waitCluster(ctx, x.s, x.name, true); err != nil {
		return err
	}
	old := map[string]string{}
	if ch.Actual != nil {
		old = ch.Actual.Fields
	}
	// The control plane goes up one minor version at a time, as EKS requires.
	if old["version"] != f["version"] {
		for _, v := range upgradePath(old["version"], f["version"]) {
			out, err := x.s.eks.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String(x.name), Version: aws.String(v)})
			if err != nil {
				return x.fail("eks:UpdateClusterVersion", x.res.Key()+" (to "+v+")", err)
			}
			if err := x.p.waitUpdate(ctx, x.s, x.res.Key()+" upgrade to "+v, x.name, aws.ToString(out.Update.Id), "", ""); err != nil {
				return err
			}
		}
	}
	if old["endpointPublic"] != f["endpointPublic"] || old["endpointPrivate"] != f["endpointPrivate"] || old["publicCIDRs"] != f["publicCIDRs"] {
		out, err := x.s.eks.UpdateClusterConfig(ctx, &eks.UpdateClusterConfigInput{Name: aws.String(x.name), ResourcesVpcConfig: &ekstypes.VpcConfigRequest{
			EndpointPublicAccess: aws.Bool(boolField(f, "endpointPublic")), EndpointPrivateAccess: aws.Bool(boolField(f, "endpointPrivate")),
			PublicAccessCidrs: strings.Split(f["publicCIDRs"], ",")}})
		if err != nil {
			return x.fail("eks:UpdateClusterConfig", x.res.Key()+" (endpoint access)", err)
		}
		if err := x.p.waitUpdate(ctx, x.s, x.res.Key()+" endpoint access", x.name, aws.ToString(out.Update.Id), "", ""); err != nil {
			return err
		}
	}
	if old["logging"] != f["logging"] {
		out, err := x.s.eks.UpdateClusterConfig(ctx, &eks.UpdateClusterConfigInput{Name: aws.String(x.name), Logging: loggingOf(f["logging"])})
		if err != nil {
			return x.fail("eks:UpdateClusterConfig", x.res.Key()+" (logging)", err)
		}
		if err := x.p.waitUpdate(ctx, x.s, x.res.Key()+" logging", x.name, aws.ToString(out.Update.Id), "", ""); err != nil {
			return err
		}
	}
	if old["tags"] != f["tags"] {
		want := x.tags()
		var gone []string
		for _, kv := range strings.Split(old["tags"], ",") {
			if k, _, _ := strings.Cut(kv, "="); k != "" {
				if _, ok := want[k]; !ok {
					gone = append(gone, k)
				}
			}
		}
		if len(gone) > 0 {
			if _, err := x.s.eks.UntagResource(ctx, &eks.UntagResourceInput{ResourceArn: aws.String(x.res.ID), TagKeys: gone}); err != nil {
				return x.fail("eks:UntagResource", x.res.Key(), err)
			}
		}
		if _, err := x.s.eks.TagResource(ctx, &eks.TagResourceInput{ResourceArn: aws.String(x.res.ID), Tags: want}); err != nil {
			return x.fail("eks:TagResource", x.res.Key(), err)
		}
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

func (x *exec) kubeconfig(ctx context.Context) error {
	out, err := x.p.waitCluster(ctx, x.s, x.name, true)
	if err != nil {
		return err
	}
	cl := out.Cluster
	if cl.CertificateAuthority == nil || aws.ToString(cl.Endpoint) == "" {
		return fmt.Errorf("eks-cluster/%s is ACTIVE without an endpoint or certificate authority", x.name)
	}
	b, err := x.p.kubeconfig(x.name, aws.ToString(cl.Endpoint), aws.ToString(cl.CertificateAuthority.Data), x.s.cfg.Region, x.s.endpoint, x.sec.Profile)
	if err != nil {
		return err
	}
	if err := x.p.writeKubeconfig(x.name, b); err != nil {
		return err
	}
	x.res.ID = x.p.KubeconfigPath(x.name)
	return nil
}

func effectOf(e string) ekstypes.TaintEffect {
	for k, v := range effects {
		if v == e {
			return k
		}
	}
	return ekstypes.TaintEffect(e)
}

func parseList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func labelsOf(s string) map[string]string {
	m := map[string]string{}
	for _, kv := range parseList(s) {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func taintsOf(s string) []ekstypes.Taint {
	var out []ekstypes.Taint
	for _, t := range parseList(s) {
		pt, err := spec.ParseTaint(t)
		if err != nil {
			continue
		}
		tt := ekstypes.Taint{Key: aws.String(pt.Key), Effect: effectOf(pt.Effect)}
		if pt.Value != "" {
			tt.Value = aws.String(pt.Value)
		}
		out = append(out, tt)
	}
	return out
}

func atoi32(s string) *int32 {
	n, _ := strconv.Atoi(s)
	return aws.Int32(int32(n))
}

func (x *exec) nodegroup(ctx context.Context, ch cluster.Change, ng string) error {
	f := x.res.Fields
	if ch.Action == cluster.Replace {
		if err := x.delete(ctx, kindNodeGroup, ng, ch.Actual); err != nil {
			return err
		}
		x.res.ID = ""
	}
	if x.res.ID == "" {
		if _, err := x.p.waitCluster(ctx, x.s, x.name, true); err != nil {
			return err
		}
		role, err := x.id(key(kindRole, nodeRoleName(x.name)))
		if err != nil {
			return err
		}
		subnets, err := x.subnetIDs(true)
		if err != nil {
			return err
		}
		in := &eks.CreateNodegroupInput{ClusterName: aws.String(x.name), NodegroupName: aws.String(ng), NodeRole: aws.String(role), Subnets: subnets,
			InstanceTypes: parseList(f["instanceTypes"]), CapacityType: ekstypes.CapacityTypes(f["capacity"]), AmiType: ekstypes.AMITypes(f["amiType"]),
			ScalingConfig: &ekstypes.NodegroupScalingConfig{MinSize: atoi32(f["min"]), MaxSize: atoi32(f["max"]), DesiredSize: atoi32(f["desired"])},
			Labels:        labelsOf(f["labels"]), Taints: taintsOf(f["taints"]), DiskSize: atoi32(f["diskSize"]), Version: aws.String(f["version"]), Tags: x.tags()}
		if len(in.Labels) == 0 {
			in.Labels = nil
		}
		var out *eks.CreateNodegroupOutput
		err = x.p.retryWhile(ctx, x.s, 2*time.Minute, func() error {
			var err error
			out, err = x.s.eks.CreateNodegroup(ctx, in)
			return err
		}, func(err error) bool {
			return apiCode(err) == "InvalidParameterException" && strings.Contains(apiMessage(err), "role")
		})
		if err != nil {
			return x.fail("eks:CreateNodegroup", x.res.Key(), err)
		}
		if err := x.made(aws.ToString(out.Nodegroup.NodegroupArn)); err != nil {
			return err
		}
		return x.p.waitNodegroup(ctx, x.s, x.name, ng, true)
	}
	if err := x.p.waitNodegroup(ctx, x.s, x.name, ng, true); err != nil {
		return err
	}
	old := ch.Actual.Fields
	in := &eks.UpdateNodegroupConfigInput{ClusterName: aws.String(x.name), NodegroupName: aws.String(ng)}
	changed := false
	if old["min"] != f["min"] || old["max"] != f["max"] || old["desired"] != f["desired"] {
		in.ScalingConfig = &ekstypes.NodegroupScalingConfig{MinSize: atoi32(f["min"]), MaxSize: atoi32(f["max"]), DesiredSize: atoi32(f["desired"])}
		changed = true
	}
	if old["labels"] != f["labels"] {
		have, want := labelsOf(old["labels"]), labelsOf(f["labels"])
		lu := &ekstypes.UpdateLabelsPayload{AddOrUpdateLabels: map[string]string{}}
		for k, v := range want {
			if hv, ok := have[k]; !ok || hv != v {
				lu.AddOrUpdateLabels[k] = v
			}
		}
		for k := range have {
			if _, ok := want[k]; !ok {
				lu.RemoveLabels = append(lu.RemoveLabels, k)
			}
		}
		in.Labels, changed = lu, true
	}
	if old["taints"] != f["taints"] {
		have, want := parseList(old["taints"]), parseList(f["taints"])
		tu := &ekstypes.UpdateTaintsPayload{}
		for _, t := range want {
			if !slices.Contains(have, t) {
				tu.AddOrUpdateTaints = append(tu.AddOrUpdateTaints, taintsOf(t)...)
			}
		}
		for _, t := range have {
			if !slices.Contains(want, t) {
				tu.RemoveTaints = append(tu.RemoveTaints, taintsOf(t)...)
			}
		}
		in.Taints, changed = tu, true
	}
	if changed {
		out, err := x.s.eks.UpdateNodegroupConfig(ctx, in)
		if err != nil {
			return x.fail("eks:UpdateNodegroupConfig", x.res.Key(), err)
		}
		if err := x.p.waitUpdate(ctx, x.s, x.res.Key()+" config", x.name, aws.ToString(out.Update.Id), ng, ""); err != nil {
			return err
		}
	}
	if old["version"] != f["version"] {
		out, err := x.s.eks.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: aws.String(x.name), NodegroupName: aws.String(ng), Version: aws.String(f["version"])})
		if err != nil {
			return x.fail("eks:UpdateNodegroupVersion", x.res.Key()+" (to "+f["version"]+")", err)
		}
		if err := x.p.waitUpdate(ctx, x.s, x.res.Key()+" upgrade to "+f["version"], x.name, aws.ToString(out.Update.Id), ng, ""); err != nil {
			return err
		}
	}
	return nil
}

func (x *exec) addon(ctx context.Context, ch cluster.Change, name string) error {
	v := x.res.Fields["version"]
	if x.res.ID == "" {
		if _, err := x.p.waitCluster(ctx, x.s, x.name, true); err != nil {
			return err
		}
		out, err := x.s.eks.CreateAddon(ctx, &eks.CreateAddonInput{ClusterName: aws.String(x.name), AddonName: aws.String(name), AddonVersion: aws.String(v),
			ResolveConflicts: ekstypes.ResolveConflictsOverwrite, Tags: x.tags()})
		if err != nil {
			return x.fail("eks:CreateAddon", x.res.Key(), err)
		}
		if err := x.made(aws.ToString(out.Addon.AddonArn)); err != nil {
			return err
		}
		return x.p.waitAddon(ctx, x.s, x.name, name, true)
	}
	if err := x.p.waitAddon(ctx, x.s, x.name, name, true); err != nil {
		return err
	}
	out, err := x.s.eks.UpdateAddon(ctx, &eks.UpdateAddonInput{ClusterName: aws.String(x.name), AddonName: aws.String(name), AddonVersion: aws.String(v),
		ResolveConflicts: ekstypes.ResolveConflictsOverwrite})
	if err != nil {
		return x.fail("eks:UpdateAddon", x.res.Key()+" (to "+v+")", err)
	}
	return x.p.waitUpdate(ctx, x.s, x.res.Key()+" to "+v, x.name, aws.ToString(out.Update.Id), "", name)
}

// delete removes one resource and waits until it is gone; one already gone is done.
func (x *exec) delete(ctx context.Context, kind, rname string, actual *cluster.Resource) error {
	id := ""
	if actual != nil {
		id = actual.ID
	}
	notFound := func(err error) bool {
		c := apiCode(err)
		return err == nil || strings.Contains(c, "NotFound") || c == "NoSuchEntity" || c == "ResourceNotFoundException"
	}
	k := key(kind, rname)
	ec2Retry := func(op string, f func() error) error {
		// Dependencies just deleted can take a moment to let go (AWS's DependencyViolation).
		err := x.p.retryWhile(ctx, x.s, 3*time.Minute, f, func(err error) bool {
			c := apiCode(err)
			return c == "DependencyViolation" || c == "InvalidIPAddress.InUse" || c == "AuthFailure"
		})
		if notFound(err) {
			return nil
		}
		return x.fail(op, k+" ("+id+")", err)
	}
	switch kind {
	case kindAddon:
		_, err := x.s.eks.DeleteAddon(ctx, &eks.DeleteAddonInput{ClusterName: aws.String(x.name), AddonName: aws.String(rname)})
		if notFound(err) && err != nil {
			return nil
		}
		if err != nil {
			return x.fail("eks:DeleteAddon", k, err)
		}
		return x.p.waitAddon(ctx, x.s, x.name, rname, false)
	case kindNodeGroup:
		_, err := x.s.eks.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: aws.String(x.name), NodegroupName: aws.String(rname)})
		if notFound(err) && err != nil {
			return nil
		}
		if err != nil && apiCode(err) != "ResourceInUseException" { // already DELETING
			return x.fail("eks:DeleteNodegroup", k, err)
		}
		return x.p.waitNodegroup(ctx, x.s, x.name, rname, false)
	case kindKarpenter:
		return x.deleteKarpenter(ctx, rname)
	case kindKubeconfig:
		if err := os.Remove(x.p.KubeconfigPath(x.name)); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	case kindCluster:
		_, err := x.s.eks.DeleteCluster(ctx, &eks.DeleteClusterInput{Name: aws.String(x.name)})
		if notFound(err) && err != nil {
			return nil
		}
		if err != nil && !(apiCode(err) == "ResourceInUseException" && strings.Contains(apiMessage(err), "DELETING")) {
			return x.fail("eks:DeleteCluster", k, err)
		}
		_, err = x.p.waitCluster(ctx, x.s, x.name, false)
		return err
	case kindRole:
		pg := iam.NewListAttachedRolePoliciesPaginator(x.s.iam, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(rname)})
		for pg.HasMorePages() {
			page, err := pg.NextPage(ctx)
			if notFound(err) && err != nil {
				return nil
			}
			if err != nil {
				return x.fail("iam:ListAttachedRolePolicies", "role "+rname, err)
			}
			for _, ap := range page.AttachedPolicies {
				if _, err := x.s.iam.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(rname), PolicyArn: ap.PolicyArn}); err != nil && !notFound(err) {
					return x.fail("iam:DetachRolePolicy", "role "+rname, err)
				}
			}
		}
		if _, err := x.s.iam.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(rname)}); !notFound(err) {
			return x.fail("iam:DeleteRole", "role "+rname, err)
		}
		return nil
	case kindSG:
		return ec2Retry("ec2:DeleteSecurityGroup", func() error {
			_, err := x.s.ec2.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(id)})
			return err
		})
	case kindRouteTable:
		out, err := x.s.ec2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{RouteTableIds: []string{id}})
		if err != nil {
			if notFound(err) {
				return nil
			}
			return x.fail("ec2:DescribeRouteTables", k, err)
		}
		for _, rt := range out.RouteTables {
			for _, a := range rt.Associations {
				if aws.ToBool(a.Main) {
					continue
				}
				if _, err := x.s.ec2.DisassociateRouteTable(ctx, &ec2.DisassociateRouteTableInput{AssociationId: a.RouteTableAssociationId}); !notFound(err) {
					return x.fail("ec2:DisassociateRouteTable", k, err)
				}
			}
		}
		return ec2Retry("ec2:DeleteRouteTable", func() error {
			_, err := x.s.ec2.DeleteRouteTable(ctx, &ec2.DeleteRouteTableInput{RouteTableId: aws.String(id)})
			return err
		})
	case kindNAT:
		_, err := x.s.ec2.DeleteNatGateway(ctx, &ec2.DeleteNatGatewayInput{NatGatewayId: aws.String(id)})
		if notFound(err) && err != nil {
			return nil
		}
		if err != nil {
			return x.fail("ec2:DeleteNatGateway", k, err)
		}
		return x.p.waitNAT(ctx, x.s, id, false)
	case kindEIP:
		return ec2Retry("ec2:ReleaseAddress", func() error {
			_, err := x.s.ec2.ReleaseAddress(ctx, &ec2.ReleaseAddressInput{AllocationId: aws.String(id)})
			return err
		})
	case kindIGW:
		out, err := x.s.ec2.DescribeInternetGateways(ctx, &ec2.DescribeInternetGatewaysInput{InternetGatewayIds: []string{id}})
		if err != nil {
			if notFound(err) {
				return nil
			}
			return x.fail("ec2:DescribeInternetGateways", k, err)
		}
		for _, g := range out.InternetGateways {
			for _, a := range g.Attachments {
				if err := ec2Retry("ec2:DetachInternetGateway", func() error {
					_, err := x.s.ec2.DetachInternetGateway(ctx, &ec2.DetachInternetGatewayInput{InternetGatewayId: aws.String(id), VpcId: a.VpcId})
					return err
				}); err != nil {
					return err
				}
			}
		}
		return ec2Retry("ec2:DeleteInternetGateway", func() error {
			_, err := x.s.ec2.DeleteInternetGateway(ctx, &ec2.DeleteInternetGatewayInput{InternetGatewayId: aws.String(id)})
			return err
		})
	case kindSubnet:
		return ec2Retry("ec2:DeleteSubnet", func() error {
			_, err := x.s.ec2.DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: aws.String(id)})
			return err
		})
	case kindVPC:
		return ec2Retry("ec2:DeleteVpc", func() error {
			_, err := x.s.ec2.DeleteVpc(ctx, &ec2.DeleteVpcInput{VpcId: aws.String(id)})
			return err
		})
	}
	typ := ""
	if actual != nil {
		typ = actual.Fields["type"]
	}
	return fmt.Errorf("EC2 %s %s is tagged %s=%s but is not a part nuv makes; nuv leaves it alone: delete it (or its tag) by hand", typ, id, TagCluster, x.name)
}

package awsnet

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/zclconf/go-cty/cty"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
)

// DefaultVPCCIDR is the VPC network when spec.networking.vpcCIDR is not set.
const DefaultVPCCIDR = "10.0.0.0/16"

// Subnet is one subnet nuv makes: private subnets hold the nodes, public ones the NAT gateways and
// load balancers.
type Subnet struct {
	Zone   string
	CIDR   string
	Public bool
}

// Name is the subnet's resource name: "private-us-east-1a", "public-us-east-1b".
func (s Subnet) Name() string {
	if s.Public {
		return "public-" + s.Zone
	}
	return "private-" + s.Zone
}

// CarveSubnets places a private and a public subnet in each zone. Unless given explicitly, their
// networks are carved from the VPC's: the VPC is cut in eight equal parts, private subnets take
// the first ones and public subnets the ones from the fifth on (a /16 gives /19 subnets, room for
// 8190 addresses each). Every problem is returned with its field path: an invalid or misaligned
// CIDR, a VPC too small to carve, a subnet outside the VPC, two subnets that overlap.
func CarveSubnets(vpcCIDR string, zones []string, public, private []string) ([]Subnet, []spec.FieldError) {
	var errs []spec.FieldError
	fail := func(path, f string, a ...any) { errs = append(errs, spec.Errorf(path, f, a...)) }
	vpcPath := "spec.networking.vpcCIDR"
	if vpcCIDR == "" {
		vpcCIDR = DefaultVPCCIDR
	}
	vpc, err := netip.ParsePrefix(vpcCIDR)
	if err != nil || !vpc.Addr().Is4() {
		fail(vpcPath, "invalid IPv4 CIDR %q", vpcCIDR)
		return nil, errs
	}
	if vpc.Masked() != vpc {
		fail(vpcPath, "%q has host bits set (did you mean %s?)", vpcCIDR, vpc.Masked())
		return nil, errs
	}
	if vpc.Bits() < 16 || vpc.Bits() > 24 {
		fail(vpcPath, "%s: an EKS VPC that nuv carves into subnets is a /16 to a /24 (AWS allows /16 to /28 per VPC)", vpcCIDR)
		return nil, errs
	}
	var out []Subnet
	type placed struct {
		path string
		pfx  netip.Prefix
	}
	var all []placed
	for _, pub := range []bool{false, true} {
		given, field, first := private, "privateSubnetCIDRs", 0
		if pub {
			given, field, first = public, "publicSubnetCIDRs", 4
		}
		path := "spec.eks." + field
		if len(given) > 0 && len(given) != len(zones) {
			fail(path, "%d CIDRs for %d zones: give one per zone (%v)", len(given), len(zones), zones)
			continue
		}
		for i, z := range zones {
			var pfx netip.Prefix
			p := fmt.Sprintf("%s[%d]", path, i)
			if len(given) > 0 {
				pfx, err = netip.ParsePrefix(given[i])
				if err != nil || !pfx.Addr().Is4() {
					fail(p, "invalid IPv4 CIDR %q", given[i])
					continue
				}
				if pfx.Masked() != pfx {
					fail(p, "%q has host bits set (did you mean %s?)", given[i], pfx.Masked())
					continue
				}
				if !vpc.Contains(pfx.Addr()) || pfx.Bits() < vpc.Bits() {
					fail(p, "%s is not inside the VPC %s", pfx, vpc)
					continue
				}
				if pfx.Bits() > 28 {
					fail(p, "%s: AWS subnets are /16 to /28", pfx)
					continue
				}
			} else {
				pfx = nth(vpc, vpc.Bits()+3, first+i)
				p = vpcPath
			}
			for _, o := range all {
				if o.pfx.Overlaps(pfx) {
					fail(p, "subnet %s overlaps subnet %s (%s)", pfx, o.pfx, o.path)
				}
			}
			all = append(all, placed{p, pfx})
			out = append(out, Subnet{Zone: z, CIDR: pfx.String(), Public: pub})
		}
	}
	return out, errs
}

// nth is the i-th subnet of length bits inside p.
func nth(p netip.Prefix, bits, i int) netip.Prefix {
	a := p.Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += uint32(i) << (32 - bits)
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), bits)
}

// The network kinds: VPC, subnets, internet and NAT gateways, addresses, route tables and
// the security group; each one's create, delete, Terraform form, and their observation.

// VPC makes the VPC (DNS support and hostnames on) and waits for it.
func (x *Exec) VPC(ctx context.Context, _ cluster.Change) error {
	if x.Res.ID == "" {
		out, err := x.S.EC2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String(x.Res.Fields["cidr"]), TagSpecifications: x.EC2Tags(ec2types.ResourceTypeVpc)})
		if err != nil {
			return x.Fail("ec2:CreateVpc", x.Res.Key(), err)
		}
		if err := x.Made(aws.ToString(out.Vpc.VpcId)); err != nil {
			return err
		}
	}
	for _, attr := range []*ec2.ModifyVpcAttributeInput{
		{VpcId: aws.String(x.Res.ID), EnableDnsSupport: &ec2types.AttributeBooleanValue{Value: aws.Bool(true)}},
		{VpcId: aws.String(x.Res.ID), EnableDnsHostnames: &ec2types.AttributeBooleanValue{Value: aws.Bool(true)}},
	} {
		if _, err := x.S.EC2.ModifyVpcAttribute(ctx, attr); err != nil {
			return x.Fail("ec2:ModifyVpcAttribute", x.Res.Key(), err)
		}
	}
	return x.S.WaitVPC(ctx, x.Log, x.Res.ID)
}

// Subnet makes a subnet (public ones map public addresses on launch) and waits for it.
func (x *Exec) Subnet(ctx context.Context, ch cluster.Change) error {
	f := x.Res.Fields
	public := f["public"] == "true"
	if x.Res.ID == "" {
		vpc, err := x.ID(Key(KindVPC, x.Name))
		if err != nil {
			return err
		}
		out, err := x.S.EC2.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: aws.String(vpc), CidrBlock: aws.String(f["cidr"]), AvailabilityZone: aws.String(f["zone"]),
			TagSpecifications: x.EC2Tags(ec2types.ResourceTypeSubnet, subnetTags(x.Name, public)...)})
		if err != nil {
			return x.Fail("ec2:CreateSubnet", x.Res.Key(), err)
		}
		if err := x.Made(aws.ToString(out.Subnet.SubnetId)); err != nil {
			return err
		}
	}
	if ch.Actual == nil || ch.Actual.Fields["public"] != f["public"] {
		if _, err := x.S.EC2.ModifySubnetAttribute(ctx, &ec2.ModifySubnetAttributeInput{SubnetId: aws.String(x.Res.ID),
			MapPublicIpOnLaunch: &ec2types.AttributeBooleanValue{Value: aws.Bool(public)}}); err != nil {
			return x.Fail("ec2:ModifySubnetAttribute", x.Res.Key(), err)
		}
	}
	return x.S.WaitSubnet(ctx, x.Log, x.Res.ID)
}

// subnetTags are the tags of a subnet besides nuv's: the load balancer role Kubernetes' cloud
// controllers look for, and on private subnets Karpenter's discovery tag (its nodes go there).
func subnetTags(clusterName string, public bool) []string {
	if public {
		return []string{"kubernetes.io/role/elb", "1"}
	}
	return []string{"kubernetes.io/role/internal-elb", "1", "karpenter.sh/discovery", clusterName}
}

// IGW makes the internet gateway and attaches it to the VPC.
func (x *Exec) IGW(ctx context.Context, _ cluster.Change) error {
	vpc, err := x.ID(Key(KindVPC, x.Name))
	if err != nil {
		return err
	}
	if x.Res.ID == "" {
		out, err := x.S.EC2.CreateInternetGateway(ctx, &ec2.CreateInternetGatewayInput{TagSpecifications: x.EC2Tags(ec2types.ResourceTypeInternetGateway)})
		if err != nil {
			return x.Fail("ec2:CreateInternetGateway", x.Res.Key(), err)
		}
		if err := x.Made(aws.ToString(out.InternetGateway.InternetGatewayId)); err != nil {
			return err
		}
	}
	_, err = x.S.EC2.AttachInternetGateway(ctx, &ec2.AttachInternetGatewayInput{InternetGatewayId: aws.String(x.Res.ID), VpcId: aws.String(vpc)})
	if err != nil && APICode(err) != "Resource.AlreadyAssociated" {
		return x.Fail("ec2:AttachInternetGateway", x.Res.Key(), err)
	}
	return nil
}

// EIP allocates an elastic address.
func (x *Exec) EIP(ctx context.Context, _ cluster.Change) error {
	out, err := x.S.EC2.AllocateAddress(ctx, &ec2.AllocateAddressInput{Domain: ec2types.DomainTypeVpc, TagSpecifications: x.EC2Tags(ec2types.ResourceTypeElasticIp)})
	if err != nil {
		return x.Fail("ec2:AllocateAddress", x.Res.Key(), err)
	}
	return x.Made(aws.ToString(out.AllocationId))
}

// NAT makes a NAT gateway and waits until it is available.
func (x *Exec) NAT(ctx context.Context, _ cluster.Change) error {
	if x.Res.ID == "" {
		sub, err := x.ID(x.Res.Fields["subnet"])
		if err != nil {
			return err
		}
		eip, err := x.ID(x.Res.Fields["eip"])
		if err != nil {
			return err
		}
		out, err := x.S.EC2.CreateNatGateway(ctx, &ec2.CreateNatGatewayInput{SubnetId: aws.String(sub), AllocationId: aws.String(eip),
			TagSpecifications: x.EC2Tags(ec2types.ResourceTypeNatgateway)})
		if err != nil {
			return x.Fail("ec2:CreateNatGateway", x.Res.Key(), err)
		}
		if err := x.Made(aws.ToString(out.NatGateway.NatGatewayId)); err != nil {
			return err
		}
	}
	return x.S.WaitNAT(ctx, x.Log, x.Res.ID, true)
}

// RouteTable makes a route table, or brings one to its default route and subnets.
func (x *Exec) RouteTable(ctx context.Context, ch cluster.Change) error {
	f := x.Res.Fields
	if x.Res.ID == "" {
		vpc, err := x.ID(Key(KindVPC, x.Name))
		if err != nil {
			return err
		}
		out, err := x.S.EC2.CreateRouteTable(ctx, &ec2.CreateRouteTableInput{VpcId: aws.String(vpc), TagSpecifications: x.EC2Tags(ec2types.ResourceTypeRouteTable)})
		if err != nil {
			return x.Fail("ec2:CreateRouteTable", x.Res.Key(), err)
		}
		if err := x.Made(aws.ToString(out.RouteTable.RouteTableId)); err != nil {
			return err
		}
	}
	cur, err := x.S.EC2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{RouteTableIds: []string{x.Res.ID}})
	if err != nil || len(cur.RouteTables) == 0 {
		return x.Fail("ec2:DescribeRouteTables", x.Res.Key(), err)
	}
	rt := cur.RouteTables[0]
	// The default route: to the internet gateway, a NAT gateway, or none.
	target := ""
	if f["default"] != "" {
		if target, err = x.ID(f["default"]); err != nil {
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
		if _, err := x.S.EC2.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(x.Res.ID), DestinationCidrBlock: aws.String("0.0.0.0/0")}); err != nil {
			return x.Fail("ec2:DeleteRoute", x.Res.Key(), err)
		}
	}
	if have != target && target != "" {
		in := &ec2.CreateRouteInput{RouteTableId: aws.String(x.Res.ID), DestinationCidrBlock: aws.String("0.0.0.0/0")}
		if strings.HasPrefix(f["default"], KindNAT+"/") {
			if err := x.S.WaitNAT(ctx, x.Log, target, true); err != nil {
				return err
			}
			in.NatGatewayId = aws.String(target)
		} else {
			in.GatewayId = aws.String(target)
		}
		if _, err := x.S.EC2.CreateRoute(ctx, in); err != nil {
			return x.Fail("ec2:CreateRoute", x.Res.Key(), err)
		}
	}
	// Associations: every subnet the spec lists, no other.
	want := map[string]bool{}
	for _, sn := range strings.Split(f["subnets"], ",") {
		if sn == "" {
			continue
		}
		id, err := x.ID(Key(KindSubnet, sn))
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
		if _, err := x.S.EC2.DisassociateRouteTable(ctx, &ec2.DisassociateRouteTableInput{AssociationId: a.RouteTableAssociationId}); err != nil {
			return x.Fail("ec2:DisassociateRouteTable", x.Res.Key(), err)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if _, err := x.S.EC2.AssociateRouteTable(ctx, &ec2.AssociateRouteTableInput{RouteTableId: aws.String(x.Res.ID), SubnetId: aws.String(id)}); err != nil {
			return x.Fail("ec2:AssociateRouteTable", x.Res.Key()+" and "+id, err)
		}
	}
	return nil
}

// SecurityGroup makes the cluster's security group: everything between its members.
func (x *Exec) SecurityGroup(ctx context.Context, _ cluster.Change) error {
	if x.Res.ID == "" {
		vpc, err := x.ID(Key(KindVPC, x.Name))
		if err != nil {
			return err
		}
		out, err := x.S.EC2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("nuv-" + x.Name), VpcId: aws.String(vpc),
			Description:       aws.String("nuv cluster " + x.Name + ": control plane and nodes"),
			TagSpecifications: x.EC2Tags(ec2types.ResourceTypeSecurityGroup, "karpenter.sh/discovery", x.Name)})
		if err != nil {
			return x.Fail("ec2:CreateSecurityGroup", x.Res.Key(), err)
		}
		if err := x.Made(aws.ToString(out.GroupId)); err != nil {
			return err
		}
	}
	_, err := x.S.EC2.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(x.Res.ID),
		IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("-1"), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(x.Res.ID),
			Description: aws.String("everything between the control plane and the nodes")}}}}})
	if err != nil && APICode(err) != "InvalidPermission.Duplicate" {
		return x.Fail("ec2:AuthorizeSecurityGroupIngress", x.Res.Key(), err)
	}
	return nil
}

// DeleteVPC deletes the VPC.
func (x *Exec) DeleteVPC(ctx context.Context, ch cluster.Change) error {
	id := ActualID(ch)
	return x.EC2Retry(ctx, ch, "ec2:DeleteVpc", func() error {
		_, err := x.S.EC2.DeleteVpc(ctx, &ec2.DeleteVpcInput{VpcId: aws.String(id)})
		return err
	})
}

// DeleteSubnet deletes a subnet.
func (x *Exec) DeleteSubnet(ctx context.Context, ch cluster.Change) error {
	id := ActualID(ch)
	return x.EC2Retry(ctx, ch, "ec2:DeleteSubnet", func() error {
		_, err := x.S.EC2.DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: aws.String(id)})
		return err
	})
}

// DeleteIGW detaches and deletes the internet gateway.
func (x *Exec) DeleteIGW(ctx context.Context, ch cluster.Change) error {
	id := ActualID(ch)
	k := ch.Key
	out, err := x.S.EC2.DescribeInternetGateways(ctx, &ec2.DescribeInternetGatewaysInput{InternetGatewayIds: []string{id}})
	if err != nil {
		if NotFound(err) {
			return nil
		}
		return x.Fail("ec2:DescribeInternetGateways", k, err)
	}
	for _, g := range out.InternetGateways {
		for _, a := range g.Attachments {
			if err := x.EC2Retry(ctx, ch, "ec2:DetachInternetGateway", func() error {
				_, err := x.S.EC2.DetachInternetGateway(ctx, &ec2.DetachInternetGatewayInput{InternetGatewayId: aws.String(id), VpcId: a.VpcId})
				return err
			}); err != nil {
				return err
			}
		}
	}
	return x.EC2Retry(ctx, ch, "ec2:DeleteInternetGateway", func() error {
		_, err := x.S.EC2.DeleteInternetGateway(ctx, &ec2.DeleteInternetGatewayInput{InternetGatewayId: aws.String(id)})
		return err
	})
}

// DeleteEIP releases an elastic address.
func (x *Exec) DeleteEIP(ctx context.Context, ch cluster.Change) error {
	id := ActualID(ch)
	return x.EC2Retry(ctx, ch, "ec2:ReleaseAddress", func() error {
		_, err := x.S.EC2.ReleaseAddress(ctx, &ec2.ReleaseAddressInput{AllocationId: aws.String(id)})
		return err
	})
}

// DeleteNAT deletes a NAT gateway and waits until it is gone.
func (x *Exec) DeleteNAT(ctx context.Context, ch cluster.Change) error {
	id := ActualID(ch)
	k := ch.Key
	_, err := x.S.EC2.DeleteNatGateway(ctx, &ec2.DeleteNatGatewayInput{NatGatewayId: aws.String(id)})
	if NotFound(err) && err != nil {
		return nil
	}
	if err != nil {
		return x.Fail("ec2:DeleteNatGateway", k, err)
	}
	return x.S.WaitNAT(ctx, x.Log, id, false)
}

// DeleteRouteTable disassociates and deletes a route table.
func (x *Exec) DeleteRouteTable(ctx context.Context, ch cluster.Change) error {
	id := ActualID(ch)
	k := ch.Key
	out, err := x.S.EC2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{RouteTableIds: []string{id}})
	if err != nil {
		if NotFound(err) {
			return nil
		}
		return x.Fail("ec2:DescribeRouteTables", k, err)
	}
	for _, rt := range out.RouteTables {
		for _, a := range rt.Associations {
			if aws.ToBool(a.Main) {
				continue
			}
			if _, err := x.S.EC2.DisassociateRouteTable(ctx, &ec2.DisassociateRouteTableInput{AssociationId: a.RouteTableAssociationId}); !NotFound(err) {
				return x.Fail("ec2:DisassociateRouteTable", k, err)
			}
		}
	}
	return x.EC2Retry(ctx, ch, "ec2:DeleteRouteTable", func() error {
		_, err := x.S.EC2.DeleteRouteTable(ctx, &ec2.DeleteRouteTableInput{RouteTableId: aws.String(id)})
		return err
	})
}

// DeleteSecurityGroup deletes a security group.
func (x *Exec) DeleteSecurityGroup(ctx context.Context, ch cluster.Change) error {
	id := ActualID(ch)
	return x.EC2Retry(ctx, ch, "ec2:DeleteSecurityGroup", func() error {
		_, err := x.S.EC2.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(id)})
		return err
	})
}

// VPC writes the VPC.
func (w *TF) VPC(r cluster.Resource) error {
	f := r.Fields
	b := w.Block("aws_vpc", r.Key())
	b.SetAttributeValue("cidr_block", cty.StringVal(f["cidr"]))
	b.SetAttributeValue("enable_dns_support", cty.True)
	b.SetAttributeValue("enable_dns_hostnames", cty.True)
	b.SetAttributeValue("tags", w.NameTags(r))
	return nil
}

// Subnet writes a subnet.
func (w *TF) Subnet(r cluster.Resource) error {
	f := r.Fields
	name := w.C.Metadata.Name
	b := w.Block("aws_subnet", r.Key())
	vpc, err := w.Ref(Key(KindVPC, name), "id")
	if err != nil {
		return err
	}
	b.SetAttributeRaw("vpc_id", vpc)
	b.SetAttributeValue("cidr_block", cty.StringVal(f["cidr"]))
	b.SetAttributeValue("availability_zone", cty.StringVal(f["zone"]))
	b.SetAttributeValue("map_public_ip_on_launch", cty.BoolVal(f["public"] == "true"))
	b.SetAttributeValue("tags", w.NameTags(r, subnetTags(name, f["public"] == "true")...))
	return nil
}

// IGW writes the internet gateway.
func (w *TF) IGW(r cluster.Resource) error {
	name := w.C.Metadata.Name
	b := w.Block("aws_internet_gateway", r.Key())
	vpc, err := w.Ref(Key(KindVPC, name), "id")
	if err != nil {
		return err
	}
	b.SetAttributeRaw("vpc_id", vpc)
	b.SetAttributeValue("tags", w.NameTags(r))
	return nil
}

// EIP writes an elastic address.
func (w *TF) EIP(r cluster.Resource) error {
	b := w.Block("aws_eip", r.Key())
	b.SetAttributeValue("domain", cty.StringVal("vpc"))
	b.SetAttributeValue("tags", w.NameTags(r))
	return nil
}

// NAT writes a NAT gateway.
func (w *TF) NAT(r cluster.Resource) error {
	f := r.Fields
	name := w.C.Metadata.Name
	b := w.Block("aws_nat_gateway", r.Key())
	eip, err := w.Ref(f["eip"], "id")
	if err != nil {
		return err
	}
	sub, err := w.Ref(f["subnet"], "id")
	if err != nil {
		return err
	}
	b.SetAttributeRaw("allocation_id", eip)
	b.SetAttributeRaw("subnet_id", sub)
	b.SetAttributeValue("tags", w.NameTags(r))
	b.SetAttributeRaw("depends_on", w.Addrs(Key(KindIGW, name)))
	return nil
}

// RouteTable writes a route table with its subnets' associations.
func (w *TF) RouteTable(r cluster.Resource) error {
	f := r.Fields
	name := w.C.Metadata.Name
	b := w.Block("aws_route_table", r.Key())
	vpc, err := w.Ref(Key(KindVPC, name), "id")
	if err != nil {
		return err
	}
	b.SetAttributeRaw("vpc_id", vpc)
	if d := f["default"]; d != "" {
		rb := b.AppendNewBlock("route", nil).Body()
		rb.SetAttributeValue("cidr_block", cty.StringVal("0.0.0.0/0"))
		target, err := w.Ref(d, "id")
		if err != nil {
			return err
		}
		if strings.HasPrefix(d, KindNAT+"/") {
			rb.SetAttributeRaw("nat_gateway_id", target)
		} else {
			rb.SetAttributeRaw("gateway_id", target)
		}
	}
	b.SetAttributeValue("tags", w.NameTags(r))
	rt, _ := w.Ref(r.Key(), "id")
	for _, sn := range kit.ParseList(f["subnets"]) {
		sk := Key(KindSubnet, sn)
		sub, err := w.Ref(sk, "id")
		if err != nil {
			return err
		}
		w.Body.AppendNewline()
		ab := w.Body.AppendNewBlock("resource", []string{"aws_route_table_association", tfgen.Name(sn)}).Body()
		ab.SetAttributeRaw("subnet_id", sub)
		ab.SetAttributeRaw("route_table_id", rt)
	}
	return nil
}

// SecurityGroup writes the cluster's security group.
func (w *TF) SecurityGroup(r cluster.Resource) error {
	name := w.C.Metadata.Name
	b := w.Block("aws_security_group", r.Key())
	vpc, err := w.Ref(Key(KindVPC, name), "id")
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
	b.SetAttributeValue("tags", w.NameTags(r, "karpenter.sh/discovery", name))
	return nil
}

// observeNetwork finds the cluster's network: its VPC (and one named like it that nuv did not
// make), subnets, gateways, route tables and security groups; rec holds the recorded IDs by kind.
func (s *Session) ObserveNetwork(ctx context.Context, o *Observation, rec map[string][]string) error {
	for _, observe := range []func(context.Context, *Observation, map[string][]string) error{
		s.observeVPCs, s.observeSubnets, s.observeGateways, s.observeRouteTables, s.observeSecurityGroups,
	} {
		if err := observe(ctx, o, rec); err != nil {
			return err
		}
	}
	return nil
}

// wrapEC2 is err of EC2's operation op, with the service's message.
func (s *Session) wrapEC2(op string, err error) error {
	return fmt.Errorf("ec2:%s: %s", op, APIMessage(err))
}

// vpcKeys is the key of VPC id as a dependency (none for a VPC the observation does not know).
func (o *Observation) vpcKeys(id string) []string {
	if k := o.Ref(id); k != id {
		return []string{k}
	}
	return nil
}

// observeVPCs finds the cluster's VPC, and a VPC named like the cluster's that nuv did not make: a
// conflict, never touched.
func (s *Session) observeVPCs(ctx context.Context, o *Observation, rec map[string][]string) error {
	vpcs, err := Describe(ctx, o, rec[KindVPC], func(ctx context.Context, f []ec2types.Filter, ids []string) ([]ec2types.Vpc, error) {
		out, err := s.EC2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{Filters: f, VpcIds: ids})
		if err != nil {
			return nil, err
		}
		return out.Vpcs, nil
	}, func(v ec2types.Vpc) string { return aws.ToString(v.VpcId) })
	if err != nil {
		return s.wrapEC2("DescribeVpcs", err)
	}
	for _, v := range vpcs {
		t := TagsOf(v.Tags)
		k, n := o.ResourceKey(t, KindVPC, aws.ToString(v.VpcId))
		o.Add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(v.VpcId), Fields: map[string]string{"cidr": aws.ToString(v.CidrBlock)}})
	}
	named, err := s.EC2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{Filters: []ec2types.Filter{{Name: aws.String("tag:Name"), Values: []string{o.Name}}}})
	if err != nil {
		return s.wrapEC2("DescribeVpcs", err)
	}
	for _, v := range named.Vpcs {
		if TagsOf(v.Tags)[TagCluster] != o.Name && !o.Seen[aws.ToString(v.VpcId)] {
			o.Out = append(o.Out, cluster.Resource{Kind: KindVPC, Name: o.Name, ID: aws.ToString(v.VpcId), Foreign: true})
		}
	}
	return nil
}

// observeSubnets finds the cluster's subnets.
func (s *Session) observeSubnets(ctx context.Context, o *Observation, rec map[string][]string) error {
	subnets, err := Describe(ctx, o, rec[KindSubnet], func(ctx context.Context, f []ec2types.Filter, ids []string) ([]ec2types.Subnet, error) {
		out, err := s.EC2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: f, SubnetIds: ids})
		if err != nil {
			return nil, err
		}
		return out.Subnets, nil
	}, func(v ec2types.Subnet) string { return aws.ToString(v.SubnetId) })
	if err != nil {
		return s.wrapEC2("DescribeSubnets", err)
	}
	for _, sn := range subnets {
		k, n := o.ResourceKey(TagsOf(sn.Tags), KindSubnet, aws.ToString(sn.SubnetId))
		o.Add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(sn.SubnetId), Fields: map[string]string{
			"cidr": aws.ToString(sn.CidrBlock), "zone": aws.ToString(sn.AvailabilityZone), "public": kit.Bool(aws.ToBool(sn.MapPublicIpOnLaunch))},
			DependsOn: o.vpcKeys(aws.ToString(sn.VpcId))})
	}
	return nil
}

// observeGateways finds the cluster's internet gateway, elastic addresses and NAT gateways.
func (s *Session) observeGateways(ctx context.Context, o *Observation, rec map[string][]string) error {
	igws, err := Describe(ctx, o, rec[KindIGW], func(ctx context.Context, f []ec2types.Filter, ids []string) ([]ec2types.InternetGateway, error) {
		out, err := s.EC2.DescribeInternetGateways(ctx, &ec2.DescribeInternetGatewaysInput{Filters: f, InternetGatewayIds: ids})
		if err != nil {
			return nil, err
		}
		return out.InternetGateways, nil
	}, func(v ec2types.InternetGateway) string { return aws.ToString(v.InternetGatewayId) })
	if err != nil {
		return s.wrapEC2("DescribeInternetGateways", err)
	}
	for _, g := range igws {
		k, n := o.ResourceKey(TagsOf(g.Tags), KindIGW, aws.ToString(g.InternetGatewayId))
		vpc, attachment := "", ""
		for _, a := range g.Attachments {
			vpc, attachment = o.Ref(aws.ToString(a.VpcId)), aws.ToString(a.VpcId)
		}
		o.Add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(g.InternetGatewayId), Fields: map[string]string{"vpc": vpc}, DependsOn: o.vpcKeys(attachment)})
	}
	igwKeys := o.KeysOf(KindIGW)

	eips, err := Describe(ctx, o, rec[KindEIP], func(ctx context.Context, f []ec2types.Filter, ids []string) ([]ec2types.Address, error) {
		out, err := s.EC2.DescribeAddresses(ctx, &ec2.DescribeAddressesInput{Filters: f, AllocationIds: ids})
		if err != nil {
			return nil, err
		}
		return out.Addresses, nil
	}, func(v ec2types.Address) string { return aws.ToString(v.AllocationId) })
	if err != nil {
		return s.wrapEC2("DescribeAddresses", err)
	}
	for _, a := range eips {
		k, n := o.ResourceKey(TagsOf(a.Tags), KindEIP, aws.ToString(a.AllocationId))
		o.Add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(a.AllocationId), Fields: map[string]string{"domain": string(a.Domain)}, DependsOn: igwKeys})
	}

	nats, err := Describe(ctx, o, rec[KindNAT], func(ctx context.Context, f []ec2types.Filter, ids []string) ([]ec2types.NatGateway, error) {
		out, err := s.EC2.DescribeNatGateways(ctx, &ec2.DescribeNatGatewaysInput{Filter: f, NatGatewayIds: ids})
		if err != nil {
			return nil, err
		}
		return out.NatGateways, nil
	}, func(v ec2types.NatGateway) string { return aws.ToString(v.NatGatewayId) })
	if err != nil {
		return s.wrapEC2("DescribeNatGateways", err)
	}
	for _, g := range nats {
		if g.State == ec2types.NatGatewayStateDeleted {
			continue
		}
		k, n := o.ResourceKey(TagsOf(g.Tags), KindNAT, aws.ToString(g.NatGatewayId))
		eip := ""
		for _, a := range g.NatGatewayAddresses {
			eip = o.Ref(aws.ToString(a.AllocationId))
		}
		sub := o.Ref(aws.ToString(g.SubnetId))
		deps := append([]string{sub}, igwKeys...)
		if eip != "" {
			deps = append(deps, eip)
		}
		o.Add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(g.NatGatewayId), Fields: map[string]string{"subnet": sub, "eip": eip}, DependsOn: deps})
	}
	return nil
}

// observeRouteTables finds the cluster's route tables with their default routes and subnets.
func (s *Session) observeRouteTables(ctx context.Context, o *Observation, rec map[string][]string) error {
	rts, err := Describe(ctx, o, rec[KindRouteTable], func(ctx context.Context, f []ec2types.Filter, ids []string) ([]ec2types.RouteTable, error) {
		out, err := s.EC2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: f, RouteTableIds: ids})
		if err != nil {
			return nil, err
		}
		return out.RouteTables, nil
	}, func(v ec2types.RouteTable) string { return aws.ToString(v.RouteTableId) })
	if err != nil {
		return s.wrapEC2("DescribeRouteTables", err)
	}
	for _, rt := range rts {
		k, n := o.ResourceKey(TagsOf(rt.Tags), KindRouteTable, aws.ToString(rt.RouteTableId))
		def := ""
		deps := o.vpcKeys(aws.ToString(rt.VpcId))
		for _, r := range rt.Routes {
			if aws.ToString(r.DestinationCidrBlock) != "0.0.0.0/0" {
				continue
			}
			if r.GatewayId != nil {
				def = o.Ref(aws.ToString(r.GatewayId))
			}
			if r.NatGatewayId != nil {
				def = o.Ref(aws.ToString(r.NatGatewayId))
			}
			deps = append(deps, def)
		}
		var subs []string
		for _, a := range rt.Associations {
			if a.SubnetId != nil {
				sk := o.Ref(aws.ToString(a.SubnetId))
				_, sn, _ := strings.Cut(sk, "/")
				subs = append(subs, sn)
				deps = append(deps, sk)
			}
		}
		slices.Sort(subs)
		o.Add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(rt.RouteTableId), Fields: map[string]string{"default": def, "subnets": strings.Join(subs, ",")}, DependsOn: deps})
	}
	return nil
}

// observeSecurityGroups finds the cluster's security groups (with their rules when the
// observation asks for them).
func (s *Session) observeSecurityGroups(ctx context.Context, o *Observation, rec map[string][]string) error {
	sgs, err := Describe(ctx, o, rec[KindSG], func(ctx context.Context, f []ec2types.Filter, ids []string) ([]ec2types.SecurityGroup, error) {
		out, err := s.EC2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: f, GroupIds: ids})
		if err != nil {
			return nil, err
		}
		return out.SecurityGroups, nil
	}, func(v ec2types.SecurityGroup) string { return aws.ToString(v.GroupId) })
	if err != nil {
		return s.wrapEC2("DescribeSecurityGroups", err)
	}
	// The groups' keys first: a self-managed cluster's rules name other groups by key.
	for _, g := range sgs {
		k, n := o.ResourceKey(TagsOf(g.Tags), KindSG, aws.ToString(g.GroupId))
		o.Keys[aws.ToString(g.GroupId)] = Key(k, n)
	}
	for _, g := range sgs {
		k, n := o.ResourceKey(TagsOf(g.Tags), KindSG, aws.ToString(g.GroupId))
		ingress := ""
		for _, perm := range g.IpPermissions {
			for _, pair := range perm.UserIdGroupPairs {
				if aws.ToString(pair.GroupId) == aws.ToString(g.GroupId) {
					ingress = "self"
				}
			}
		}
		deps := o.vpcKeys(aws.ToString(g.VpcId))
		if o.Rules != nil {
			ingress = o.Rules(o, g.IpPermissions)
			// A group whose rules name another group goes before it on delete (AWS refuses to
			// delete a group that another group's rule names).
			var named []string
			for _, perm := range g.IpPermissions {
				for _, pair := range perm.UserIdGroupPairs {
					if id := aws.ToString(pair.GroupId); id != aws.ToString(g.GroupId) && o.Keys[id] != "" {
						named = append(named, o.Keys[id])
					}
				}
			}
			slices.Sort(named)
			deps = append(deps, slices.Compact(named)...)
		}
		o.Add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(g.GroupId), Fields: map[string]string{"vpc": o.Ref(aws.ToString(g.VpcId)), "ingress": ingress},
			DependsOn: deps})
	}
	return nil
}

// sweep adds every other EC2 resource tagged with the cluster's name, so nothing tagged for it
// goes unnoticed (delete fails naming it).
func (s *Session) Sweep(ctx context.Context, o *Observation) error {
	pg := ec2.NewDescribeTagsPaginator(s.EC2, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{
		{Name: aws.String("key"), Values: []string{TagCluster}}, {Name: aws.String("value"), Values: []string{o.Name}}}})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("ec2:DescribeTags: %s", APIMessage(err))
		}
		for _, t := range page.Tags {
			id := aws.ToString(t.ResourceId)
			if o.Seen[id] {
				continue
			}
			if t.ResourceType == ec2types.ResourceTypeNatgateway {
				continue // a deleted NAT gateway keeps its tags for a while
			}
			if t.ResourceType == ec2types.ResourceTypeInstance && o.Rules != nil {
				continue // so does a terminated instance; the live ones are observed
			}
			o.Add(cluster.Resource{Kind: "tagged", Name: id, ID: id, Fields: map[string]string{"type": string(t.ResourceType)}})
		}
	}
	return nil
}

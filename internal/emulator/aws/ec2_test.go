package aws

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

func tagSpec(rt ec2types.ResourceType, kv ...string) []ec2types.TagSpecification {
	var tags []ec2types.Tag
	for i := 0; i+1 < len(kv); i += 2 {
		tags = append(tags, ec2types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
	}
	return []ec2types.TagSpecification{{ResourceType: rt, Tags: tags}}
}

// TestEC2Network builds and tears down a cluster network the way the eks provider does, through
// the SDK's EC2 client, checking AWS's answers and refusals on the way.
func TestEC2Network(t *testing.T) {
	defer catch(t)
	e := startEmulator(t, "", 300*time.Millisecond)
	c := ec2.NewFromConfig(e.Cfg)
	ctx := context.Background()

	azs := must(c.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{}))
	if len(azs.AvailabilityZones) != 6 || aws.ToString(azs.AvailabilityZones[0].ZoneName) != "us-east-1a" ||
		aws.ToString(azs.AvailabilityZones[0].ZoneId) != "use1-az1" || azs.AvailabilityZones[0].State != ec2types.AvailabilityZoneStateAvailable {
		t.Fatalf("zones: %+v", azs.AvailabilityZones)
	}

	_, err := c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/8")})
	wantCode(t, err, "InvalidVpc.Range")
	vpc := must(c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16"), TagSpecifications: tagSpec(ec2types.ResourceTypeVpc, "nuv.dev/cluster", "a", "Name", "a-vpc")})).Vpc
	vpcID := aws.ToString(vpc.VpcId)
	if !regexp.MustCompile(`^vpc-0[0-9a-f]{16}$`).MatchString(vpcID) || len(vpc.Tags) != 2 {
		t.Fatalf("vpc %+v", vpc)
	}
	must(c.ModifyVpcAttribute(ctx, &ec2.ModifyVpcAttributeInput{VpcId: vpc.VpcId, EnableDnsHostnames: &ec2types.AttributeBooleanValue{Value: aws.Bool(true)}}))
	attr := must(c.DescribeVpcAttribute(ctx, &ec2.DescribeVpcAttributeInput{VpcId: vpc.VpcId, Attribute: ec2types.VpcAttributeNameEnableDnsHostnames}))
	if !aws.ToBool(attr.EnableDnsHostnames.Value) {
		t.Fatal("enableDnsHostnames not set")
	}

	// Subnets: two public, two private, in two zones; CIDR errors as EC2 names them.
	var subnets []string
	for i, spec := range []struct{ cidr, az string }{{"10.0.0.0/20", "us-east-1a"}, {"10.0.16.0/20", "us-east-1b"}, {"10.0.128.0/20", "us-east-1a"}, {"10.0.144.0/20", "us-east-1b"}} {
		sn := must(c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.VpcId, CidrBlock: aws.String(spec.cidr), AvailabilityZone: aws.String(spec.az),
			TagSpecifications: tagSpec(ec2types.ResourceTypeSubnet, "nuv.dev/cluster", "a", "tier", []string{"public", "public", "private", "private"}[i])})).Subnet
		if aws.ToInt32(sn.AvailableIpAddressCount) != 4091 || aws.ToString(sn.AvailabilityZone) != spec.az {
			t.Fatalf("subnet %+v", sn)
		}
		subnets = append(subnets, aws.ToString(sn.SubnetId))
	}
	_, err = c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.VpcId, CidrBlock: aws.String("10.0.8.0/24")})
	wantCode(t, err, "InvalidSubnet.Conflict")
	_, err = c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.VpcId, CidrBlock: aws.String("10.1.0.0/24")})
	wantCode(t, err, "InvalidSubnet.Range")
	_, err = c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.VpcId, CidrBlock: aws.String("10.0.200.0/24"), AvailabilityZone: aws.String("eu-west-1a")})
	wantCode(t, err, "InvalidParameterValue")
	_, err = c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: aws.String("vpc-0123456789abcdef0"), CidrBlock: aws.String("10.0.200.0/24")})
	wantCode(t, err, "InvalidVpcID.NotFound")
	must(c.ModifySubnetAttribute(ctx, &ec2.ModifySubnetAttributeInput{SubnetId: aws.String(subnets[0]), MapPublicIpOnLaunch: &ec2types.AttributeBooleanValue{Value: aws.Bool(true)}}))
	pub := must(c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{{Name: aws.String("tag:tier"), Values: []string{"public"}}, {Name: aws.String("vpc-id"), Values: []string{vpcID}}}}))
	if len(pub.Subnets) != 2 {
		t.Fatalf("public subnets: %d", len(pub.Subnets))
	}

	// Internet gateway and a NAT gateway with an Elastic IP.
	igw := must(c.CreateInternetGateway(ctx, &ec2.CreateInternetGatewayInput{TagSpecifications: tagSpec(ec2types.ResourceTypeInternetGateway, "nuv.dev/cluster", "a")})).InternetGateway
	must(c.AttachInternetGateway(ctx, &ec2.AttachInternetGatewayInput{InternetGatewayId: igw.InternetGatewayId, VpcId: vpc.VpcId}))
	_, err = c.AttachInternetGateway(ctx, &ec2.AttachInternetGatewayInput{InternetGatewayId: igw.InternetGatewayId, VpcId: vpc.VpcId})
	wantCode(t, err, "Resource.AlreadyAssociated")
	eip := must(c.AllocateAddress(ctx, &ec2.AllocateAddressInput{Domain: ec2types.DomainTypeVpc, TagSpecifications: tagSpec(ec2types.ResourceTypeElasticIp, "nuv.dev/cluster", "a")}))
	nat := must(c.CreateNatGateway(ctx, &ec2.CreateNatGatewayInput{SubnetId: aws.String(subnets[0]), AllocationId: eip.AllocationId,
		TagSpecifications: tagSpec(ec2types.ResourceTypeNatgateway, "nuv.dev/cluster", "a")})).NatGateway
	if nat.State != ec2types.NatGatewayStatePending {
		t.Fatalf("new NAT gateway is %s, want pending", nat.State)
	}
	if err := ec2.NewNatGatewayAvailableWaiter(c, func(o *ec2.NatGatewayAvailableWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 200 * time.Millisecond
	}).
		Wait(ctx, &ec2.DescribeNatGatewaysInput{NatGatewayIds: []string{aws.ToString(nat.NatGatewayId)}}, 10*time.Second); err != nil {
		t.Fatalf("NAT gateway never available: %v", err)
	}
	_, err = c.ReleaseAddress(ctx, &ec2.ReleaseAddressInput{AllocationId: eip.AllocationId})
	wantCode(t, err, "InvalidIPAddress.InUse")
	if a := must(c.DescribeAddresses(ctx, &ec2.DescribeAddressesInput{AllocationIds: []string{aws.ToString(eip.AllocationId)}})).Addresses; len(a) != 1 || a[0].AssociationId == nil || a[0].NetworkInterfaceId == nil {
		t.Fatalf("address of the NAT gateway: %+v", a)
	}
	if g := must(c.DescribeInternetGateways(ctx, &ec2.DescribeInternetGatewaysInput{Filters: []ec2types.Filter{{Name: aws.String("attachment.vpc-id"), Values: []string{vpcID}}}})).InternetGateways; len(g) != 1 ||
		aws.ToString(g[0].Attachments[0].VpcId) != vpcID || g[0].Attachments[0].State != ec2types.AttachmentStatus("available") {
		t.Fatalf("internet gateways of the VPC: %+v", g)
	}

	// Route tables: public to the gateway, private to the NAT.
	pubRT := must(c.CreateRouteTable(ctx, &ec2.CreateRouteTableInput{VpcId: vpc.VpcId})).RouteTable
	must(c.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: pubRT.RouteTableId, DestinationCidrBlock: aws.String("0.0.0.0/0"), GatewayId: igw.InternetGatewayId}))
	_, err = c.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: pubRT.RouteTableId, DestinationCidrBlock: aws.String("0.0.0.0/0"), GatewayId: igw.InternetGatewayId})
	wantCode(t, err, "RouteAlreadyExists")
	privRT := must(c.CreateRouteTable(ctx, &ec2.CreateRouteTableInput{VpcId: vpc.VpcId})).RouteTable
	must(c.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: privRT.RouteTableId, DestinationCidrBlock: aws.String("0.0.0.0/0"), NatGatewayId: nat.NatGatewayId}))
	var assocs []string
	for i, sn := range subnets {
		rt := pubRT.RouteTableId
		if i >= 2 {
			rt = privRT.RouteTableId
		}
		a := must(c.AssociateRouteTable(ctx, &ec2.AssociateRouteTableInput{RouteTableId: rt, SubnetId: aws.String(sn)}))
		assocs = append(assocs, aws.ToString(a.AssociationId))
	}
	_, err = c.AssociateRouteTable(ctx, &ec2.AssociateRouteTableInput{RouteTableId: privRT.RouteTableId, SubnetId: aws.String(subnets[0])})
	wantCode(t, err, "Resource.AlreadyAssociated")
	rts := must(c.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{{Name: aws.String("vpc-id"), Values: []string{vpcID}}}}))
	if len(rts.RouteTables) != 3 { // main, public, private
		t.Fatalf("%d route tables, want 3", len(rts.RouteTables))
	}
	for _, rt := range rts.RouteTables {
		if aws.ToString(rt.RouteTableId) == aws.ToString(privRT.RouteTableId) {
			if len(rt.Routes) != 2 || aws.ToString(rt.Routes[1].NatGatewayId) != aws.ToString(nat.NatGatewayId) || rt.Routes[1].State != ec2types.RouteStateActive || len(rt.Associations) != 2 {
				t.Fatalf("private route table: %+v", rt)
			}
		}
	}

	// Security groups with rules.
	sg := must(c.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("a-nodes"), Description: aws.String("nodes"), VpcId: vpc.VpcId,
		TagSpecifications: tagSpec(ec2types.ResourceTypeSecurityGroup, "nuv.dev/cluster", "a")}))
	_, err = c.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("a-nodes"), Description: aws.String("nodes"), VpcId: vpc.VpcId})
	wantCode(t, err, "InvalidGroup.Duplicate")
	perm := []ec2types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(443), ToPort: aws.Int32(443), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("10.0.0.0/16")}}},
		{IpProtocol: aws.String("-1"), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: sg.GroupId}}}}
	must(c.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: sg.GroupId, IpPermissions: perm}))
	_, err = c.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: sg.GroupId, IpPermissions: perm[:1]})
	wantCode(t, err, "InvalidPermission.Duplicate")
	sgs := must(c.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{aws.ToString(sg.GroupId)}}))
	if g := sgs.SecurityGroups[0]; len(g.IpPermissions) != 2 || aws.ToInt32(g.IpPermissions[0].FromPort) != 443 ||
		aws.ToString(g.IpPermissions[1].UserIdGroupPairs[0].GroupId) != aws.ToString(sg.GroupId) || len(g.IpPermissionsEgress) != 1 {
		t.Fatalf("security group: %+v", g)
	}
	egress := []ec2types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(53), ToPort: aws.Int32(53), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("10.0.0.2/32")}}}}
	must(c.AuthorizeSecurityGroupEgress(ctx, &ec2.AuthorizeSecurityGroupEgressInput{GroupId: sg.GroupId, IpPermissions: egress}))
	if g := must(c.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{aws.ToString(sg.GroupId)}})).SecurityGroups[0]; len(g.IpPermissionsEgress) != 2 {
		t.Fatalf("egress rules: %+v", g.IpPermissionsEgress)
	}
	must(c.RevokeSecurityGroupEgress(ctx, &ec2.RevokeSecurityGroupEgressInput{GroupId: sg.GroupId, IpPermissions: egress}))
	must(c.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: sg.GroupId, IpPermissions: perm[:1]}))
	_, err = c.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: sg.GroupId, IpPermissions: perm[:1]})
	wantCode(t, err, "InvalidPermission.NotFound")

	// Tags: everything made above carries nuv.dev/cluster=a; DescribeTags finds it by filter.
	must(c.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{aws.ToString(pubRT.RouteTableId), aws.ToString(privRT.RouteTableId)}, Tags: []ec2types.Tag{{Key: aws.String("nuv.dev/cluster"), Value: aws.String("a")}}}))
	_, err = c.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{"vpc-0123456789abcdef0"}, Tags: []ec2types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
	wantCode(t, err, "InvalidVpcID.NotFound")
	tagged := func() []string {
		out := must(c.DescribeTags(ctx, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{{Name: aws.String("key"), Values: []string{"nuv.dev/cluster"}}, {Name: aws.String("value"), Values: []string{"a"}}}}))
		var ids []string
		for _, d := range out.Tags {
			ids = append(ids, string(d.ResourceType)+" "+aws.ToString(d.ResourceId))
		}
		sort.Strings(ids)
		return ids
	}
	if got := tagged(); len(got) != 11 { // vpc, 4 subnets, igw, eip, nat, 2 route tables, sg
		t.Fatalf("tagged resources: %d %v", len(got), got)
	}
	must(c.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{vpcID}, Tags: []ec2types.Tag{{Key: aws.String("Name")}}}))
	if v := must(c.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{vpcID}})).Vpcs[0]; len(v.Tags) != 1 {
		t.Fatalf("vpc tags after DeleteTags: %+v", v.Tags)
	}

	// Tear down in dependency order; out of order, EC2 says DependencyViolation.
	_, err = c.DeleteVpc(ctx, &ec2.DeleteVpcInput{VpcId: vpc.VpcId})
	if msg := wantCode(t, err, "DependencyViolation"); !strings.Contains(msg, subnets[0]) || !strings.Contains(msg, aws.ToString(igw.InternetGatewayId)) {
		t.Fatalf("DependencyViolation does not name the dependencies: %s", msg)
	}
	_, err = c.DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: aws.String(subnets[0])})
	wantCode(t, err, "DependencyViolation") // the NAT gateway
	_, err = c.DetachInternetGateway(ctx, &ec2.DetachInternetGatewayInput{InternetGatewayId: igw.InternetGatewayId, VpcId: vpc.VpcId})
	wantCode(t, err, "DependencyViolation") // mapped public address
	_, err = c.DeleteRouteTable(ctx, &ec2.DeleteRouteTableInput{RouteTableId: pubRT.RouteTableId})
	wantCode(t, err, "DependencyViolation")
	for _, a := range assocs {
		must(c.DisassociateRouteTable(ctx, &ec2.DisassociateRouteTableInput{AssociationId: aws.String(a)}))
	}
	must(c.DeleteRouteTable(ctx, &ec2.DeleteRouteTableInput{RouteTableId: pubRT.RouteTableId}))
	must(c.DeleteRouteTable(ctx, &ec2.DeleteRouteTableInput{RouteTableId: privRT.RouteTableId}))
	must(c.DeleteNatGateway(ctx, &ec2.DeleteNatGatewayInput{NatGatewayId: nat.NatGatewayId}))
	if err := ec2.NewNatGatewayDeletedWaiter(c, func(o *ec2.NatGatewayDeletedWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 200 * time.Millisecond
	}).
		Wait(ctx, &ec2.DescribeNatGatewaysInput{NatGatewayIds: []string{aws.ToString(nat.NatGatewayId)}}, 10*time.Second); err != nil {
		t.Fatalf("NAT gateway never deleted: %v", err)
	}
	must(c.ReleaseAddress(ctx, &ec2.ReleaseAddressInput{AllocationId: eip.AllocationId}))
	must(c.DetachInternetGateway(ctx, &ec2.DetachInternetGatewayInput{InternetGatewayId: igw.InternetGatewayId, VpcId: vpc.VpcId}))
	must(c.DeleteInternetGateway(ctx, &ec2.DeleteInternetGatewayInput{InternetGatewayId: igw.InternetGatewayId}))
	for _, sn := range subnets {
		must(c.DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: aws.String(sn)}))
	}
	_, err = c.DeleteVpc(ctx, &ec2.DeleteVpcInput{VpcId: vpc.VpcId})
	wantCode(t, err, "DependencyViolation") // the security group
	must(c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: sg.GroupId}))
	must(c.DeleteVpc(ctx, &ec2.DeleteVpcInput{VpcId: vpc.VpcId}))
	if got := tagged(); len(got) != 0 {
		t.Fatalf("tagged resources left after the teardown: %v", got)
	}
	if n := len(must(c.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})).SecurityGroups); n != 0 {
		t.Fatalf("%d security groups left (the default one goes with its VPC)", n)
	}
	_, err = c.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{vpcID}})
	wantCode(t, err, "InvalidVpcID.NotFound")
}

func TestWildcard(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"a*", "abc", true}, {"*c", "abc", true}, {"a?c", "abc", true}, {"a?c", "ac", false}, {"*", "", true}, {"x*", "abc", false}, {"abc", "abc", true},
	} {
		if got := wildcard(tc.pattern, tc.s); got != tc.want {
			t.Errorf("wildcard(%q, %q) = %v", tc.pattern, tc.s, got)
		}
	}
}

func TestEC2InstanceTypes(t *testing.T) {
	defer catch(t)
	e := startEmulator(t, "", 0)
	c := ec2.NewFromConfig(e.Cfg)
	ctx := context.Background()
	for _, tc := range []struct {
		names []string
		code  string
		want  []string
	}{
		{names: []string{"m6i.large", "t3.medium"}, want: []string{"m6i.large:2:8192:x86_64", "t3.medium:2:4096:x86_64"}},
		{names: []string{"m7g.xlarge"}, want: []string{"m7g.xlarge:4:16384:arm64"}},
		{names: []string{"m6i.large", "x9.huge", "m6i.tiny"}, code: "InvalidInstanceType"},
	} {
		out, err := c.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: ec2InstanceTypes(tc.names)})
		if tc.code != "" {
			if msg := wantCode(t, err, tc.code); !strings.Contains(msg, "[x9.huge, m6i.tiny]") {
				t.Errorf("%v: message %q does not name the unknown types", tc.names, msg)
			}
			continue
		}
		var got []string
		for _, it := range must(out, err).InstanceTypes {
			got = append(got, fmt.Sprintf("%s:%d:%d:%s", it.InstanceType, aws.ToInt32(it.VCpuInfo.DefaultVCpus), aws.ToInt64(it.MemoryInfo.SizeInMiB), it.ProcessorInfo.SupportedArchitectures[0]))
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%v: got %v, want %v", tc.names, got, tc.want)
		}
	}
	all := must(c.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{Filters: []ec2types.Filter{{Name: aws.String("instance-type"), Values: []string{"c7g.*"}}}}))
	if len(all.InstanceTypes) != 8 {
		t.Errorf("filter c7g.*: %d types, want 8", len(all.InstanceTypes))
	}
}

func ec2InstanceTypes(names []string) []ec2types.InstanceType {
	out := make([]ec2types.InstanceType, len(names))
	for i, n := range names {
		out[i] = ec2types.InstanceType(n)
	}
	return out
}

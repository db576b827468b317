package awsmachines

import (
	"context"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awstest"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
)

// TestMachinesDeleteOrderOfGroups observes the security groups of a self-managed cluster in the
// emulator: the etcd group's rule names the control planes' group, so delete removes the etcd
// group first (AWS refuses to delete a group another group's rule names), whatever the state
// record says.
func TestMachinesDeleteOrderOfGroups(t *testing.T) {
	e := awstest.StartEmulator(t, 0)
	p := New(t.TempDir(), "nuv", e.Getenv, nil)
	ctx := context.Background()
	c := awstest.Parse(t, externalHAProxy)
	s, err := p.session(ctx, c, sectionOf(c))
	if err != nil {
		t.Fatal(err)
	}
	tags := func(typ ec2types.ResourceType, res string) []ec2types.TagSpecification {
		return []ec2types.TagSpecification{{ResourceType: typ, Tags: []ec2types.Tag{
			{Key: aws.String(awsnet.TagCluster), Value: aws.String("tier")}, {Key: aws.String(awsnet.TagResource), Value: aws.String(res)}}}}
	}
	vpc, err := s.EC2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.42.0.0/16"), TagSpecifications: tags(ec2types.ResourceTypeVpc, "vpc/tier")})
	if err != nil {
		t.Fatal(err)
	}
	group := func(role string) string {
		out, err := s.EC2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("nuv-tier-" + role), Description: aws.String(role),
			VpcId: vpc.Vpc.VpcId, TagSpecifications: tags(ec2types.ResourceTypeSecurityGroup, "security-group/"+role)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.GroupId)
	}
	cp, etcd := group("control-plane"), group("etcd")
	if _, err := s.EC2.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(etcd), IpPermissions: []ec2types.IpPermission{{
		IpProtocol: aws.String("tcp"), FromPort: aws.Int32(2379), ToPort: aws.Int32(2379), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(cp)}}}}}); err != nil {
		t.Fatal(err)
	}
	actual, err := p.observeMachines(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The observed etcd group depends on the control planes' group (the engine deletes dependents
	// first): with its etcd machines listed before the control plane's, as a record of a cluster
	// has them, the control planes' group would otherwise go first and AWS would refuse.
	for _, r := range actual {
		if r.Key() == "security-group/etcd" && !slices.Contains(r.DependsOn, "security-group/control-plane") {
			t.Errorf("observed %s depends on %v: want security-group/control-plane, which its rule names", r.Key(), r.DependsOn)
		}
	}
	var order []string
	for _, ch := range cluster.DeleteAll("tier", Name, actual).Changes {
		order = append(order, ch.Key)
	}
	i, j := slices.Index(order, "security-group/etcd"), slices.Index(order, "security-group/control-plane")
	if i < 0 || j < 0 || i > j || order[len(order)-1] != "vpc/tier" {
		t.Errorf("delete order %v: want security-group/etcd before security-group/control-plane, the VPC last", order)
	}
}

// TestObserveLostMachineAddress: a machine the record knows that AWS no longer runs (lost behind
// nuv's back, or terminated by a roll an apply cut short) leaves its address for its launch: the
// roll's held address first, else the address recorded when it was launched.
func TestObserveLostMachineAddress(t *testing.T) {
	e := awstest.StartEmulator(t, 0)
	p := New(t.TempDir(), "nuv", e.Getenv, nil)
	c := awstest.Parse(t, externalHAProxy)
	name := c.Metadata.Name
	for _, tc := range []struct {
		name   string
		fields map[string]string
		want   string
	}{
		{"lost machine", map[string]string{"role": RoleEtcd, fieldPrivateIP: "10.91.0.7"}, "10.91.0.7"},
		{"roll cut short", map[string]string{"role": RoleEtcd, fieldPrivateIP: "10.91.0.7", fieldAddress: "10.91.0.8"}, "10.91.0.8"},
		{"record without an address", map[string]string{"role": RoleEtcd}, ""},
	} {
		rec := []cluster.Resource{{Kind: kindInstance, Name: "etcd-1", ID: "i-0123456789abcdef0", Fields: tc.fields}}
		p.remember(name, addressKey("instance/etcd-1"), "")
		if _, err := p.observeMachines(context.Background(), c, rec); err != nil {
			t.Fatal(err)
		}
		got, _ := p.ids.Get(name, addressKey("instance/etcd-1"))
		if got != tc.want {
			t.Errorf("%s: address %q, want %q", tc.name, got, tc.want)
		}
	}
}

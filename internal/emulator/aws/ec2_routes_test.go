package aws

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// awsCLI runs the aws CLI against e and answers its output (stderr when it fails).
func awsCLI(t *testing.T, e *testEmulator, args ...string) (string, error) {
	t.Helper()
	key, secret, _, region := e.Credentials()
	cmd := exec.Command("aws", append(args, "--endpoint-url", e.URL, "--output", "json")...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+key, "AWS_SECRET_ACCESS_KEY="+secret, "AWS_DEFAULT_REGION="+region, "AWS_REGION="+region,
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return errb.String(), err
	}
	return out.String(), nil
}

// TestEC2InstanceRoutes: ModifyInstanceAttribute turns an instance's source/destination check off
// (both of EC2's forms, the aws CLI's --no-source-dest-check too) and DescribeInstances and
// DescribeInstanceAttribute report it; CreateRoute, ReplaceRoute and DeleteRoute take instance
// targets and answer EC2's errors; DescribeRouteTables shows the routes, blackhole once their
// instance is terminated; and the machines' network carries exactly the routes of each subnet's
// route table to running instances whose check is off.
func TestEC2InstanceRoutes(t *testing.T) {
	defer catch(t)
	mm := newMemMachines()
	e := startEmulatorWith(t, Options{Machines: mm})
	c := ec2.NewFromConfig(e.Cfg)
	ctx := context.Background()
	n := makeNet(t, c, "10.30.0.0/16", "10.30.1.0/24")
	sn2 := aws.ToString(must(c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: aws.String(n.vpc), CidrBlock: aws.String("10.30.2.0/24"),
		AvailabilityZone: aws.String("us-east-1c")})).Subnet.SubnetId)
	other := makeNet(t, c, "10.31.0.0/16", "10.31.1.0/24")
	ami := machineAMI(t, c)
	launch := func(subnet string) string {
		in := must(c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceTypeT3Small,
			MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: aws.String(subnet)})).Instances[0]
		return aws.ToString(in.InstanceId)
	}
	a, b, stranger := launch(n.subnet), launch(sn2), launch(other.subnet)
	for _, id := range []string{a, b, stranger} {
		if in := waitState(t, c, id, ec2types.InstanceStateNameRunning, 10*time.Second); !aws.ToBool(in.SourceDestCheck) {
			t.Fatalf("instance %s launched with its source/destination check off", id)
		}
	}

	// the attribute
	must(c.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(a), SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(false)}}))
	if in := describeInstance(t, c, a); aws.ToBool(in.SourceDestCheck) {
		t.Fatalf("DescribeInstances after SourceDestCheck.Value=false: sourceDestCheck %v", aws.ToBool(in.SourceDestCheck))
	}
	attr := must(c.DescribeInstanceAttribute(ctx, &ec2.DescribeInstanceAttributeInput{InstanceId: aws.String(a), Attribute: ec2types.InstanceAttributeNameSourceDestCheck}))
	if aws.ToString(attr.InstanceId) != a || attr.SourceDestCheck == nil || aws.ToBool(attr.SourceDestCheck.Value) {
		t.Fatalf("DescribeInstanceAttribute sourceDestCheck: %+v", attr)
	}
	if out, err := awsCLI(t, e, "ec2", "modify-instance-attribute", "--instance-id", b, "--no-source-dest-check"); err != nil {
		t.Fatalf("aws ec2 modify-instance-attribute --no-source-dest-check: %v\n%s", err, out)
	}
	out, err := awsCLI(t, e, "ec2", "describe-instances", "--instance-ids", b, "--query", "Reservations[0].Instances[0].SourceDestCheck")
	if err != nil || string(bytes.TrimSpace([]byte(out))) != "false" {
		t.Fatalf("aws ec2 describe-instances after --no-source-dest-check: %v\n%s", err, out)
	}
	if got := must(c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{{Name: aws.String("source-dest-check"), Values: []string{"false"}}}})); len(got.Reservations) != 2 {
		t.Fatalf("DescribeInstances source-dest-check=false: %d reservations, want 2", len(got.Reservations))
	}
	for _, tc := range []struct {
		name string
		in   *ec2.ModifyInstanceAttributeInput
		code string
	}{
		{"unknown instance", &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String("i-0123456789abcdef0"), Attribute: "sourceDestCheck", Value: aws.String("false")}, "InvalidInstanceID.NotFound"},
		{"malformed instance", &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String("nope"), Attribute: "sourceDestCheck", Value: aws.String("false")}, "InvalidInstanceID.Malformed"},
		{"unknown attribute", &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(a), Attribute: "colour", Value: aws.String("blue")}, "InvalidParameterValue"},
		{"attribute not emulated", &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(a), Attribute: "kernel", Value: aws.String("aki-1")}, "UnsupportedOperation"},
		{"bad value", &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(a), Attribute: "sourceDestCheck", Value: aws.String("maybe")}, "InvalidParameterValue"},
		{"no attribute", &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(a)}, "MissingParameter"},
		{"two attributes", &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(a), SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(false)},
			EnaSupport: &ec2types.AttributeBooleanValue{Value: aws.Bool(true)}}, "InvalidParameterCombination"},
	} {
		_, err := c.ModifyInstanceAttribute(ctx, tc.in)
		if got := apiCode(err); got != tc.code {
			t.Errorf("ModifyInstanceAttribute %s: %v, want %s", tc.name, err, tc.code)
		}
	}

	// routes to the instances, in the VPC's main table
	rts := must(c.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{{Name: aws.String("vpc-id"), Values: []string{n.vpc}}}})).RouteTables
	if len(rts) != 1 {
		t.Fatalf("VPC %s has %d route tables, want its main one", n.vpc, len(rts))
	}
	rtb := aws.ToString(rts[0].RouteTableId)
	route := func(dest, inst string) *ec2.CreateRouteInput {
		return &ec2.CreateRouteInput{RouteTableId: aws.String(rtb), DestinationCidrBlock: aws.String(dest), InstanceId: aws.String(inst)}
	}
	must(c.CreateRoute(ctx, route("10.244.1.0/24", a)))
	if out, err := awsCLI(t, e, "ec2", "create-route", "--route-table-id", rtb, "--destination-cidr-block", "10.244.2.0/24", "--instance-id", b); err != nil {
		t.Fatalf("aws ec2 create-route --instance-id: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		name string
		err  error
		code string
	}{
		{"create twice", func() error { _, err := c.CreateRoute(ctx, route("10.244.1.0/24", b)); return err }(), "RouteAlreadyExists"},
		{"create to an unknown instance", func() error { _, err := c.CreateRoute(ctx, route("10.244.9.0/24", "i-0123456789abcdef0")); return err }(), "InvalidInstanceID.NotFound"},
		{"create to another VPC's instance", func() error { _, err := c.CreateRoute(ctx, route("10.244.9.0/24", stranger)); return err }(), "InvalidParameterValue"},
		{"create with two targets", func() error {
			in := route("10.244.9.0/24", a)
			in.GatewayId = aws.String("igw-0123456789abcdef0")
			_, err := c.CreateRoute(ctx, in)
			return err
		}(), "InvalidParameterCombination"},
		{"replace a missing route", func() error {
			_, err := c.ReplaceRoute(ctx, &ec2.ReplaceRouteInput{RouteTableId: aws.String(rtb), DestinationCidrBlock: aws.String("10.244.9.0/24"), InstanceId: aws.String(a)})
			return err
		}(), "InvalidParameterValue"},
		{"replace the local route", func() error {
			_, err := c.ReplaceRoute(ctx, &ec2.ReplaceRouteInput{RouteTableId: aws.String(rtb), DestinationCidrBlock: aws.String("10.30.0.0/16"), InstanceId: aws.String(a)})
			return err
		}(), "InvalidParameterValue"},
		{"delete a missing route", func() error {
			_, err := c.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(rtb), DestinationCidrBlock: aws.String("10.244.9.0/24")})
			return err
		}(), "InvalidRoute.NotFound"},
		{"delete the local route", func() error {
			_, err := c.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(rtb), DestinationCidrBlock: aws.String("10.30.0.0/16")})
			return err
		}(), "InvalidParameterValue"},
		{"route in an unknown table", func() error {
			_, err := c.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: aws.String("rtb-0123456789abcdef0"), DestinationCidrBlock: aws.String("10.244.9.0/24"), InstanceId: aws.String(a)})
			return err
		}(), "InvalidRouteTableID.NotFound"},
	} {
		if got := apiCode(tc.err); got != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, tc.err, tc.code)
		}
	}
	// the network carries both routes from both subnets (one route table for the two)
	want := []InstanceRoute{{"10.244.1.0/24", "10.30.1.4", n.subnet}, {"10.244.2.0/24", "10.30.2.4", sn2}}
	waitRoutes(t, mm, map[string][]InstanceRoute{n.subnet: want, sn2: want, other.subnet: nil})

	// the check back on: the route stays, the network no longer carries it
	if out, err := awsCLI(t, e, "ec2", "modify-instance-attribute", "--instance-id", b, "--source-dest-check"); err != nil {
		t.Fatalf("aws ec2 modify-instance-attribute --source-dest-check: %v\n%s", err, out)
	}
	waitRoutes(t, mm, map[string][]InstanceRoute{n.subnet: want[:1], sn2: want[:1], other.subnet: nil})
	must(c.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(b), Attribute: "sourceDestCheck", Value: aws.String("False")}))

	// the routes as the aws CLI shows them
	out, err = awsCLI(t, e, "ec2", "describe-route-tables", "--route-table-ids", rtb)
	if err != nil {
		t.Fatalf("aws ec2 describe-route-tables: %v\n%s", err, out)
	}
	var cli struct {
		RouteTables []struct {
			Routes []map[string]string
		}
	}
	if err := json.Unmarshal([]byte(out), &cli); err != nil || len(cli.RouteTables) != 1 {
		t.Fatalf("aws ec2 describe-route-tables: %v\n%s", err, out)
	}
	wantCLI := []map[string]string{
		{"DestinationCidrBlock": "10.30.0.0/16", "GatewayId": "local", "Origin": "CreateRouteTable", "State": "active"},
		{"DestinationCidrBlock": "10.244.1.0/24", "InstanceId": a, "InstanceOwnerId": e.St.Account, "Origin": "CreateRoute", "State": "active"},
		{"DestinationCidrBlock": "10.244.2.0/24", "InstanceId": b, "InstanceOwnerId": e.St.Account, "Origin": "CreateRoute", "State": "active"},
	}
	if !reflect.DeepEqual(cli.RouteTables[0].Routes, wantCLI) {
		t.Fatalf("aws ec2 describe-route-tables routes:\n%v\nwant\n%v", cli.RouteTables[0].Routes, wantCLI)
	}

	// a healed node: its pod range goes to the new instance (ReplaceRoute); the old one's
	// terminated route is a blackhole until it is replaced
	c2 := launch(sn2)
	waitState(t, c, c2, ec2types.InstanceStateNameRunning, 10*time.Second)
	must(c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{b}}))
	waitState(t, c, b, ec2types.InstanceStateNameTerminated, 10*time.Second)
	got := must(c.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{RouteTableIds: []string{rtb}})).RouteTables[0].Routes
	if len(got) != 3 || got[2].State != ec2types.RouteStateBlackhole || aws.ToString(got[2].InstanceId) != b {
		t.Fatalf("route to a terminated instance: %+v", got[2])
	}
	waitRoutes(t, mm, map[string][]InstanceRoute{n.subnet: want[:1], sn2: want[:1], other.subnet: nil})
	must(c.ReplaceRoute(ctx, &ec2.ReplaceRouteInput{RouteTableId: aws.String(rtb), DestinationCidrBlock: aws.String("10.244.2.0/24"), InstanceId: aws.String(c2)}))
	must(c.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(c2), SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(false)}}))
	got = must(c.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{RouteTableIds: []string{rtb}})).RouteTables[0].Routes
	if len(got) != 3 || got[2].State != ec2types.RouteStateActive || aws.ToString(got[2].InstanceId) != c2 || got[2].Origin != ec2types.RouteOriginCreateRoute {
		t.Fatalf("replaced route: %+v", got[2])
	}
	healed := []InstanceRoute{want[0], {"10.244.2.0/24", "10.30.2.5", sn2}}
	waitRoutes(t, mm, map[string][]InstanceRoute{n.subnet: healed, sn2: healed, other.subnet: nil})

	// a subnet with a table of its own follows that table
	own := aws.ToString(must(c.CreateRouteTable(ctx, &ec2.CreateRouteTableInput{VpcId: aws.String(n.vpc)})).RouteTable.RouteTableId)
	must(c.AssociateRouteTable(ctx, &ec2.AssociateRouteTableInput{RouteTableId: aws.String(own), SubnetId: aws.String(sn2)}))
	waitRoutes(t, mm, map[string][]InstanceRoute{n.subnet: healed, sn2: nil, other.subnet: nil})
	must(c.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(rtb), DestinationCidrBlock: aws.String("10.244.1.0/24")}))
	waitRoutes(t, mm, map[string][]InstanceRoute{n.subnet: healed[1:], sn2: nil, other.subnet: nil})
}

// waitRoutes waits until the machines' network carries want.
func waitRoutes(t *testing.T, mm *memMachines, want map[string][]InstanceRoute) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := mm.givenRoutes()
		if routesDigest(got) == routesDigest(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the machines' network carries\n%v\nwant\n%v", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

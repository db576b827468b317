package aws

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// TestIntegrationInstanceRoutes: two instances (real machine containers) in two subnets of a VPC;
// the second holds an address outside the VPC (a pod's, on its loopback) that answers on port 22.
// The first reaches it only once the VPC's route table routes the address's range to the second
// instance and that instance's source/destination check is off: not before the route, not with
// the check on, again after the check is turned back on never. Deleting the subnets removes the
// host's routing rules of their networks.
func TestIntegrationInstanceRoutes(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs machine containers (go test without -short)")
	}
	defer catch(t)
	ctx := context.Background()
	mgr := machineManager(t)
	var account string
	removeAccountObjectsAtCleanup(t, mgr, &account)
	e := startEmulatorWith(t, Options{Log: testLogger(t)})
	_, _, account, _ = e.Credentials()
	c := ec2.NewFromConfig(e.Cfg)
	var ids []string

	x := 100 + rand.IntN(150)
	vpc := aws.ToString(must(c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String(fmt.Sprintf("10.%d.0.0/16", x))})).Vpc.VpcId)
	var subnets []string
	for i := 1; i <= 2; i++ {
		sn := must(c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: aws.String(vpc), CidrBlock: aws.String(fmt.Sprintf("10.%d.%d.0/24", x, i))})).Subnet
		subnets = append(subnets, aws.ToString(sn.SubnetId))
	}
	ami := machineAMI(t, c)
	ips := map[string]string{}
	for _, sn := range subnets {
		in := must(c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceTypeT3Medium,
			MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: aws.String(sn)})).Instances[0]
		ids = append(ids, aws.ToString(in.InstanceId))
	}
	for _, id := range ids {
		ips[id] = aws.ToString(waitState(t, c, id, ec2types.InstanceStateNameRunning, 4*time.Minute).PrivateIpAddress)
	}
	a, b := ids[0], ids[1]
	pod := fmt.Sprintf("100.64.%d.1", x)
	podRange := fmt.Sprintf("100.64.%d.0/24", x)
	run := func(id, script string) (string, error) {
		out, err := mgr.Machine(must(mgr.Inspect(ctx, id))).Run(ctx, script, nil)
		return string(out), err
	}
	if out, err := run(b, "ip addr add "+pod+"/32 dev lo && ssh-keygen -A >/dev/null && systemctl start ssh"); err != nil {
		t.Fatalf("give %s the address %s: %v %s", b, pod, err, out)
	}
	reach := func() bool {
		out, err := run(a, "timeout 3 bash -c 'exec 3<>/dev/tcp/"+pod+"/22 && head -c 8 <&3' 2>/dev/null || true")
		return err == nil && out == "SSH-2.0-"
	}
	// waitReach waits until reach() is want (the emulator programs the host in the background).
	waitReach := func(want bool, what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for reach() != want {
			if time.Now().After(deadline) {
				rules, _ := exec.Command("ip", "rule").CombinedOutput()
				t.Fatalf("%s: %s reaches %s on %s: %v, want %v\n%s", what, a, pod, b, !want, want, rules)
			}
			time.Sleep(time.Second)
		}
	}
	waitReach(false, "no route")
	rtb := aws.ToString(must(c.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{{Name: aws.String("vpc-id"), Values: []string{vpc}}}})).RouteTables[0].RouteTableId)
	must(c.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: aws.String(rtb), DestinationCidrBlock: aws.String(podRange), InstanceId: aws.String(b)}))
	time.Sleep(3 * time.Second)
	waitReach(false, "a route, the check on")
	t0 := time.Now()
	must(c.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(b), SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(false)}}))
	waitReach(true, "a route, the check off")
	t.Logf("%s reaches %s on %s (another subnet) %.1fs after the check went off", a, pod, b, time.Since(t0).Seconds())
	must(c.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(b), SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(true)}}))
	waitReach(false, "the check on again")

	must(c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids}))
	for _, id := range ids {
		waitState(t, c, id, ec2types.InstanceStateNameTerminated, 2*time.Minute)
		waitGone(t, mgr, id)
	}
	for _, sn := range subnets {
		must(c.DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: aws.String(sn)}))
	}
	must(c.DeleteVpc(ctx, &ec2.DeleteVpcInput{VpcId: aws.String(vpc)}))
	for _, sn := range subnets {
		table := fmt.Sprint(subnetRouteTableID(account, sn))
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
			out, err := exec.Command("ip", "rule", "show", "table", table).CombinedOutput()
			if err == nil && strings.TrimSpace(string(out)) == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("routing rule of subnet %s left after its deletion: %v %s", sn, err, out)
			}
		}
	}
	// and the subnets' networks are gone before the emulator stops (it would leave them to its
	// next start)
	waitAccountEmpty(t, mgr, account)
}

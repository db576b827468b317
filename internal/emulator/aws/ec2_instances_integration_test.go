package aws

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"golang.org/x/crypto/ssh"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/machine/container"
)

// TestIntegrationEC2Instances runs EC2 instances that are real machines: containers of nuv's node
// image on the project's Docker daemon, on a network made with their subnet's CIDR. Two instances
// launched through the SDK reach running with the subnet's addresses (the containers have them),
// their user data ran once (a file it wrote, read through the machine's exec) and the key pair is
// root's; the aws CLI shows their states and addresses; stop and start keep the machine and its
// address; a restarted emulator keeps them running; terminate removes the containers, and deleting
// the subnet and the VPC removes the network. Everything is removed even when the test fails.
func TestIntegrationEC2Instances(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs machine containers (go test without -short)")
	}
	defer catch(t)
	ctx := context.Background()
	mgr := machineManager(t)
	dir := t.TempDir()
	var account string
	removeAccountObjectsAtCleanup(t, mgr, &account)
	e := startEmulatorWith(t, Options{Dir: dir, Log: testLogger(t)})
	_, _, account, _ = e.Credentials()
	c := ec2.NewFromConfig(e.Cfg)

	// A VPC in 10.x (x chosen at random: other tests on this Docker daemon may hold networks in 10/8).
	x := 100 + rand.IntN(150)
	vpc := must(c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String(fmt.Sprintf("10.%d.0.0/16", x))})).Vpc
	sn := must(c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.VpcId, CidrBlock: aws.String(fmt.Sprintf("10.%d.1.0/24", x))})).Subnet
	subnet := aws.ToString(sn.SubnetId)
	t0 := time.Now()
	ami := machineAMI(t, c)
	t.Logf("machine image resolved in %.1fs: %s", time.Since(t0).Seconds(), ami)
	key := must(c.CreateKeyPair(ctx, &ec2.CreateKeyPairInput{KeyName: aws.String("it"), KeyType: ec2types.KeyTypeEd25519}))
	pub := aws.ToString(must(c.DescribeKeyPairs(ctx, &ec2.DescribeKeyPairsInput{KeyNames: []string{"it"}, IncludePublicKey: aws.Bool(true)})).KeyPairs[0].PublicKey)
	userData := "#!/bin/sh\nset -e\necho \"ran on $(hostname)\" >> /root/user-data-ran\n"

	t0 = time.Now()
	run := must(c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceTypeT3Medium, MinCount: aws.Int32(2), MaxCount: aws.Int32(2),
		SubnetId: sn.SubnetId, KeyName: key.KeyName, UserData: aws.String(base64.StdEncoding.EncodeToString([]byte(userData))),
		TagSpecifications: tagSpec(ec2types.ResourceTypeInstance, "nuv.dev/cluster", "it")}))
	var ids []string
	for _, in := range run.Instances {
		ids = append(ids, aws.ToString(in.InstanceId))
	}
	ips := map[string]string{}
	for i, id := range ids {
		in := waitState(t, c, id, ec2types.InstanceStateNameRunning, 4*time.Minute)
		ips[id] = aws.ToString(in.PrivateIpAddress)
		if want := fmt.Sprintf("10.%d.1.%d", x, 4+i); ips[id] != want {
			t.Fatalf("instance %s has address %s, want %s", id, ips[id], want)
		}
	}
	t.Logf("RunInstances to running (2 instances): %.1fs", time.Since(t0).Seconds())

	for _, id := range ids {
		info := must(mgr.Inspect(ctx, id))
		if !info.Running || info.IP != ips[id] || info.Network != networkName(subnet) || info.Labels[LabelInstance] != id || info.Hostname != hostnameOf(ips[id]) {
			t.Fatalf("container of %s: %+v", id, info)
		}
		m := mgr.Machine(info)
		ran := string(must(m.ReadFile(ctx, "/root/user-data-ran")))
		if ran != "ran on "+hostnameOf(ips[id])+"\n" {
			t.Fatalf("user data of %s wrote %q", id, ran)
		}
		keys := string(must(m.ReadFile(ctx, "/root/.ssh/authorized_keys")))
		if !strings.Contains(keys, pub) {
			t.Fatalf("authorized_keys of %s lacks the key pair: %q", id, keys)
		}
	}
	// The key pair logs in as root over SSH, from this host to the instance's private address and
	// from one instance to the other (sshd started the way a user's user data would start it).
	for _, id := range ids {
		if out, err := mgr.Machine(must(mgr.Inspect(ctx, id))).Run(ctx, "ssh-keygen -A >/dev/null && systemctl start ssh", nil); err != nil {
			t.Fatalf("start sshd on %s: %v %s", id, err, out)
		}
	}
	signer := must(ssh.ParsePrivateKey([]byte(aws.ToString(key.KeyMaterial))))
	sshc := must(ssh.Dial("tcp", ips[ids[1]]+":22", &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})) // the host key is the machine's own, made just now
	sess := must(sshc.NewSession())
	out, err := sess.Output("hostname; timeout 5 bash -c 'exec 3<>/dev/tcp/" + ips[ids[0]] + "/22 && head -c 8 <&3'")
	sess.Close()
	sshc.Close()
	if err != nil || string(out) != hostnameOf(ips[ids[1]])+"\nSSH-2.0-" {
		t.Fatalf("ssh root@%s with the key pair, then to %s:22: %v %q", ips[ids[1]], ips[ids[0]], err, out)
	}

	// The aws CLI (v1, AWS_ENDPOINT_URL) sees the instances, their states and addresses.
	cli := func(args ...string) []byte {
		t.Helper()
		key, secret, _, region := e.Credentials()
		cmd := exec.Command("aws", append(args, "--output", "json")...)
		cmd.Env = append(os.Environ(), "AWS_ENDPOINT_URL="+e.URL, "AWS_ACCESS_KEY_ID="+key, "AWS_SECRET_ACCESS_KEY="+secret, "AWS_DEFAULT_REGION="+region,
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, errb.String())
		}
		return out.Bytes()
	}
	var described struct {
		Reservations []struct {
			Instances []struct {
				InstanceID       string `json:"InstanceId"`
				PrivateIPAddress string `json:"PrivateIpAddress"`
				State            struct{ Name string }
			}
		}
	}
	if err := json.Unmarshal(cli("ec2", "describe-instances", "--filters", "Name=tag:nuv.dev/cluster,Values=it"), &described); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range described.Reservations {
		for _, in := range r.Instances {
			if in.State.Name != "running" || in.PrivateIPAddress != ips[in.InstanceID] {
				t.Fatalf("aws ec2 describe-instances: %+v", in)
			}
			seen++
		}
	}
	if seen != 2 {
		t.Fatalf("aws ec2 describe-instances shows %d instances, want 2", seen)
	}

	// Stop and start: the same machine, the same address, the user data not run again.
	must(c.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: ids[:1]}))
	waitState(t, c, ids[0], ec2types.InstanceStateNameStopped, 2*time.Minute)
	if info := must(mgr.Inspect(ctx, ids[0])); info.Running {
		t.Fatalf("the container of stopped instance %s runs", ids[0])
	}
	id0 := must(mgr.Inspect(ctx, ids[0])).ID
	t0 = time.Now()
	must(c.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: ids[:1]}))
	in := waitState(t, c, ids[0], ec2types.InstanceStateNameRunning, 4*time.Minute)
	t.Logf("StartInstances to running: %.1fs", time.Since(t0).Seconds())
	info := must(mgr.Inspect(ctx, ids[0]))
	if info.ID != id0 || info.IP != ips[ids[0]] || aws.ToString(in.PrivateIpAddress) != ips[ids[0]] {
		t.Fatalf("after start: container %s (was %s), address %s", info.ID, id0, info.IP)
	}
	if ran := string(must(mgr.Machine(info).ReadFile(ctx, "/root/user-data-ran"))); strings.Count(ran, "ran on") != 1 {
		t.Fatalf("the user data ran again on start: %q", ran)
	}

	// A restarted emulator keeps the instances and their machines.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = startEmulatorWith(t, Options{Dir: dir, Log: testLogger(t)})
	c = ec2.NewFromConfig(e.Cfg)
	time.Sleep(2 * time.Second) // the restarted emulator lists its machines at once
	for _, id := range ids {
		if in := describeInstance(t, c, id); in.State.Name != ec2types.InstanceStateNameRunning || aws.ToString(in.PrivateIpAddress) != ips[id] {
			t.Fatalf("after a restart of the emulator, %s is %s at %s", id, in.State.Name, aws.ToString(in.PrivateIpAddress))
		}
	}

	// A second VPC with the same block: legal on EC2, but the container runtime cannot have two
	// networks of one subnet, so its instance fails to launch, saying why.
	vpc2 := must(c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: vpc.CidrBlock})).Vpc
	sn2 := must(c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc2.VpcId, CidrBlock: sn.CidrBlock})).Subnet
	clash := aws.ToString(must(c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceTypeT3Medium,
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: sn2.SubnetId})).Instances[0].InstanceId)
	in = waitState(t, c, clash, ec2types.InstanceStateNameTerminated, time.Minute)
	if msg := aws.ToString(in.StateReason.Message); aws.ToString(in.StateReason.Code) != "Server.InternalError" || !strings.Contains(msg, networkName(aws.ToString(sn2.SubnetId))) {
		t.Fatalf("instance in a subnet whose block another network holds: %+v", in.StateReason)
	}
	t.Logf("the same CIDR in a second VPC: %s", aws.ToString(in.StateReason.Message))
	must(c.DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: sn2.SubnetId}))
	must(c.DeleteVpc(ctx, &ec2.DeleteVpcInput{VpcId: vpc2.VpcId}))

	// An instance terminated while it boots (an injected fault): its launch is cut short and its
	// container removed.
	resp := must(e.admin("POST", `{"operation":"ec2:RunInstances","kind":"terminate-after","seconds":2,"count":1}`))
	resp.Body.Close()
	lost := aws.ToString(must(c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceTypeT3Medium,
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: sn.SubnetId})).Instances[0].InstanceId)
	in = waitState(t, c, lost, ec2types.InstanceStateNameTerminated, 2*time.Minute)
	if aws.ToString(in.StateReason.Code) != "Server.InternalError" {
		t.Fatalf("instance terminated by the fault: %+v", in.StateReason)
	}
	waitGone(t, mgr, lost)

	// A container removed behind the emulator's back: its instance is terminated, with the reason.
	must(0, mgr.Remove(ctx, ids[1]))
	in = waitState(t, c, ids[1], ec2types.InstanceStateNameTerminated, 30*time.Second)
	if aws.ToString(in.StateReason.Code) != "Server.InternalError" || !strings.Contains(aws.ToString(in.StateReason.Message), "machine is gone") {
		t.Fatalf("instance whose container was removed: %+v", in.StateReason)
	}

	// Terminate: the containers go; the subnet and the VPC can go, and the network with them.
	_, err = c.DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: sn.SubnetId})
	wantCode(t, err, "DependencyViolation")
	t0 = time.Now()
	must(c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids}))
	for _, id := range ids {
		waitState(t, c, id, ec2types.InstanceStateNameTerminated, 2*time.Minute)
		waitGone(t, mgr, id)
	}
	t.Logf("TerminateInstances to terminated: %.1fs", time.Since(t0).Seconds())
	must(c.DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: sn.SubnetId}))
	must(c.DeleteVpc(ctx, &ec2.DeleteVpcInput{VpcId: vpc.VpcId}))
	waitAccountEmpty(t, mgr, account)
}

// waitGone waits until the container of instance id is gone (a container whose making was cut
// short may appear after its instance terminated; the emulator removes it within seconds).
func waitGone(t *testing.T, mgr *container.Manager, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := mgr.Inspect(context.Background(), id)
		if errors.Is(err, container.ErrNotFound) {
			// and stays gone a moment (the runtime may still be making it)
			time.Sleep(3 * time.Second)
			if _, err := mgr.Inspect(context.Background(), id); errors.Is(err, container.ErrNotFound) {
				return
			}
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("the container of terminated instance %s remains: %v", id, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// testLogger logs to the test's log.
func testLogger(t *testing.T) cli.Logger { return cli.NewLogger(testWriter{t}, 1) }

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

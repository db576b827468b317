package emulatorcmd_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	awsemu "github.com/nuv-dev/nuv/internal/emulator/aws"
)

// TestIntegrationEmulatorDockerHost: the emulator `nuv emulator up` starts detached keeps the
// Docker daemon the user chose with DOCKER_HOST (here the test command's own daemon, not the
// default socket) and leaves the shell's credentials behind; an EC2 instance launched through it
// is a running container on that daemon. The instance, its subnet's network and the emulator are
// removed even when the test fails.
func TestIntegrationEmulatorDockerHost(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an EC2 instance as a container of nuv's node image; skipped under -short")
	}
	host := os.Getenv("DOCKER_HOST")
	if host == "" || host == "unix:///var/run/docker.sock" || host == "unix:///run/docker.sock" {
		t.Fatalf("DOCKER_HOST=%q: this test needs a Docker daemon that is not the default one (the test command's: `bash hack/dockerd.sh start` and `eval \"$(bash hack/dockerd.sh env)\"`)", host)
	}
	ctx := context.Background()
	home := t.TempDir()
	t.Setenv("NUV_HOME", home)
	t.Setenv("NUV_EMULATOR_PORT", freePort(t))
	t.Setenv("NUV_AZURE_EMULATOR_PORT", freePort(t))
	t.Setenv("NUV_EMULATOR_DELAY", "200ms")
	t.Setenv(asNuv, "1")
	// What the shell holds besides the daemon's address: a credential that must stay behind.
	t.Setenv("AWS_SESSION_TOKEN", "must-not-reach-the-emulator")
	emuDir := awsemu.Dir(home)
	t.Cleanup(func() {
		if _, err := nuv(t, "emulator", "down"); err != nil {
			t.Errorf("emulator down: %v", err)
		}
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(emuDir, "emulator.log"))
			t.Logf("emulator log:\n%s", b)
		}
	})
	ok[string](t)(nuv(t, "emulator", "up"))

	// The detached process's environment: the daemon's address kept, the credential dropped.
	p := ok[awsemu.Process](t)(awsemu.ReadProcess(emuDir))
	environ := string(ok[[]byte](t)(os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.PID))))
	vars := strings.Split(environ, "\x00")
	if !slices.Contains(vars, "DOCKER_HOST="+host) {
		t.Errorf("the emulator's environment lacks DOCKER_HOST=%s", host)
	}
	if strings.Contains(environ, "must-not-reach-the-emulator") {
		t.Errorf("the emulator's environment holds the shell's AWS_SESSION_TOKEN")
	}

	for k, v := range exports(ok[string](t)(nuv(t, "emulator", "env"))) {
		t.Setenv(k, v)
	}
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(home, "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "none"))
	c := ec2.NewFromConfig(ok[aws.Config](t)(config.LoadDefaultConfig(ctx)))

	x := 100 + rand.IntN(150) // other tests on this daemon may hold networks in 10/8
	vpc := ok[*ec2.CreateVpcOutput](t)(c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String(fmt.Sprintf("10.%d.0.0/16", x))})).Vpc
	sn := ok[*ec2.CreateSubnetOutput](t)(c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.VpcId, CidrBlock: aws.String(fmt.Sprintf("10.%d.1.0/24", x))})).Subnet
	t0 := time.Now()
	imgs := ok[*ec2.DescribeImagesOutput](t)(c.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"self"},
		Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"nuv-machine-*"}}}})).Images
	if len(imgs) != 1 {
		t.Fatalf("DescribeImages owners=self name=nuv-machine-*: %d images, want 1", len(imgs))
	}
	t.Logf("machine image resolved on %s in %.1fs: %s", host, time.Since(t0).Seconds(), aws.ToString(imgs[0].ImageId))

	t0 = time.Now()
	run := ok[*ec2.RunInstancesOutput](t)(c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: imgs[0].ImageId, InstanceType: ec2types.InstanceTypeT3Medium,
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: sn.SubnetId}))
	id := aws.ToString(run.Instances[0].InstanceId)
	t.Cleanup(func() {
		ctx := context.Background()
		if _, err := c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
			t.Errorf("terminate %s: %v", id, err)
		}
		waitInstance(t, c, id, ec2types.InstanceStateNameTerminated, 2*time.Minute)
		if _, err := c.DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: sn.SubnetId}); err != nil {
			t.Errorf("delete subnet: %v", err)
		}
		if _, err := c.DeleteVpc(ctx, &ec2.DeleteVpcInput{VpcId: vpc.VpcId}); err != nil {
			t.Errorf("delete vpc: %v", err)
		}
		// The emulator removes a deleted subnet's network in the background, once its machines are
		// gone: wait for that before the emulator is stopped (the clean-up registered first runs last).
		waitNetworkGone(t, host, awsemu.SubnetNetwork(aws.ToString(sn.SubnetId)))
	})
	in := waitInstance(t, c, id, ec2types.InstanceStateNameRunning, 4*time.Minute)
	t.Logf("RunInstances to running: %.1fs (address %s)", time.Since(t0).Seconds(), aws.ToString(in.PrivateIpAddress))

	// The machine is a running container on the daemon DOCKER_HOST names.
	out, err := exec.Command("docker", "--host", host, "ps", "--filter", "label="+awsemu.LabelInstance+"="+id,
		"--format", "{{.State}} {{.Label \""+awsemu.LabelInstance+"\"}}").CombinedOutput()
	if err != nil {
		t.Fatalf("docker --host %s ps: %v\n%s", host, err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "running "+id {
		t.Fatalf("containers of instance %s on %s: %q, want one running", id, host, got)
	}
}

// waitInstance polls until instance id is in state want and returns it.
func waitInstance(t *testing.T, c *ec2.Client, id string, want ec2types.InstanceStateName, timeout time.Duration) ec2types.Instance {
	t.Helper()
	var last ec2types.Instance
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, err := c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
		if err != nil {
			t.Fatalf("DescribeInstances %s: %v", id, err)
		}
		if len(out.Reservations) == 1 && len(out.Reservations[0].Instances) == 1 {
			last = out.Reservations[0].Instances[0]
			if last.State != nil && last.State.Name == want {
				return last
			}
		}
	}
	t.Fatalf("instance %s is not %s after %s: %+v (reason %q)", id, want, timeout, last.State, aws.ToString(last.StateTransitionReason))
	return last
}

// waitNetworkGone waits until the Docker daemon at host has no network named name; one still there
// after 90 s fails the test and is removed.
func waitNetworkGone(t *testing.T, host, name string) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		out, err := exec.Command("docker", "--host", host, "network", "ls", "--quiet", "--filter", "name=^"+name+"$").Output()
		if err == nil && strings.TrimSpace(string(out)) == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("network %s of the deleted subnet still on %s after 90 s (%v): removing it", name, host, err)
			if out, err := exec.Command("docker", "--host", host, "network", "rm", name).CombinedOutput(); err != nil {
				t.Errorf("remove network %s: %v: %s", name, err, out)
			}
			return
		}
	}
}

package aws

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/nuv-dev/nuv/internal/cluster/nodeimage"
)

func dockerRun(args ...string) (string, error) {
	out, err := exec.Command("docker", args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// askBackend connects to addr and returns the line the backend answers ("" and the error when
// the connection fails).
func askBackend(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

// TestIntegrationELBv2 runs a network load balancer of the emulator as the real thing on the
// project's Docker daemon: two backends (containers of the node image running socat on the
// subnet's network, registered as ip targets), an NLB whose balancer is an HAProxy container at
// its address in the subnet, target health from real TCP checks, traffic through the balancer to
// both backends, one backend stopped (unhealthy, and traffic keeps flowing to the other), a
// restart of the emulator that re-adopts the balancer, the aws CLI's view, and deletion that
// leaves no container and no network.
func TestIntegrationELBv2(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test (Docker, the node image)")
	}
	defer catch(t)
	if out, err := dockerRun("version", "--format", "{{.Server.Version}}"); err != nil {
		t.Fatalf("a Docker daemon is needed (eval \"$(bash hack/dockerd.sh env)\"): %v %s", err, out)
	}
	ctx := context.Background()
	t0 := time.Now()
	image, err := nodeimage.Ensure(ctx, nodeimage.Options{Getenv: os.Getenv})
	if err != nil {
		t.Fatalf("node image: %v", err)
	}
	t.Logf("node image %s (%s)", image, time.Since(t0).Round(time.Millisecond))
	balancers := func() *ContainerBalancers {
		return &ContainerBalancers{Image: func(context.Context) (string, error) { return image, nil }}
	}

	dir := t.TempDir()
	e, stop := startELBEmulator(t, dir, time.Second, balancers(), nil)
	_, _, account, _ := e.Credentials()
	// A VPC range unlikely to collide with another test's networks on the shared daemon.
	octet := 200 + rand.IntN(50)
	vpcCIDR, subnetCIDR := fmt.Sprintf("10.%d.0.0/16", octet), fmt.Sprintf("10.%d.1.0/24", octet)
	ec := ec2.NewFromConfig(e.Cfg)
	vpc, sns := elbNetwork(t, ec, vpcCIDR, subnetCIDR)
	subnet := sns[0]
	network := SubnetNetwork(subnet)
	testLabel := "nuv.dev/test=elbv2-" + account // the backends
	t.Cleanup(func() {
		for _, label := range []string{testLabel, "nuv.dev/aws-account=" + account} {
			if ids, _ := dockerRun("ps", "-aq", "--filter", "label="+label); ids != "" {
				_, _ = dockerRun(append([]string{"rm", "-f", "-v"}, strings.Fields(ids)...)...)
			}
		}
		_, _ = dockerRun("network", "rm", network)
	})

	// The backends: socat answering its name, on the subnet's network at fixed addresses.
	if _, err := balancers().EnsureNetwork(ctx, account, Subnet{ID: subnet, CIDR: subnetCIDR}); err != nil {
		t.Fatal(err)
	}
	backends := map[string]string{} // name -> address
	for i, name := range []string{"backend-a", "backend-b"} {
		ip := fmt.Sprintf("10.%d.1.%d", octet, 10+i)
		if out, err := dockerRun("run", "-d", "--name", "nuv-elbtest-"+account+"-"+name, "--label", testLabel, "--network", network, "--ip", ip,
			"--entrypoint", "socat", image, "TCP-LISTEN:7000,fork,reuseaddr", "SYSTEM:echo "+name); err != nil {
			t.Fatalf("backend %s: %v %s", name, err, out)
		}
		backends[name] = ip
	}

	c := elb.NewFromConfig(e.Cfg)
	created := time.Now()
	lb := must(c.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{Name: aws.String("api"), Type: elbtypes.LoadBalancerTypeEnumNetwork,
		Scheme: elbtypes.LoadBalancerSchemeEnumInternal, Subnets: []string{subnet}})).LoadBalancers[0]
	lbIP := aws.ToString(lb.AvailabilityZones[0].LoadBalancerAddresses[0].PrivateIPv4Address)
	if want := fmt.Sprintf("10.%d.1.254", octet); lbIP != want {
		t.Fatalf("balancer address %s, want %s", lbIP, want)
	}
	tg := must(c.CreateTargetGroup(ctx, &elb.CreateTargetGroupInput{Name: aws.String("api"), Protocol: elbtypes.ProtocolEnumTcp, Port: aws.Int32(7000),
		VpcId: aws.String(vpc), TargetType: elbtypes.TargetTypeEnumIp, HealthCheckIntervalSeconds: aws.Int32(5), HealthCheckTimeoutSeconds: aws.Int32(2),
		HealthyThresholdCount: aws.Int32(2), UnhealthyThresholdCount: aws.Int32(2)})).TargetGroups[0]
	tgARN := aws.ToString(tg.TargetGroupArn)
	must(c.RegisterTargets(ctx, &elb.RegisterTargetsInput{TargetGroupArn: tg.TargetGroupArn,
		Targets: []elbtypes.TargetDescription{{Id: aws.String(backends["backend-a"])}, {Id: aws.String(backends["backend-b"])}}}))
	l := must(c.CreateListener(ctx, &elb.CreateListenerInput{LoadBalancerArn: lb.LoadBalancerArn, Protocol: elbtypes.ProtocolEnumTcp, Port: aws.Int32(80),
		DefaultActions: []elbtypes.Action{{Type: elbtypes.ActionTypeEnumForward, TargetGroupArn: tg.TargetGroupArn}}})).Listeners[0]

	toActive := waitFor(t, "load balancer active", 2*time.Minute, func() bool {
		return must(c.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{LoadBalancerArns: []string{aws.ToString(lb.LoadBalancerArn)}})).LoadBalancers[0].State.Code == elbtypes.LoadBalancerStateEnumActive
	})
	toActive = time.Since(created)
	toHealthy := waitFor(t, "both targets healthy", time.Minute, func() bool {
		st := targetStates(t, c, tgARN)
		return st[backends["backend-a"]].State == elbtypes.TargetHealthStateEnumHealthy && st[backends["backend-b"]].State == elbtypes.TargetHealthStateEnumHealthy
	})
	t.Logf("FIGURE time to active: %s; both targets healthy %s later", toActive.Round(time.Millisecond), toHealthy.Round(time.Millisecond))
	container := balancerContainer(account, "api", aws.ToString(lb.LoadBalancerArn)[len(aws.ToString(lb.LoadBalancerArn))-16:])
	containerID, err := dockerRun("inspect", "-f", "{{.Id}}", container)
	if err != nil {
		t.Fatalf("the balancer container %s: %v %s", container, err, containerID)
	}

	// The HAProxy in the balancer takes what the emulator renders (the live configuration and the
	// golden ones of TestRenderHAProxy, HTTP checks among them).
	goldens, _ := filepath.Glob(filepath.Join("testdata", "haproxy", "*.cfg"))
	for _, f := range append([]string{""}, goldens...) {
		cmd := exec.Command("docker", "exec", "-i", container, "/bin/sh", "-c", "cat > /tmp/check.cfg && haproxy -c -f /tmp/check.cfg")
		if f == "" {
			cmd = exec.Command("docker", "exec", container, "haproxy", "-c", "-f", haproxyConfig)
		} else if cmd.Stdin, err = os.Open(f); err != nil {
			t.Fatal(err)
		}
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Configuration file is valid") {
			t.Fatalf("haproxy -c of %q: %v %s", f, err, out)
		}
	}

	// Traffic through the balancer's address reaches both backends.
	front := net.JoinHostPort(lbIP, "80")
	seen := map[string]int{}
	waitFor(t, "connections through the balancer reach both backends", 30*time.Second, func() bool {
		if got, err := askBackend(front); err == nil {
			seen[got]++
		}
		return seen["backend-a"] > 0 && seen["backend-b"] > 0
	})
	t.Logf("answers through %s: %v", front, seen)

	// A restarted emulator re-adopts the balancer (the same container) and it keeps serving.
	stop()
	e, _ = startELBEmulator(t, dir, time.Second, balancers(), nil)
	c, ec = elb.NewFromConfig(e.Cfg), ec2.NewFromConfig(e.Cfg)
	if lbs := must(c.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{Names: []string{"api"}})).LoadBalancers; lbs[0].State.Code != elbtypes.LoadBalancerStateEnumActive {
		t.Fatalf("after a restart: %+v", lbs[0].State)
	}
	if id, _ := dockerRun("inspect", "-f", "{{.Id}}", container); id != containerID {
		t.Fatalf("the balancer container changed across a restart: %s, was %s", id, containerID)
	}
	if got, err := askBackend(front); err != nil || !strings.HasPrefix(got, "backend-") {
		t.Fatalf("through the balancer after a restart: %q %v", got, err)
	}

	// One backend stops: it turns unhealthy, and new connections all go to the other.
	stopped := time.Now()
	if out, err := dockerRun("stop", "-t", "1", "nuv-elbtest-"+account+"-backend-a"); err != nil {
		t.Fatalf("stop backend-a: %v %s", err, out)
	}
	waitFor(t, "the stopped backend unhealthy", time.Minute, func() bool {
		st := targetStates(t, c, tgARN)[backends["backend-a"]]
		return st.State == elbtypes.TargetHealthStateEnumUnhealthy && st.Reason == elbtypes.TargetHealthReasonEnumFailedHealthChecks
	})
	toUnhealthy := time.Since(stopped)
	t.Logf("FIGURE a stopped target unhealthy after %s (interval 5s, unhealthy threshold 2)", toUnhealthy.Round(time.Millisecond))
	if st := targetStates(t, c, tgARN)[backends["backend-b"]]; st.State != elbtypes.TargetHealthStateEnumHealthy {
		t.Fatalf("the running backend: %+v", st)
	}
	inARow, failures := 0, 0
	waitFor(t, "10 connections in a row answered by backend-b", 30*time.Second, func() bool {
		got, err := askBackend(front)
		if err != nil || got != "backend-b" {
			inARow, failures = 0, failures+1
			return false
		}
		inARow++
		return inARow >= 10
	})
	t.Logf("after the stop: 10 connections in a row to backend-b (%d failed or went elsewhere first)", failures)

	// The aws CLI sees the load balancer and the targets' health.
	key, secret, _, region := e.Credentials()
	cli := func(args ...string) []byte {
		cmd := exec.Command("aws", append(append([]string{"elbv2"}, args...), "--endpoint-url", e.URL, "--region", region, "--output", "json")...)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "AWS_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "AWS_ACCESS_KEY_ID="+key, "AWS_SECRET_ACCESS_KEY="+secret, "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("aws elbv2 %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	var lbsOut struct {
		LoadBalancers []struct {
			LoadBalancerName  string
			State             struct{ Code string }
			AvailabilityZones []struct {
				SubnetId              string
				LoadBalancerAddresses []struct{ PrivateIPv4Address string }
			}
		}
	}
	if err := json.Unmarshal(cli("describe-load-balancers"), &lbsOut); err != nil {
		t.Fatal(err)
	}
	if len(lbsOut.LoadBalancers) != 1 || lbsOut.LoadBalancers[0].LoadBalancerName != "api" || lbsOut.LoadBalancers[0].State.Code != "active" ||
		lbsOut.LoadBalancers[0].AvailabilityZones[0].LoadBalancerAddresses[0].PrivateIPv4Address != lbIP {
		t.Fatalf("aws elbv2 describe-load-balancers: %+v", lbsOut)
	}
	var healthOut struct {
		TargetHealthDescriptions []struct {
			Target       struct{ Id string }
			TargetHealth struct{ State, Reason string }
		}
	}
	if err := json.Unmarshal(cli("describe-target-health", "--target-group-arn", tgARN), &healthOut); err != nil {
		t.Fatal(err)
	}
	cliStates := map[string]string{}
	for _, d := range healthOut.TargetHealthDescriptions {
		cliStates[d.Target.Id] = d.TargetHealth.State + "/" + d.TargetHealth.Reason
	}
	if cliStates[backends["backend-a"]] != "unhealthy/Target.FailedHealthChecks" || cliStates[backends["backend-b"]] != "healthy/" {
		t.Fatalf("aws elbv2 describe-target-health: %v", cliStates)
	}

	// Deletion leaves no container and no network.
	for _, name := range []string{"backend-a", "backend-b"} {
		if out, err := dockerRun("rm", "-f", "nuv-elbtest-"+account+"-"+name); err != nil {
			t.Fatalf("remove %s: %v %s", name, err, out)
		}
	}
	must(c.DeleteListener(ctx, &elb.DeleteListenerInput{ListenerArn: l.ListenerArn}))
	must(c.DeleteLoadBalancer(ctx, &elb.DeleteLoadBalancerInput{LoadBalancerArn: lb.LoadBalancerArn}))
	must(c.DeleteTargetGroup(ctx, &elb.DeleteTargetGroupInput{TargetGroupArn: tg.TargetGroupArn}))
	waitFor(t, "the balancer container and the subnet's network gone", time.Minute, func() bool {
		ids, _ := dockerRun("ps", "-aq", "--filter", "label=nuv.dev/aws-account="+account)
		_, netErr := dockerRun("network", "inspect", network)
		return ids == "" && netErr != nil
	})
	must(ec.DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: aws.String(subnet)}))
	must(ec.DeleteVpc(ctx, &ec2.DeleteVpcInput{VpcId: aws.String(vpc)}))
}

package aws

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/golden"
)

// recordingBalancers stands in for the balancer containers in the API tests (the integration
// test runs the real ones): it keeps what each balancer was last told to do and what was removed,
// and refuses to come up while failing is set.
type recordingBalancers struct {
	mu      sync.Mutex
	last    map[string]Balancer
	ensures map[string]int
	removed map[string][]Subnet
	failing bool
}

func newRecordingBalancers() *recordingBalancers {
	return &recordingBalancers{last: map[string]Balancer{}, ensures: map[string]int{}, removed: map[string][]Subnet{}}
}

func (r *recordingBalancers) Ensure(_ context.Context, b Balancer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failing {
		return fmt.Errorf("the balancer does not start")
	}
	r.last[b.Container], r.ensures[b.Container] = b, r.ensures[b.Container]+1
	return nil
}

func (r *recordingBalancers) Remove(_ context.Context, container string, subnets []Subnet) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.last, container)
	r.removed[container] = subnets
	return nil
}

func (r *recordingBalancers) get(container string) (Balancer, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[container], r.ensures[container]
}

// startELBEmulator serves an emulator whose balancers are bal and whose health checks dial
// through dial (nil: the network) until the test ends; stop ends it earlier.
func startELBEmulator(t testing.TB, dir string, delay time.Duration, bal Balancers, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (e *testEmulator, stop func()) {
	t.Helper()
	s, err := New(Options{Dir: dir, Delay: delay, Balancers: bal, Log: cli.NewLogger(testLog{t}, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if dial != nil {
		s.elbDial = dial
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, s) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("emulator stopped with %v", err)
			}
		})
	}
	t.Cleanup(stop)
	key, secret, _, region := s.Credentials()
	url := "http://" + ln.Addr().String()
	cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(key, secret, ""), BaseEndpoint: aws.String(url)}
	return &testEmulator{Server: s, URL: url, Cfg: cfg, Dir: dir}, stop
}

// testLog writes the emulator's log to the test's.
type testLog struct{ t testing.TB }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// addrMap dials the targets' VPC addresses at loopback listeners (the test cannot own 10.x
// addresses); an address it does not know is refused, as a host without that address refuses.
type addrMap struct {
	mu sync.Mutex
	to map[string]string
}

func (m *addrMap) set(from, to string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.to[from] = to
}

func (m *addrMap) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	m.mu.Lock()
	to, ok := m.to[addr]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("dial %s: connection refused", addr)
	}
	return (&net.Dialer{}).DialContext(ctx, network, to)
}

// tcpServer accepts connections on loopback until closed.
func tcpServer(t testing.TB) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln
}

// elbNetwork makes a VPC with three subnets (two in us-east-1a) through the EC2 API.
func elbNetwork(t testing.TB, c *ec2.Client, cidr string, subnets ...string) (vpc string, ids []string) {
	ctx := context.Background()
	vpc = aws.ToString(must(c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String(cidr)})).Vpc.VpcId)
	for i, sn := range subnets {
		zone := []string{"us-east-1a", "us-east-1b", "us-east-1a"}[i%3]
		ids = append(ids, aws.ToString(must(c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: aws.String(vpc), CidrBlock: aws.String(sn), AvailabilityZone: aws.String(zone)})).Subnet.SubnetId))
	}
	return vpc, ids
}

// waitFor polls cond every 100ms until it holds or timeout passes, and says how long it took.
func waitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) time.Duration {
	t.Helper()
	t0 := time.Now()
	for !cond() {
		if time.Since(t0) > timeout {
			t.Fatalf("%s: not after %s", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(t0)
}

func targetStates(t testing.TB, c *elb.Client, tg string) map[string]elbtypes.TargetHealth {
	out := map[string]elbtypes.TargetHealth{}
	for _, d := range must(c.DescribeTargetHealth(context.Background(), &elb.DescribeTargetHealthInput{TargetGroupArn: aws.String(tg)})).TargetHealthDescriptions {
		out[aws.ToString(d.Target.Id)] = *d.TargetHealth
	}
	return out
}

// TestELBv2Refusals: bad requests are refused with the service's error codes, before anything is
// made.
func TestELBv2Refusals(t *testing.T) {
	defer catch(t)
	e, _ := startELBEmulator(t, t.TempDir(), 0, newRecordingBalancers(), nil)
	ctx := context.Background()
	c := elb.NewFromConfig(e.Cfg)
	vpc, sn := elbNetwork(t, ec2.NewFromConfig(e.Cfg), "10.0.0.0/16", "10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/24")
	other, _ := elbNetwork(t, ec2.NewFromConfig(e.Cfg), "10.1.0.0/16", "10.1.1.0/24")
	nlb := func(name string, subnets ...string) *elb.CreateLoadBalancerInput {
		return &elb.CreateLoadBalancerInput{Name: aws.String(name), Type: elbtypes.LoadBalancerTypeEnumNetwork, Scheme: elbtypes.LoadBalancerSchemeEnumInternal, Subnets: subnets}
	}
	tg := func(name string, mod func(*elb.CreateTargetGroupInput)) *elb.CreateTargetGroupInput {
		in := &elb.CreateTargetGroupInput{Name: aws.String(name), Protocol: elbtypes.ProtocolEnumTcp, Port: aws.Int32(7000), VpcId: aws.String(vpc), TargetType: elbtypes.TargetTypeEnumIp}
		if mod != nil {
			mod(in)
		}
		return in
	}
	for _, tc := range []struct {
		name string
		call func() error
		code string
	}{
		{"name with an underscore", func() error { _, err := c.CreateLoadBalancer(ctx, nlb("a_b", sn[0])); return err }, "ValidationError"},
		{"name of 33 characters", func() error { _, err := c.CreateLoadBalancer(ctx, nlb(strings.Repeat("a", 33), sn[0])); return err }, "ValidationError"},
		{"name starting internal-", func() error { _, err := c.CreateLoadBalancer(ctx, nlb("internal-x", sn[0])); return err }, "ValidationError"},
		{"application load balancer", func() error {
			in := nlb("alb", sn[0])
			in.Type = elbtypes.LoadBalancerTypeEnumApplication
			_, err := c.CreateLoadBalancer(ctx, in)
			return err
		}, "ValidationError"},
		{"no subnet", func() error { _, err := c.CreateLoadBalancer(ctx, nlb("x")); return err }, "ValidationError"},
		{"unknown subnet", func() error { _, err := c.CreateLoadBalancer(ctx, nlb("x", "subnet-0123456789abcdef0")); return err }, "SubnetNotFound"},
		{"two subnets in one zone", func() error { _, err := c.CreateLoadBalancer(ctx, nlb("x", sn[0], sn[2])); return err }, "InvalidConfigurationRequest"},
		{"internet-facing without an internet gateway", func() error {
			in := nlb("x", sn[0])
			in.Scheme = elbtypes.LoadBalancerSchemeEnumInternetFacing
			_, err := c.CreateLoadBalancer(ctx, in)
			return err
		}, "InvalidSubnet"},
		{"address outside the subnet", func() error {
			_, err := c.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{Name: aws.String("x"), Type: elbtypes.LoadBalancerTypeEnumNetwork, Scheme: elbtypes.LoadBalancerSchemeEnumInternal,
				SubnetMappings: []elbtypes.SubnetMapping{{SubnetId: aws.String(sn[0]), PrivateIPv4Address: aws.String("10.0.2.10")}}})
			return err
		}, "InvalidConfigurationRequest"},
		{"reserved address", func() error {
			_, err := c.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{Name: aws.String("x"), Type: elbtypes.LoadBalancerTypeEnumNetwork, Scheme: elbtypes.LoadBalancerSchemeEnumInternal,
				SubnetMappings: []elbtypes.SubnetMapping{{SubnetId: aws.String(sn[0]), PrivateIPv4Address: aws.String("10.0.1.1")}}})
			return err
		}, "InvalidConfigurationRequest"},
		{"duplicate tag keys", func() error {
			in := nlb("x", sn[0])
			in.Tags = []elbtypes.Tag{{Key: aws.String("k"), Value: aws.String("1")}, {Key: aws.String("k"), Value: aws.String("2")}}
			_, err := c.CreateLoadBalancer(ctx, in)
			return err
		}, "DuplicateTagKeys"},
		{"describe an unknown name", func() error {
			_, err := c.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{Names: []string{"nope"}})
			return err
		}, "LoadBalancerNotFound"},
		{"describe by names and ARNs", func() error {
			_, err := c.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{Names: []string{"a"}, LoadBalancerArns: []string{"arn:aws:elasticloadbalancing:us-east-1:1:loadbalancer/net/a/1"}})
			return err
		}, "ValidationError"},
		{"target group interval below 5", func() error {
			_, err := c.CreateTargetGroup(ctx, tg("x", func(in *elb.CreateTargetGroupInput) { in.HealthCheckIntervalSeconds = aws.Int32(4) }))
			return err
		}, "ValidationError"},
		{"target group healthy threshold 11", func() error {
			_, err := c.CreateTargetGroup(ctx, tg("x", func(in *elb.CreateTargetGroupInput) { in.HealthyThresholdCount = aws.Int32(11) }))
			return err
		}, "ValidationError"},
		{"target group timeout above interval", func() error {
			_, err := c.CreateTargetGroup(ctx, tg("x", func(in *elb.CreateTargetGroupInput) {
				in.HealthCheckIntervalSeconds, in.HealthCheckTimeoutSeconds = aws.Int32(5), aws.Int32(6)
			}))
			return err
		}, "ValidationError"},
		{"target group path with TCP checks", func() error {
			_, err := c.CreateTargetGroup(ctx, tg("x", func(in *elb.CreateTargetGroupInput) { in.HealthCheckPath = aws.String("/healthz") }))
			return err
		}, "ValidationError"},
		{"target group of protocol HTTP", func() error {
			_, err := c.CreateTargetGroup(ctx, tg("x", func(in *elb.CreateTargetGroupInput) { in.Protocol = elbtypes.ProtocolEnumHttp }))
			return err
		}, "ValidationError"},
		{"target group of an unknown VPC", func() error {
			_, err := c.CreateTargetGroup(ctx, tg("x", func(in *elb.CreateTargetGroupInput) { in.VpcId = aws.String("vpc-0123456789abcdef0") }))
			return err
		}, "ValidationError"},
		{"describe an unknown target group", func() error {
			_, err := c.DescribeTargetGroups(ctx, &elb.DescribeTargetGroupsInput{Names: []string{"nope"}})
			return err
		}, "TargetGroupNotFound"},
		{"register in an unknown target group", func() error {
			_, err := c.RegisterTargets(ctx, &elb.RegisterTargetsInput{TargetGroupArn: aws.String("arn:aws:elasticloadbalancing:us-east-1:1:targetgroup/x/1"), Targets: []elbtypes.TargetDescription{{Id: aws.String("10.0.1.5")}}})
			return err
		}, "TargetGroupNotFound"},
		{"describe an unknown listener", func() error {
			_, err := c.DescribeListeners(ctx, &elb.DescribeListenersInput{ListenerArns: []string{"arn:aws:elasticloadbalancing:us-east-1:1:listener/net/a/1/2"}})
			return err
		}, "ListenerNotFound"},
		{"delete an unknown listener", func() error {
			_, err := c.DeleteListener(ctx, &elb.DeleteListenerInput{ListenerArn: aws.String("arn:aws:elasticloadbalancing:us-east-1:1:listener/net/a/1/2")})
			return err
		}, "ListenerNotFound"},
		{"tags of an unknown load balancer", func() error {
			_, err := c.DescribeTags(ctx, &elb.DescribeTagsInput{ResourceArns: []string{"arn:aws:elasticloadbalancing:us-east-1:1:loadbalancer/net/a/1"}})
			return err
		}, "LoadBalancerNotFound"},
		{"an action the emulator does not serve", func() error {
			_, err := c.CreateRule(ctx, &elb.CreateRuleInput{ListenerArn: aws.String("arn:aws:elasticloadbalancing:us-east-1:1:listener/app/a/1/2"), Priority: aws.Int32(1),
				Actions: []elbtypes.Action{{Type: elbtypes.ActionTypeEnumForward, TargetGroupArn: aws.String("x")}}, Conditions: []elbtypes.RuleCondition{{Field: aws.String("path-pattern"), Values: []string{"/"}}}})
			return err
		}, "InvalidAction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer catch(t)
			msg := wantCode(t, tc.call(), tc.code)
			if msg == "" {
				t.Fatal("no message")
			}
		})
	}
	if lbs := must(c.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{})).LoadBalancers; len(lbs) != 0 {
		t.Fatalf("refused calls made load balancers: %+v", lbs)
	}

	// Injected faults reach Elastic Load Balancing too: a throttle twice, which the SDK retries
	// through; an error fault answered in the service's shape.
	for _, f := range []string{`{"operation":"elasticloadbalancing:DescribeLoadBalancers","kind":"throttle","count":2}`,
		`{"operation":"elasticloadbalancing:DescribeTargetGroups","kind":"error","code":"InternalFailure","status":500,"count":5}`} {
		if resp := must(e.admin(http.MethodPost, f)); resp.StatusCode != http.StatusOK {
			t.Fatalf("add fault %s: %s", f, resp.Status)
		}
	}
	must(c.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{}))
	_, err := c.DescribeTargetGroups(ctx, &elb.DescribeTargetGroupsInput{})
	wantCode(t, err, "InternalFailure")
	for _, f := range e.FaultList() {
		if want := map[string]int{"throttle": 2, "error": 3}[f.Kind]; f.Fired != want { // 3: the SDK's attempts
			t.Fatalf("fault %s %s fired %d times, want %d", f.Operation, f.Kind, f.Fired, want)
		}
	}
	if resp := must(e.admin(http.MethodDelete, "")); resp.StatusCode != http.StatusOK {
		t.Fatalf("clear faults: %s", resp.Status)
	}

	// Listener refusals need a load balancer and target groups.
	lb := must(c.CreateLoadBalancer(ctx, nlb("lb", sn[0]))).LoadBalancers[0]
	g := must(c.CreateTargetGroup(ctx, tg("g", nil))).TargetGroups[0]
	g2 := must(c.CreateTargetGroup(ctx, tg("g2", nil))).TargetGroups[0]
	gOther := must(c.CreateTargetGroup(ctx, tg("o", func(in *elb.CreateTargetGroupInput) { in.VpcId = aws.String(other) }))).TargetGroups[0]
	_, err = c.CreateTargetGroup(ctx, tg("g", func(in *elb.CreateTargetGroupInput) { in.Port = aws.Int32(7001) }))
	wantCode(t, err, "DuplicateTargetGroupName")
	if again := must(c.CreateTargetGroup(ctx, tg("g", nil))).TargetGroups[0]; aws.ToString(again.TargetGroupArn) != aws.ToString(g.TargetGroupArn) {
		t.Fatal("creating the same target group again made another")
	}
	_, err = c.CreateLoadBalancer(ctx, nlb("lb", sn[1]))
	wantCode(t, err, "DuplicateLoadBalancerName")
	if again := must(c.CreateLoadBalancer(ctx, nlb("lb", sn[0]))).LoadBalancers[0]; aws.ToString(again.LoadBalancerArn) != aws.ToString(lb.LoadBalancerArn) {
		t.Fatal("creating the same load balancer again made another")
	}
	fwd := func(tg *string) []elbtypes.Action {
		return []elbtypes.Action{{Type: elbtypes.ActionTypeEnumForward, TargetGroupArn: tg}}
	}
	l := must(c.CreateListener(ctx, &elb.CreateListenerInput{LoadBalancerArn: lb.LoadBalancerArn, Protocol: elbtypes.ProtocolEnumTcp, Port: aws.Int32(80), DefaultActions: fwd(g.TargetGroupArn)})).Listeners[0]
	_, err = c.CreateListener(ctx, &elb.CreateListenerInput{LoadBalancerArn: lb.LoadBalancerArn, Protocol: elbtypes.ProtocolEnumTcp, Port: aws.Int32(80), DefaultActions: fwd(g2.TargetGroupArn)})
	wantCode(t, err, "DuplicateListener")
	_, err = c.CreateListener(ctx, &elb.CreateListenerInput{LoadBalancerArn: lb.LoadBalancerArn, Protocol: elbtypes.ProtocolEnumUdp, Port: aws.Int32(53), DefaultActions: fwd(g2.TargetGroupArn)})
	wantCode(t, err, "UnsupportedProtocol")
	_, err = c.CreateListener(ctx, &elb.CreateListenerInput{LoadBalancerArn: lb.LoadBalancerArn, Protocol: elbtypes.ProtocolEnumTcp, Port: aws.Int32(81), DefaultActions: fwd(gOther.TargetGroupArn)})
	wantCode(t, err, "ValidationError")
	_, err = c.CreateListener(ctx, &elb.CreateListenerInput{LoadBalancerArn: aws.String("arn:aws:elasticloadbalancing:us-east-1:1:loadbalancer/net/a/1"), Protocol: elbtypes.ProtocolEnumTcp, Port: aws.Int32(81), DefaultActions: fwd(g2.TargetGroupArn)})
	wantCode(t, err, "LoadBalancerNotFound")
	_, err = c.DeleteTargetGroup(ctx, &elb.DeleteTargetGroupInput{TargetGroupArn: g.TargetGroupArn})
	wantCode(t, err, "ResourceInUse")
	_, err = c.RegisterTargets(ctx, &elb.RegisterTargetsInput{TargetGroupArn: g.TargetGroupArn, Targets: []elbtypes.TargetDescription{{Id: aws.String("8.8.8.8")}}})
	wantCode(t, err, "InvalidTarget")
	_, err = c.RegisterTargets(ctx, &elb.RegisterTargetsInput{TargetGroupArn: g.TargetGroupArn, Targets: []elbtypes.TargetDescription{{Id: aws.String("i-0123456789abcdef0")}}})
	wantCode(t, err, "InvalidTarget")
	_, err = c.DeregisterTargets(ctx, &elb.DeregisterTargetsInput{TargetGroupArn: g.TargetGroupArn, Targets: []elbtypes.TargetDescription{{Id: aws.String("10.0.1.9")}}})
	wantCode(t, err, "InvalidTarget")
	inst := must(c.CreateTargetGroup(ctx, tg("inst", func(in *elb.CreateTargetGroupInput) { in.TargetType = elbtypes.TargetTypeEnumInstance }))).TargetGroups[0]
	_, err = c.RegisterTargets(ctx, &elb.RegisterTargetsInput{TargetGroupArn: inst.TargetGroupArn, Targets: []elbtypes.TargetDescription{{Id: aws.String("i-0123456789abcdef0")}}})
	wantCode(t, err, "InvalidTarget")
	// The subnet of a load balancer cannot go.
	_, err = ec2.NewFromConfig(e.Cfg).DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: aws.String(sn[0])})
	wantCode(t, err, "DependencyViolation")
	must(c.DeleteListener(ctx, &elb.DeleteListenerInput{ListenerArn: l.ListenerArn}))
	must(c.DeleteTargetGroup(ctx, &elb.DeleteTargetGroupInput{TargetGroupArn: g.TargetGroupArn}))
}

// TestELBv2Lifecycle drives a network load balancer through the SDK the way a cluster's apply
// and delete do: provisioning until its balancer runs, then active; target groups with AWS's
// health check defaults; targets going unused -> initial -> healthy, one turning unhealthy when it
// stops answering real TCP checks, draining when deregistered; tags; a restart of the emulator
// that re-adopts the balancer; deletion.
func TestELBv2Lifecycle(t *testing.T) {
	defer catch(t)
	dir := t.TempDir()
	rec := newRecordingBalancers()
	rec.failing = true
	am := &addrMap{to: map[string]string{}}
	e, stop := startELBEmulator(t, dir, 300*time.Millisecond, rec, am.dial)
	ctx := context.Background()
	c := elb.NewFromConfig(e.Cfg)
	ec := ec2.NewFromConfig(e.Cfg)
	vpc, sn := elbNetwork(t, ec, "10.0.0.0/16", "10.0.1.0/24", "10.0.2.0/24")

	lb := must(c.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{Name: aws.String("api"), Type: elbtypes.LoadBalancerTypeEnumNetwork,
		Scheme: elbtypes.LoadBalancerSchemeEnumInternal, Subnets: sn, Tags: []elbtypes.Tag{{Key: aws.String("nuv.dev/cluster"), Value: aws.String("a")}}})).LoadBalancers[0]
	lbARN := aws.ToString(lb.LoadBalancerArn)
	if !regexp.MustCompile(`^arn:aws:elasticloadbalancing:us-east-1:\d{12}:loadbalancer/net/api/[0-9a-f]{16}$`).MatchString(lbARN) ||
		!regexp.MustCompile(`^api-[0-9a-f]{16}\.elb\.us-east-1\.amazonaws\.com$`).MatchString(aws.ToString(lb.DNSName)) ||
		lb.State.Code != elbtypes.LoadBalancerStateEnumProvisioning || aws.ToString(lb.VpcId) != vpc || lb.Type != elbtypes.LoadBalancerTypeEnumNetwork {
		t.Fatalf("load balancer %s %s %+v", lbARN, aws.ToString(lb.DNSName), lb.State)
	}
	var addrs []string
	for _, z := range lb.AvailabilityZones {
		addrs = append(addrs, aws.ToString(z.SubnetId)+"@"+aws.ToString(z.ZoneName)+"="+aws.ToString(z.LoadBalancerAddresses[0].PrivateIPv4Address))
	}
	if want := []string{sn[0] + "@us-east-1a=10.0.1.254", sn[1] + "@us-east-1b=10.0.2.254"}; strings.Join(addrs, " ") != strings.Join(want, " ") {
		t.Fatalf("addresses %v, want %v (the top of each subnet)", addrs, want)
	}
	// It stays provisioning while its balancer does not come up.
	time.Sleep(time.Second)
	if st := must(c.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{Names: []string{"api"}})).LoadBalancers[0].State; st.Code != elbtypes.LoadBalancerStateEnumProvisioning {
		t.Fatalf("state %+v while the balancer is down", st)
	}
	rec.mu.Lock()
	rec.failing = false
	rec.mu.Unlock()
	took := waitFor(t, "active", 30*time.Second, func() bool {
		return must(c.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{LoadBalancerArns: []string{lbARN}})).LoadBalancers[0].State.Code == elbtypes.LoadBalancerStateEnumActive
	})
	t.Logf("active %s after the balancer could come up (a failed balancer is tried again after 5s)", took.Round(time.Millisecond))
	_, _, account, _ := e.Credentials()
	container := balancerContainer(account, "api", lbARN[len(lbARN)-16:])
	b, _ := rec.get(container)
	if len(b.Listen) != 2 || b.Listen[0] != (Subnet{ID: sn[0], CIDR: "10.0.1.0/24", IP: "10.0.1.254", VPC: vpc, VPCCIDR: "10.0.0.0/16"}) || len(b.Listeners) != 0 {
		t.Fatalf("balancer %+v", b)
	}

	// A target group: AWS's defaults for TCP, then faster checks.
	tg := must(c.CreateTargetGroup(ctx, &elb.CreateTargetGroupInput{Name: aws.String("api"), Protocol: elbtypes.ProtocolEnumTcp, Port: aws.Int32(6443),
		VpcId: aws.String(vpc), TargetType: elbtypes.TargetTypeEnumIp})).TargetGroups[0]
	if aws.ToInt32(tg.HealthCheckIntervalSeconds) != 30 || aws.ToInt32(tg.HealthCheckTimeoutSeconds) != 10 || aws.ToInt32(tg.HealthyThresholdCount) != 5 ||
		aws.ToInt32(tg.UnhealthyThresholdCount) != 2 || aws.ToString(tg.HealthCheckPort) != "traffic-port" || tg.HealthCheckProtocol != elbtypes.ProtocolEnumTcp ||
		!aws.ToBool(tg.HealthCheckEnabled) || len(tg.LoadBalancerArns) != 0 {
		t.Fatalf("target group defaults %+v", tg)
	}
	tg = must(c.ModifyTargetGroup(ctx, &elb.ModifyTargetGroupInput{TargetGroupArn: tg.TargetGroupArn, HealthCheckIntervalSeconds: aws.Int32(5),
		HealthCheckTimeoutSeconds: aws.Int32(2), HealthyThresholdCount: aws.Int32(2), UnhealthyThresholdCount: aws.Int32(2)})).TargetGroups[0]
	tgARN := aws.ToString(tg.TargetGroupArn)
	attrs := must(c.ModifyTargetGroupAttributes(ctx, &elb.ModifyTargetGroupAttributesInput{TargetGroupArn: tg.TargetGroupArn,
		Attributes: []elbtypes.TargetGroupAttribute{{Key: aws.String("deregistration_delay.timeout_seconds"), Value: aws.String("0")}}})).Attributes
	if len(attrs) == 0 || aws.ToString(attrs[0].Value) != "0" {
		t.Fatalf("attributes %+v", attrs)
	}
	up, down := tcpServer(t), tcpServer(t)
	am.set("10.0.1.10:6443", up.Addr().String())
	am.set("10.0.2.10:6443", down.Addr().String())
	must(c.RegisterTargets(ctx, &elb.RegisterTargetsInput{TargetGroupArn: tg.TargetGroupArn, Targets: []elbtypes.TargetDescription{{Id: aws.String("10.0.1.10")}, {Id: aws.String("10.0.2.10")}}}))
	if st := targetStates(t, c, tgARN)["10.0.1.10"]; st.State != elbtypes.TargetHealthStateEnumUnused || st.Reason != elbtypes.TargetHealthReasonEnumNotInUse {
		t.Fatalf("target of a group no listener uses: %+v", st)
	}
	nr := must(c.DescribeTargetHealth(ctx, &elb.DescribeTargetHealthInput{TargetGroupArn: tg.TargetGroupArn, Targets: []elbtypes.TargetDescription{{Id: aws.String("10.0.1.99")}}})).TargetHealthDescriptions
	if len(nr) != 1 || nr[0].TargetHealth.Reason != elbtypes.TargetHealthReasonEnumNotRegistered {
		t.Fatalf("unregistered target: %+v", nr)
	}

	l := must(c.CreateListener(ctx, &elb.CreateListenerInput{LoadBalancerArn: lb.LoadBalancerArn, Protocol: elbtypes.ProtocolEnumTcp, Port: aws.Int32(6443),
		DefaultActions: []elbtypes.Action{{Type: elbtypes.ActionTypeEnumForward, TargetGroupArn: tg.TargetGroupArn}}})).Listeners[0]
	if again := must(c.CreateListener(ctx, &elb.CreateListenerInput{LoadBalancerArn: lb.LoadBalancerArn, Protocol: elbtypes.ProtocolEnumTcp, Port: aws.Int32(6443),
		DefaultActions: []elbtypes.Action{{Type: elbtypes.ActionTypeEnumForward, TargetGroupArn: tg.TargetGroupArn}}})).Listeners[0]; aws.ToString(again.ListenerArn) != aws.ToString(l.ListenerArn) {
		t.Fatal("the same listener again made another")
	}
	ls := must(c.DescribeListeners(ctx, &elb.DescribeListenersInput{LoadBalancerArn: lb.LoadBalancerArn})).Listeners
	if len(ls) != 1 || aws.ToInt32(ls[0].Port) != 6443 || aws.ToString(ls[0].DefaultActions[0].TargetGroupArn) != tgARN || ls[0].Protocol != elbtypes.ProtocolEnumTcp {
		t.Fatalf("listeners %+v", ls)
	}
	if st := targetStates(t, c, tgARN)["10.0.1.10"]; st.State != elbtypes.TargetHealthStateEnumInitial {
		t.Fatalf("target once a listener uses its group: %+v", st)
	}
	if g := must(c.DescribeTargetGroups(ctx, &elb.DescribeTargetGroupsInput{LoadBalancerArn: lb.LoadBalancerArn})).TargetGroups; len(g) != 1 || len(g[0].LoadBalancerArns) != 1 {
		t.Fatalf("target groups of the load balancer %+v", g)
	}
	healthy := waitFor(t, "both targets healthy", 20*time.Second, func() bool {
		st := targetStates(t, c, tgARN)
		return st["10.0.1.10"].State == elbtypes.TargetHealthStateEnumHealthy && st["10.0.2.10"].State == elbtypes.TargetHealthStateEnumHealthy
	})
	t.Logf("both targets healthy after %s (interval 5s, healthy threshold 2)", healthy.Round(time.Millisecond))
	waitFor(t, "the balancer forwards to both", 5*time.Second, func() bool {
		b, _ := rec.get(container)
		return len(b.Listeners) == 1 && len(b.Listeners[0].Targets) == 2 && b.Listeners[0].Check.Interval == 5*time.Second
	})

	down.Close()
	unhealthy := waitFor(t, "the stopped target unhealthy", 20*time.Second, func() bool {
		st := targetStates(t, c, tgARN)["10.0.2.10"]
		return st.State == elbtypes.TargetHealthStateEnumUnhealthy && st.Reason == elbtypes.TargetHealthReasonEnumFailedHealthChecks
	})
	t.Logf("stopped target unhealthy after %s (unhealthy threshold 2)", unhealthy.Round(time.Millisecond))
	waitFor(t, "the balancer forwards to the healthy target only", 5*time.Second, func() bool {
		b, _ := rec.get(container)
		return len(b.Listeners) == 1 && len(b.Listeners[0].Targets) == 1 && b.Listeners[0].Targets[0] == BalancerTarget{IP: "10.0.1.10", Port: 6443}
	})
	if st := targetStates(t, c, tgARN)["10.0.1.10"]; st.State != elbtypes.TargetHealthStateEnumHealthy {
		t.Fatalf("the answering target: %+v", st)
	}

	// Tags on all three kinds of resource.
	must(c.AddTags(ctx, &elb.AddTagsInput{ResourceArns: []string{lbARN, tgARN, aws.ToString(l.ListenerArn)}, Tags: []elbtypes.Tag{{Key: aws.String("team"), Value: aws.String("x")}}}))
	must(c.RemoveTags(ctx, &elb.RemoveTagsInput{ResourceArns: []string{lbARN}, TagKeys: []string{"nuv.dev/cluster"}}))
	tags := must(c.DescribeTags(ctx, &elb.DescribeTagsInput{ResourceArns: []string{lbARN, tgARN, aws.ToString(l.ListenerArn)}})).TagDescriptions
	if len(tags) != 3 || len(tags[0].Tags) != 1 || aws.ToString(tags[0].Tags[0].Key) != "team" || len(tags[1].Tags) != 1 || len(tags[2].Tags) != 1 {
		t.Fatalf("tags %+v", tags)
	}

	// A restart re-adopts the balancer: the new emulator configures the same container again.
	stop()
	rec2 := newRecordingBalancers()
	e2, _ := startELBEmulator(t, dir, 300*time.Millisecond, rec2, am.dial)
	c = elb.NewFromConfig(e2.Cfg)
	waitFor(t, "the balancer re-adopted", 10*time.Second, func() bool {
		b, n := rec2.get(container)
		return n > 0 && len(b.Listeners) == 1
	})
	if lbs := must(c.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{})).LoadBalancers; len(lbs) != 1 || lbs[0].State.Code != elbtypes.LoadBalancerStateEnumActive {
		t.Fatalf("after a restart: %+v", lbs)
	}

	// Deregistration drains (delay 0 here: at once), and the target is gone.
	must(c.DeregisterTargets(ctx, &elb.DeregisterTargetsInput{TargetGroupArn: tg.TargetGroupArn, Targets: []elbtypes.TargetDescription{{Id: aws.String("10.0.2.10")}}}))
	waitFor(t, "the deregistered target gone", 5*time.Second, func() bool {
		_, ok := targetStates(t, c, tgARN)["10.0.2.10"]
		return !ok
	})

	// Deletion: the load balancer goes at once, its listeners with it, its balancer after.
	must(c.DeleteLoadBalancer(ctx, &elb.DeleteLoadBalancerInput{LoadBalancerArn: lb.LoadBalancerArn}))
	must(c.DeleteLoadBalancer(ctx, &elb.DeleteLoadBalancerInput{LoadBalancerArn: lb.LoadBalancerArn})) // gone already: no error
	_, err := c.DescribeListeners(ctx, &elb.DescribeListenersInput{ListenerArns: []string{aws.ToString(l.ListenerArn)}})
	wantCode(t, err, "ListenerNotFound")
	waitFor(t, "the balancer removed", 5*time.Second, func() bool {
		rec2.mu.Lock()
		defer rec2.mu.Unlock()
		return len(rec2.removed[container]) == 2
	})
	if st := targetStates(t, c, tgARN)["10.0.1.10"]; st.State != elbtypes.TargetHealthStateEnumUnused {
		t.Fatalf("target after its load balancer went: %+v", st)
	}
	must(c.DeleteTargetGroup(ctx, &elb.DeleteTargetGroupInput{TargetGroupArn: tg.TargetGroupArn}))
	for _, id := range sn {
		must(ec2.NewFromConfig(e2.Cfg).DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: aws.String(id)}))
	}
}

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestRenderHAProxy pins the configuration a balancer runs: a TCP frontend per listener, round
// robin over the targets, HAProxy's own checks with the target group's interval, timeout and
// thresholds (TCP, or HTTP on another port), and a balancer without listeners.
func TestRenderHAProxy(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    Balancer
	}{
		{"no-listeners", Balancer{LoadBalancer: "api", Account: "123456789012"}},
		{"two-listeners", Balancer{LoadBalancer: "api", Account: "123456789012", Listeners: []BalancerListener{
			{Port: 6443, Targets: []BalancerTarget{{IP: "10.0.1.10", Port: 6443}, {IP: "10.0.2.10", Port: 6443}},
				Check: BalancerCheck{Protocol: "TCP", Interval: 10 * time.Second, Timeout: 5 * time.Second, Rise: 3, Fall: 2}},
			{Port: 8080, Targets: []BalancerTarget{{IP: "10.0.1.11", Port: 30080}},
				Check: BalancerCheck{Protocol: "HTTP", Port: 10256, Path: "/healthz", Interval: 30 * time.Second, Timeout: 6 * time.Second, Rise: 5, Fall: 2}},
			{Port: 9000, Check: BalancerCheck{Protocol: "TCP", Interval: 30 * time.Second, Timeout: 10 * time.Second, Rise: 5, Fall: 2}},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", "haproxy", tc.name+".cfg"), RenderHAProxy(tc.b), *update)
		})
	}
}

// TestELBv2HealthCheck: a check passes or fails the way the target group's protocol and matcher
// say, against real servers on loopback.
func TestELBv2HealthCheck(t *testing.T) {
	httpSrv := func(code int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/healthz" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Location", "/elsewhere")
			w.WriteHeader(code)
		}))
		t.Cleanup(srv.Close)
		return strings.TrimPrefix(srv.URL, "http://")
	}
	closed := tcpServer(t)
	closed.Close()
	tcp := func() elbHealthCheck { return elbHealthCheck{Protocol: "TCP", Timeout: 2} }
	hc := func(path, matcher string) elbHealthCheck {
		return elbHealthCheck{Protocol: "HTTP", Path: path, Matcher: matcher, Timeout: 2}
	}
	for _, tc := range []struct {
		name string
		addr string
		hc   elbHealthCheck
		ok   bool
	}{
		{"TCP to a listening port", tcpServer(t).Addr().String(), tcp(), true},
		{"TCP to a closed port", closed.Addr().String(), tcp(), false},
		{"HTTP 200 within 200-399", httpSrv(200), hc("/healthz", "200-399"), true},
		{"HTTP 302 within 200-399, not followed", httpSrv(302), hc("/healthz", "200-399"), true},
		{"HTTP 500", httpSrv(500), hc("/healthz", "200-399"), false},
		{"HTTP 204 against matcher 200", httpSrv(204), hc("/healthz", "200"), false},
		{"HTTP 204 against matcher 200,204", httpSrv(204), hc("/healthz", "200,204"), true},
		{"HTTP on the wrong path", httpSrv(200), hc("/", "200-399"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkTarget(context.Background(), defaultDial, tc.addr, tc.hc)
			if (err == nil) != tc.ok {
				t.Fatalf("check of %s: %v, want ok=%v", tc.addr, err, tc.ok)
			}
		})
	}
}

package awsmachines

import (
	"context"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awstest"
	"io"
	"net/http"
	oexec "os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// smallHAProxy is the smallest self-managed cluster: one control plane behind an HAProxy machine
// and one worker, in one zone without a NAT gateway.
const smallHAProxy = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: sm}
spec:
  provider: aws
  zones: [us-east-1a]
  networking: {vpcCIDR: 10.77.0.0/16}
  nodeGroups:
  - {name: workers, count: 1, instanceType: m6i.large}
  aws:
    nat: none
    loadBalancer: {type: haproxy}
`

// machinesWorld is the emulator (its instances real containers of nuv's node image) and the
// self-managed provider on an engine with a state directory.
type machinesWorld struct {
	// log is what the provider and the engine printed
	log *transcript
	emu *awstest.Emulator
	p   *Provider
	eng *engine.Engine
	ec2 *ec2.Client
}

func newMachinesWorld(t *testing.T) *machinesWorld {
	t.Helper()
	if testing.Short() {
		t.Skip("runs EC2 instances as containers of nuv's node image and bootstraps Kubernetes on them; skipped under -short")
	}
	e := awstest.StartEmulator(t, 200*time.Millisecond)
	log := &transcript{}
	p := New(t.TempDir(), "nuv", e.Getenv, cli.NewLogger(testWriter{t, log}, 0))
	p.Home = t.TempDir()
	p.Poll = 300 * time.Millisecond
	eng := &engine.Engine{Providers: map[string]cluster.Provider{Name: p}, Store: state.Dir{Path: t.TempDir()}, Out: testWriter{t, log}}
	ctx := context.Background()
	s, err := p.session(ctx, awstest.Parse(t, smallHAProxy), Machines{})
	if err != nil {
		t.Fatal(err)
	}
	return &machinesWorld{log: log, emu: e, p: p, eng: eng, ec2: s.EC2}
}

// running lists the cluster's instances that are not terminated, by name tag.
func (w *machinesWorld) running(t *testing.T, name string) map[string]string {
	t.Helper()
	out, err := w.ec2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + awsnet.TagCluster), Values: []string{name}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped"}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			got[awsnet.TagsOf(in.Tags)[awsnet.TagResource]] = aws.ToString(in.InstanceId)
		}
	}
	return got
}

// waitNoNetworks waits until the Docker daemon has no machine network of the emulator's VPC with
// network cidr left (the emulator removes a deleted subnet's network once its machines are gone).
func waitNoNetworks(t *testing.T, cidr string) {
	t.Helper()
	var left string
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		out, err := oexec.Command("docker", "network", "ls", "--filter", "label=nuv.dev/ec2-vpc-cidr="+cidr, "--format", "{{.Name}}").Output()
		if err != nil {
			t.Fatalf("docker network ls: %v", err)
		}
		if left = strings.TrimSpace(string(out)); left == "" {
			return
		}
	}
	t.Errorf("machine networks of VPC %s left after delete: %s", cidr, left)
}

// ReadyAfterApply is what a user sees the moment apply returned: one look, no wait, through the
// kubeconfig apply wrote (its server the load balancer): the API answers and exactly n nodes are
// registered, every one Ready.
func ReadyAfterApply(t *testing.T, kubeconfig string, n int) {
	t.Helper()
	ctx := context.Background()
	if err := kit.NodesReady(ctx, kubeconfig, n); err != nil {
		t.Fatalf("right after apply returned: %v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != n {
		t.Fatalf("right after apply returned: %d nodes registered, want %d", len(nodes.Items), n)
	}
}

// WaitMachinesReady waits until the cluster behind kubeconfig has n Ready nodes and CoreDNS runs.
func WaitMachinesReady(t *testing.T, kubeconfig string, n int) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	var last string
	for deadline := time.Now().Add(4 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			last = err.Error()
			continue
		}
		ready := 0
		for _, nd := range nodes.Items {
			for _, c := range nd.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-dns"})
		if err != nil {
			last = err.Error()
			continue
		}
		dns := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				dns++
			}
		}
		last = strings.Join([]string{"ready nodes", itoa(ready), "of", itoa(len(nodes.Items)), "coredns running", itoa(dns)}, " ")
		if ready == n && len(nodes.Items) == n && dns > 0 {
			return cs
		}
	}
	t.Fatalf("cluster of %s not ready: %s", kubeconfig, last)
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }

// checkPodNet checks the pod network's steps on every node of cluster ha: its machine's
// source/destination check is off, and the cluster's private route table routes the node's pod
// range (spec.podCIDR) to that machine; the etcd and load-balancer machines keep their check. It
// returns the table's routes to instances: instance ID -> destination.
func (w *machinesWorld) checkPodNet(t *testing.T, cs *kubernetes.Clientset) map[string]string {
	t.Helper()
	ctx := context.Background()
	out, err := w.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + awsnet.TagCluster), Values: []string{"ha"}}, {Name: aws.String("instance-state-name"), Values: []string{"running"}}}})
	if err != nil {
		t.Fatal(err)
	}
	rts, err := w.ec2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{{Name: aws.String("tag:" + awsnet.TagCluster), Values: []string{"ha"}}}})
	if err != nil {
		t.Fatal(err)
	}
	to := map[string]string{}     // destination -> instance, in the private table
	routes := map[string]string{} // instance -> destination
	for _, rt := range rts.RouteTables {
		if awsnet.TagsOf(rt.Tags)[awsnet.TagResource] != awsnet.Key(awsnet.KindRouteTable, "private") {
			continue
		}
		for _, r := range rt.Routes {
			if id := aws.ToString(r.InstanceId); id != "" {
				if r.State != ec2types.RouteStateActive {
					t.Errorf("route %s -> %s is %s", aws.ToString(r.DestinationCidrBlock), id, r.State)
				}
				to[aws.ToString(r.DestinationCidrBlock)] = id
				routes[id] = aws.ToString(r.DestinationCidrBlock)
			}
		}
	}
	nodes := 0
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			k, id := awsnet.TagsOf(in.Tags)[awsnet.TagResource], aws.ToString(in.InstanceId)
			role := awsnet.TagsOf(in.Tags)[TagRole]
			if !carriesPods(role) {
				if !aws.ToBool(in.SourceDestCheck) {
					t.Errorf("%s (%s, %s) has its source/destination check off", k, id, role)
				}
				continue
			}
			nodes++
			if aws.ToBool(in.SourceDestCheck) {
				t.Errorf("node machine %s (%s) has its source/destination check on", k, id)
			}
			node, err := cs.CoreV1().Nodes().Get(ctx, nodeName("ha", k), metav1.GetOptions{})
			if err != nil {
				t.Errorf("node of %s: %v", k, err)
				continue
			}
			if c := node.Spec.PodCIDR; c == "" || to[c] != id {
				t.Errorf("node %s: its pod range %q is routed to %q, want its machine %s (routes %v)", node.Name, c, to[c], id, to)
			}
		}
	}
	if nodes == 0 || len(routes) != nodes {
		t.Errorf("%d routes to instances in the private route table for %d nodes: %v", len(routes), nodes, to)
	}
	t.Logf("pod routes: %v", to)
	return routes
}

// testWriter writes what the engine and the provider say to the test's log, line by line.
// testWriter logs what it is given to the test and, when transcript is set, keeps it there too.
type testWriter struct {
	t          *testing.T
	transcript *transcript
}

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(b), "\n"))
	if w.transcript != nil {
		w.transcript.mu.Lock()
		w.transcript.b.Write(b)
		w.transcript.mu.Unlock()
	}
	return len(b), nil
}

// transcript is what the provider and the engine printed, in order (they print from one goroutine
// at a time, through one lock).
type transcript struct {
	mu sync.Mutex
	b  strings.Builder
}

// String is the transcript so far.
func (tr *transcript) String() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.b.String()
}

// haStacked is three control planes with stacked etcd behind a Network Load Balancer and one
// worker, in one zone.
const haStacked = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: ha}
spec:
  provider: aws
  zones: [us-east-1a]
  networking: {vpcCIDR: 10.78.0.0/16}
  controlPlane: {count: 3}
  nodeGroups:
  - {name: workers, count: 1, instanceType: m6i.large}
  aws:
    nat: none
`

// TestIntegrationMachinesHeal makes three control planes (stacked etcd) behind a Network Load
// Balancer (a real HAProxy container) and a worker, their machines booting at the same time; then
// heals the losses of stackedHeals in turn, each a subtest (heal_integration_test.go):
// machines terminated through the EC2 API behind nuv's back, the API answering through the load
// balancer meanwhile, apply replacing them, removing their dead etcd members and nodes and joining
// the new machines. Then day two on the same cluster: a new instance type of
// the control planes rolls them one at a time while a prober counts the API's answers through the
// load balancer (roll), and the worker group scales 1 -> 2 -> 1, the machine that goes drained
// first and its pod moved (scale); then delete leaves nothing.
func TestIntegrationMachinesHeal(t *testing.T) {
	w := newMachinesWorld(t)
	ctx := context.Background()
	c := awstest.Parse(t, haStacked)
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			if _, err := w.eng.Delete(context.Background(), "ha"); err != nil {
				t.Errorf("delete: %v", err)
			}
			waitNoNetworks(t, "10.78.0.0/16")
		}
	})
	t0 := time.Now()
	if _, err := w.eng.Apply(ctx, c, engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	kc := w.p.KubeconfigPath("ha")
	ReadyAfterApply(t, kc, 4)
	cs := WaitMachinesReady(t, kc, 4)
	t.Logf("3 control planes and a worker Ready in %.1fs", time.Since(t0).Seconds())
	w.checkPodNet(t, cs)

	for _, hc := range stackedHeals {
		if !t.Run("heal-"+hc.name, func(t *testing.T) { w.heal(t, haStacked, cs, hc) }) {
			t.FailNow()
		}
	}
	tHealed := time.Now()
	before := w.running(t, "ha")
	rolled := w.roll(t, haStacked)
	t.Logf("roll: %.1fs", time.Since(tHealed).Seconds())
	routes := w.checkPodNet(t, cs)
	for k, id := range before {
		if strings.HasPrefix(k, "instance/control-plane-") && routes[id] != "" {
			t.Errorf("a route of pods %s still leads to %s, the machine of %s before the roll", routes[id], id, k)
		}
	}
	tRolled := time.Now()
	w.scale(t, rolled, cs)
	t.Logf("scale 1->2->1: %.1fs", time.Since(tRolled).Seconds())
	deleted = true
	if _, err := w.eng.Delete(ctx, "ha"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if got := w.running(t, "ha"); len(got) != 0 {
		t.Errorf("instances after delete: %v", got)
	}
	waitNoNetworks(t, "10.78.0.0/16")
}

// setFaults replaces the emulator's injected faults with the JSON list faults.
func (w *machinesWorld) setFaults(t *testing.T, faults string) {
	t.Helper()
	req, err := emucore.NewAdminRequest(context.Background(), http.MethodPut, w.emu.URL+"/_nuv/faults", w.emu.AdminToken, strings.NewReader(faults))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("set the emulator's faults %s: %s %s", faults, resp.Status, b)
	}
}

// Command selfmanaged is the benchmark of nuv's self-managed clusters (`provider: aws`: kubeadm on
// EC2 machines behind a load balancer) against nuv's AWS emulator, whose instances are real
// privileged containers of nuv's node image on the project's Docker daemon and whose Network Load
// Balancer is a real HAProxy container. It times, each as a whole nuv process plus the wait a user
// does after it:
//
//   - create: `nuv cluster apply -f` of 3 control planes (stacked etcd) behind an NLB and one
//     worker, to every node Ready through the kubeconfig (goal on a 2-core machine: <= 120 s;
//     kOps' published figure on real AWS is about 10 minutes);
//   - heal: a control plane terminated through the EC2 API behind nuv's back, then `nuv cluster
//     apply -f` to every node Ready again (goal <= 60 s); the termination's own wait is not counted;
//   - roll: a change of the control planes' instance type applied one machine at a time, when the
//     provider's plan says it rolls (otherwise the line says it is not measured), with the count
//     of the API prober apply runs through the load balancer during each machine's roll;
//   - delete: `nuv cluster delete`, to no instance left.
//
// The emulator's status delay is 0 and its waiters poll a loopback endpoint, so the figures are
// nuv's, kubeadm's, the containers' and the API servers' own time. No peer runs here (kOps and
// ksctl need a real cloud account), so kOps' published figure stands beside create as reference.
//
// Run from the repository root with the project's Docker daemon: eval "$(bash hack/dockerd.sh
// env)"; go run ./bench/selfmanaged (the node image must be built or buildable: `nuv cluster
// node-image build --load`). -lb haproxy puts an HAProxy machine in front of the API servers in
// place of the Network Load Balancer.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/bench/internal/benchutil"
	emulator "github.com/nuv-dev/nuv/internal/emulator/aws"
)

func main() {
	keep := flag.Bool("keep", false, "leave the cluster and the emulator's machines on failure (for a look)")
	lb := flag.String("lb", "nlb", "the API's load balancer: nlb (the emulator's Network Load Balancer) or haproxy (a machine running HAProxy)")
	flag.Parse()
	if *lb != "nlb" && *lb != "haproxy" {
		benchutil.Exit("bench/selfmanaged", fmt.Errorf("-lb %q: want nlb or haproxy", *lb))
	}
	benchutil.Exit("bench/selfmanaged", run(*keep, *lb))
}

// spec is the benchmark's cluster: 3 control planes with stacked etcd behind a Network Load
// Balancer (or, with -lb haproxy, an HAProxy machine), one worker, one zone, no NAT gateway (the
// emulator's machines reach nothing outside).
const spec = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: smbench}
spec:
  provider: aws
  zones: [us-east-1a]
  networking: {vpcCIDR: %s}
  controlPlane: {count: 3}
  nodeGroups:
  - {name: workers, count: 1, instanceType: m6i.large}
  aws:
    nat: none
    controlPlane: {instanceType: %s}
    loadBalancer: {type: %s}
`

const (
	name     = "smbench"
	nodes    = 4
	typeFrom = "m6i.large"
	typeTo   = "m6i.xlarge"
	vpcCIDR  = "10.213.0.0/16"
)

// figure is one row of the table.
type figure struct {
	what, took, goal, reference string
}

func run(keep bool, lb string) error {
	ws, err := benchutil.NewWorkspace("nuv-bench-selfmanaged-")
	if err != nil {
		return err
	}
	defer ws.Close()
	b := &smBench{ctx: context.Background(), tmp: ws.Dir, lb: lb}
	stop, err := b.startEmulator(ws.Nuv)
	if err != nil {
		return err
	}
	defer stop()
	if _, err := b.writeSpec(typeFrom); err != nil {
		return err
	}
	if _, out, err := b.nuv.Run("cluster", "node-image", "build", "--load"); err != nil {
		return fmt.Errorf("the machines' image: %w\n%s", err, out)
	}
	defer func() {
		if b.deleted || keep {
			return
		}
		if _, out, err := b.nuv.Run("cluster", "delete", "--yes", name); err != nil {
			fmt.Fprintf(os.Stderr, "clean-up: %v\n%s", err, out)
		}
	}()
	for _, step := range []func() error{b.create, b.heal, b.roll, b.delete} {
		if err := step(); err != nil {
			return err
		}
	}
	b.printTable()
	return nil
}

// smBench is one run: the emulator's EC2 API, nuv pointed at it, the cluster's spec and client,
// and the figures measured so far.
type smBench struct {
	ctx     context.Context
	tmp     string // the workspace
	project string
	lb      string // the API's load balancer: nlb or haproxy
	nuv     benchutil.Nuv
	ec2c    *ec2.Client
	spec    string // the path of the cluster's spec
	cs      *kubernetes.Clientset
	rows    []figure
	deleted bool // the cluster is deleted: nothing to clean up
}

// startEmulator makes the project, serves nuv's AWS emulator on loopback and points nuv (the
// binary nuvBin) and an EC2 client at it; stop stops the emulator.
func (b *smBench) startEmulator(nuvBin string) (stop func(), err error) {
	home := filepath.Join(b.tmp, "home")
	b.project = filepath.Join(b.tmp, "project")
	if err := os.MkdirAll(filepath.Join(b.project, "clusters"), 0o755); err != nil {
		return nil, err
	}
	s, err := emulator.New(emulator.Options{Dir: filepath.Join(b.tmp, "emulator")})
	if err != nil {
		return nil, err
	}
	addr, stop, err := benchutil.ServeLoopback(func(ctx context.Context, ln net.Listener) error { return emulator.Serve(ctx, ln, s) })
	if err != nil {
		return nil, err
	}
	key, secret, _, region := s.Credentials()
	endpoint := "http://" + addr
	b.nuv = benchutil.Nuv{Bin: nuvBin, Dir: b.project}.With("AWS_ENDPOINT_URL="+endpoint, "AWS_ACCESS_KEY_ID="+key,
		"AWS_SECRET_ACCESS_KEY="+secret, "AWS_REGION="+region, "AWS_CONFIG_FILE="+filepath.Join(b.tmp, "none"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(b.tmp, "none"), "AWS_EC2_METADATA_DISABLED=true", "AWS_PROFILE=",
		"AWS_SESSION_TOKEN=", "NUV_HOME="+home, "NUV_PROJECT="+b.project, "KUBECONFIG=", "NUV_CLUSTER=")
	b.ec2c = ec2.NewFromConfig(aws.Config{Region: region, BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(key, secret, "")})
	return stop, nil
}

// writeSpec writes the cluster's spec with control planes of instance type itype and returns its
// path.
func (b *smBench) writeSpec(itype string) (string, error) {
	b.spec = filepath.Join(b.tmp, "smbench.yaml")
	return b.spec, os.WriteFile(b.spec, []byte(fmt.Sprintf(spec, vpcCIDR, itype, b.lb)), 0o644)
}

// create measures `nuv cluster apply` of the cluster until all its nodes are Ready.
func (b *smBench) create() error {
	kubeconfig := filepath.Join(b.project, "clusters", name+".kubeconfig")
	fmt.Printf("creating smbench (3 control planes, stacked etcd, %s, 1 worker) with `nuv cluster apply` ...\n", b.lb)
	t0 := time.Now()
	applied, out, err := b.nuv.Run("cluster", "apply", "--yes", "-f", b.spec)
	if err != nil {
		return err
	}
	cs, err := client(kubeconfig)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	b.cs = cs
	if err := waitReady(b.ctx, cs, nodes, 5*time.Minute); err != nil {
		return err
	}
	b.rows = append(b.rows, figure{fmt.Sprintf("create to %d nodes Ready (apply %.1f s)", nodes, applied.Seconds()),
		secs(time.Since(t0)), "<= 120 s", "kOps on real AWS: ~10 min"})
	return nil
}

// heal terminates a control plane's instance through the EC2 API and measures the apply that
// brings all nodes Ready again.
func (b *smBench) heal() error {
	victim, err := instanceOf(b.ctx, b.ec2c, "instance/control-plane-1")
	if err != nil {
		return err
	}
	fmt.Printf("terminating control-plane-1 (%s) through the EC2 API ...\n", victim)
	if _, err := b.ec2c.TerminateInstances(b.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{victim}}); err != nil {
		return fmt.Errorf("ec2:TerminateInstances %s: %w", victim, err)
	}
	if err := waitGone(b.ctx, b.ec2c, victim); err != nil {
		return err
	}
	t1 := time.Now()
	applied, _, err := b.nuv.Run("cluster", "apply", "--yes", "-f", b.spec)
	if err != nil {
		return err
	}
	if err := waitReady(b.ctx, b.cs, nodes, 5*time.Minute); err != nil {
		return err
	}
	b.rows = append(b.rows, figure{fmt.Sprintf("heal a lost control plane: apply to %d nodes Ready (apply %.1f s)", nodes, applied.Seconds()),
		secs(time.Since(t1)), "<= 60 s", ""})
	return nil
}

// roll changes the control planes' instance type and, when the plan rolls them, measures the apply
// and records the API prober's count during each machine's roll.
func (b *smBench) roll() error {
	f, err := b.writeSpec(typeTo)
	if err != nil {
		return err
	}
	_, plan, err := b.nuv.Run("cluster", "plan", "-f", f)
	if err != nil {
		return err
	}
	if !rolls(plan) {
		b.rows = append(b.rows, figure{"roll: not measured (no rolling replacement yet)", "-", "", ""})
		return nil
	}
	t2 := time.Now()
	applied, out, err := b.nuv.Run("cluster", "apply", "--yes", "-f", f)
	if err != nil {
		return err
	}
	if err := waitReady(b.ctx, b.cs, nodes, 10*time.Minute); err != nil {
		return err
	}
	b.rows = append(b.rows, figure{fmt.Sprintf("roll 3 control planes %s -> %s behind the %s to %d nodes Ready (apply %.1f s)", typeFrom, typeTo, b.lb, nodes, applied.Seconds()),
		secs(time.Since(t2)), "", ""})
	// the API prober's count during each machine's roll, as apply reports it
	for _, m := range probeLine.FindAllStringSubmatch(out, -1) {
		b.rows = append(b.rows, figure{"  API probe during the roll of " + m[1] + " (through the " + b.lb + ")", m[2], "0 failed", ""})
	}
	return nil
}

// delete measures `nuv cluster delete`, checks no instance is left and waits for the emulator to
// remove the machines' networks.
func (b *smBench) delete() error {
	del, _, err := b.nuv.Run("cluster", "delete", "--yes", name)
	if err != nil {
		return err
	}
	b.deleted = true
	if left, err := instances(b.ctx, b.ec2c); err != nil || len(left) > 0 {
		return fmt.Errorf("instances left after delete: %v %v", left, err)
	}
	b.rows = append(b.rows, figure{"delete, no instance left", secs(del), "", ""})
	// the emulator removes a subnet's Docker network once its machines are gone: wait for it
	// before the emulator stops (not counted)
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		out, err := exec.Command("docker", "network", "ls", "-q", "--filter", "label=nuv.dev/ec2-vpc-cidr="+vpcCIDR).Output()
		if err == nil && len(strings.TrimSpace(string(out))) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the machine networks of VPC %s are left after delete: %s %v", vpcCIDR, out, err)
		}
	}
	return nil
}

// printTable prints the figures as a Markdown table, then the load average.
func (b *smBench) printTable() {
	fmt.Println()
	fmt.Println("| figure | time | goal | reference |")
	fmt.Println("|---|---|---|---|")
	for _, r := range b.rows {
		fmt.Printf("| %s | %s | %s | %s |\n", r.what, r.took, r.goal, r.reference)
	}
	if l, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("(load average at the end: %s; %d CPUs)\n", strings.Join(strings.Fields(string(l))[:3], " "), runtime.NumCPU())
	}
	fmt.Println("(machines: containers of nuv's node image on this machine's Docker daemon; kubeadm, etcd, the API servers and the kubelets really run)")
}

// rolls tells whether a plan replaces the changed machines as a rolling replacement (the
// provider says so in its plan); a plan that recreates them otherwise is no roll to time.
// probeLine is apply's report of the API prober during a machine's roll.
var probeLine = regexp.MustCompile(`API probe during the roll of (instance/\S+): (\d+ requests, \d+ failed, longest gap \S+)`)

// rolls tells whether a plan replaces the changed machines as a rolling replacement (the
// provider says so in its plan); a plan that recreates them otherwise is no roll to time.
func rolls(plan string) bool {
	return strings.Contains(strings.ToLower(plan), "roll")
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func client(kubeconfig string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.Timeout = 10 * time.Second
	return kubernetes.NewForConfig(cfg)
}

// waitReady waits until the cluster has exactly n nodes, all Ready.
func waitReady(ctx context.Context, cs kubernetes.Interface, n int, limit time.Duration) error {
	last := ""
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			last = err.Error()
			continue
		}
		ready := 0
		for _, nd := range list.Items {
			for _, c := range nd.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		last = fmt.Sprintf("%d of %d nodes Ready", ready, len(list.Items))
		if ready == n && len(list.Items) == n {
			return nil
		}
	}
	return fmt.Errorf("not %d nodes Ready after %s: %s", n, limit, last)
}

// instances lists the cluster's instances that are not terminated, by nuv's resource tag.
func instances(ctx context.Context, c *ec2.Client) (map[string]string, error) {
	out, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:nuv.dev/cluster"), Values: []string{name}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped", "shutting-down"}}}})
	if err != nil {
		return nil, fmt.Errorf("ec2:DescribeInstances: %w", err)
	}
	got := map[string]string{}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			k := aws.ToString(in.InstanceId)
			for _, t := range in.Tags {
				if aws.ToString(t.Key) == "nuv.dev/resource" {
					k = aws.ToString(t.Value)
				}
			}
			got[k] = aws.ToString(in.InstanceId)
		}
	}
	return got, nil
}

func instanceOf(ctx context.Context, c *ec2.Client, key string) (string, error) {
	got, err := instances(ctx, c)
	if err != nil {
		return "", err
	}
	if got[key] == "" {
		return "", fmt.Errorf("no %s among the cluster's instances %v", key, got)
	}
	return got[key], nil
}

// waitGone waits until instance id is terminated.
func waitGone(ctx context.Context, c *ec2.Client, id string) error {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		got, err := instances(ctx, c)
		if err != nil {
			return err
		}
		gone := true
		for _, v := range got {
			gone = gone && v != id
		}
		if gone {
			return nil
		}
	}
	return fmt.Errorf("instance %s is not terminated after 2 minutes", id)
}

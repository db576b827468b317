package allkubes

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	emulator "github.com/nuv-dev/nuv/internal/emulator/aws"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
	"github.com/nuv-dev/nuv/internal/report"
)

// smSpec is the smallest self-managed cluster: one control plane behind an HAProxy machine and
// one worker, in one zone, without a NAT gateway.
const smSpec = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: sm-ak}
spec:
  provider: aws
  zones: [us-east-1a]
  networking: {vpcCIDR: 10.211.0.0/16}
  nodeGroups:
  - {name: workers, count: 1, instanceType: m6i.large}
  aws:
    nat: none
    loadBalancer: {type: haproxy}
`

// TestIntegrationAllKubesSelfManaged runs `nuv all-kubes -- dtest` over a self-managed cluster:
// nuv's AWS emulator on loopback (its EC2 instances real containers of nuv's node image), `nuv
// cluster apply -f` of one control plane, one worker and an HAProxy machine (kubeadm over SSH),
// `nuv image load` (build-and-load) and `nuv image workload --load controller static` streaming
// the operator's and the workload's images into the nodes' containerd over SSH, then the matrix:
// one passed cell typed kubeadm, "self-managed (kubeadm), emulated by aws, 2 real nodes", whose
// dtest deployed the operator in a real pod and the instance of tests/kubeadm/whisk.yaml, its pods
// running. Then day two on the same cluster (rollLone: new instance types roll its lone control
// plane and its HAProxy machine), and `nuv cluster delete` leaves no instance, container or
// network. A self-managed cluster costs minutes of both cores: the test makes one.
func TestIntegrationAllKubesSelfManaged(t *testing.T) {
	if testing.Short() {
		t.Skip("runs EC2 instances as containers of nuv's node image and bootstraps Kubernetes on them; skipped under -short")
	}
	ctx := context.Background()
	if _, err := containerrt.Detect(ctx, os.Getenv); err != nil {
		t.Fatalf("%v\n(hack/test.sh starts nuv's own dockerd: `eval \"$(hack/dockerd.sh env)\"`)", err)
	}
	exe := buildNuv(t)
	project := testProject(t, nil)
	home := t.TempDir()

	s, err := emulator.New(emulator.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- emulator.Serve(sctx, ln, s) }()
	key, secret, _, region := s.Credentials()
	endpoint := "http://" + ln.Addr().String()
	vars := []string{"NUV_HOME=" + home, "NUV_PROJECT=" + project, "NUV_CLUSTER=", "KUBECONFIG=", "KUBE=", "WHISK=",
		"MY_OPERATOR_IMAGE=", "TAG=", "AWS_ENDPOINT_URL=" + endpoint, "AWS_ACCESS_KEY_ID=" + key, "AWS_SECRET_ACCESS_KEY=" + secret,
		"AWS_REGION=" + region, "AWS_CONFIG_FILE=" + filepath.Join(home, "no-aws-config"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "no-aws-credentials"),
		"AWS_PROFILE=", "AWS_SESSION_TOKEN=", "AWS_EC2_METADATA_DISABLED=true"}
	env := append(os.Environ(), vars...)
	// stdout of the last command run, apart from its log lines (under -v or -json the two streams
	// reach the combined output through separate pipes, in no fixed order)
	var stdout bytes.Buffer
	nuv := func(extra []string, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(exe, args...)
		cmd.Dir, cmd.Env = project, append(append([]string(nil), env...), extra...)
		var out bytes.Buffer
		stdout.Reset()
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, &stdout), &out
		if testing.Verbose() {
			// a slow step shows where it is while it runs
			cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, &stdout, os.Stderr), io.MultiWriter(&out, os.Stderr)
		}
		t0 := time.Now()
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("nuv %s: %v", strings.Join(args, " "), err)
		}
		t.Logf("nuv %s (%.1fs): exit %d\n%s", strings.Join(args, " "), time.Since(t0).Seconds(), code, out.String())
		return out.String(), code
	}
	must := func(extra []string, args ...string) string {
		t.Helper()
		out, code := nuv(extra, args...)
		if code != 0 {
			t.Fatalf("nuv %s: exit %d", strings.Join(args, " "), code)
		}
		return out
	}
	ec2c := ec2.NewFromConfig(aws.Config{Region: region, BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(key, secret, "")})
	const name = "sm-ak"
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			nuv(nil, "cluster", "delete", "--yes", name)
			// the emulator removes a subnet's network once its machines are gone: before it stops
			if left := smLeftovers(name, 90*time.Second); left != "" {
				t.Errorf("left after the clean-up's delete: %s", left)
			}
		}
		stop()
		if err := <-served; err != nil {
			t.Errorf("emulator stopped with %v", err)
		}
	})

	f := filepath.Join(project, "clusters", "specs", "sm.yaml")
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte(smSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := nuv(nil, "cluster", "apply", "--yes", "-f", f); code != 0 {
		// A machine that did not boot (on a shared, loaded Docker daemon a systemd container can
		// fail to start, as an EC2 instance can fail to launch) is what the apply's message says
		// to resume from: a second apply replaces it. Any other failure ends the test.
		if !strings.Contains(out, "did not start") {
			t.Fatalf("nuv cluster apply: exit %d", code)
		}
		t.Logf("a machine did not boot: resuming with a second apply, as the message says")
		must(nil, "cluster", "apply", "--yes", "-f", f)
	}
	if st, err := os.Stat(filepath.Join(project, "clusters", name+".kubeconfig")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig of %s: %v %v, want a 0600 file in clusters/", name, st, err)
	}
	list := must(nil, "kube", "list", "--timeout", "15s") // detection: a loaded machine answers slower than the daily 1 s
	if !strings.Contains(list, name) || !strings.Contains(list, "kubeadm") {
		t.Errorf("nuv kube list does not show %s as kubeadm:\n%s", name, list)
	}

	// build-and-load for a self-managed cluster: over SSH into each node's containerd
	sel := []string{"NUV_CLUSTER=" + name}
	// the reference is what it prints on stdout (its log lines go to stderr)
	must(sel, "image", "load")
	ref := strings.TrimSpace(stdout.String())
	out := must(sel, "image", "workload", "--load", "controller", "static")
	for _, n := range []string{name + "-control-plane-0", name + "-workers-0"} {
		if !strings.Contains(out, "into node "+n) {
			t.Errorf("the workload images were not loaded into node %s:\n%s", n, out)
		}
	}

	r := allKubes(t, exe, project, home, vars, "--timeout", "6m", "--", "dtest")
	if r.code != 0 {
		t.Fatalf("all-kubes -- dtest: exit %d", r.code)
	}
	rep := checkReport(t, r.dir, []string{name})
	c := byCluster(rep)[name]
	const wantLabel = "self-managed (kubeadm), emulated by aws, 2 real nodes"
	if c.Status != report.Passed || c.Type != "kubeadm" || c.Platform == nil || c.Platform.Label() != wantLabel ||
		c.Platform.Provider != "aws" || c.Platform.Emulated != "aws" || c.Platform.Bootstrap != "kubeadm" || c.Platform.NodeKind() != report.NodesReal {
		t.Errorf("cell %s: %s type %s platform %+v (%q), want passed, kubeadm, %q: %s", name, c.Status, c.Type, c.Platform, c.Platform.Label(), wantLabel, c.Message)
	}
	var phases []string
	for _, st := range c.Steps {
		phases = append(phases, st.Name+":"+string(st.Status))
	}
	if got := strings.Join(phases, " "); !strings.Contains(got, "operator:passed") || !strings.Contains(got, "instance:passed") || !strings.Contains(got, "assertions:passed") {
		t.Errorf("cell %s: dtest phases %s, want the operator, the instance and the assertions passed", name, got)
	}
	log, err := os.ReadFile(filepath.Join(r.dir, c.Log))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{filepath.Join("tests", "kubeadm", "whisk.yaml"), "operator image: " + ref + " (from build-and-load"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("cell %s: its log does not say %q:\n%s", name, want, log)
		}
	}
	html, err := os.ReadFile(filepath.Join(r.dir, report.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "self-managed (kubeadm), emulated by aws") {
		t.Errorf("index.html does not say the cell ran on a self-managed cluster emulated by aws")
	}

	rollLone(t, ctx, ec2c, home, project, f, nuv)

	deleted = true
	must(nil, "cluster", "delete", "--yes", name)
	desc, err := ec2c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:nuv.dev/cluster"), Values: []string{name}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped", "shutting-down"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(desc.Reservations); n != 0 {
		t.Errorf("%d reservations of %s left after delete", n, name)
	}
	if left := smLeftovers(name, 90*time.Second); left != "" {
		t.Errorf("left after delete: %s", left)
	}
}

// smLeftovers waits up to limit until the Docker daemon holds no machine of cluster name (machines
// are named after their cluster: other emulators on the daemon share the account) and no machine
// network of its VPC, and says what is left.
func smLeftovers(name string, limit time.Duration) string {
	for deadline := time.Now().Add(limit); ; time.Sleep(time.Second) {
		all, _ := exec.Command("docker", "ps", "-a", "--filter", "label="+emulator.LabelInstance, "--format", `{{.Names}} {{.Label "nuv.dev/ec2-name"}}`).Output()
		var cs []string
		for _, l := range strings.Split(strings.TrimSpace(string(all)), "\n") {
			if f := strings.Fields(l); len(f) == 2 && strings.HasPrefix(f[1], name+"-") {
				cs = append(cs, l)
			}
		}
		nets, _ := exec.Command("docker", "network", "ls", "-q", "--filter", "label=nuv.dev/ec2-vpc-cidr=10.211.0.0/16").Output()
		if len(cs) == 0 && len(bytes.TrimSpace(nets)) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("containers %q, networks %q", cs, nets)
		}
	}
}

// rollLone rolls the cluster of spec file f (one control plane, stacked etcd, an HAProxy machine,
// a worker) to new instance types through `nuv cluster plan` and `apply`: the lone control
// plane's state (certificates, etcd's data) moves to its replacement at the same address, which
// comes back as the same cluster (a ConfigMap written before the roll is there after it); the
// HAProxy machine is replaced at its address; the API is down only meanwhile; every node is Ready
// afterwards and the next plan is empty.
func rollLone(t *testing.T, ctx context.Context, ec2c *ec2.Client, home, project, f string, nuv func([]string, ...string) (string, int)) {
	t.Helper()
	const name = "sm-ak"
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(project, "clusters", name+".kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before-the-roll", Namespace: "default"}, Data: map[string]string{"a": "b"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := smInstances(t, ctx, ec2c, name)
	spec, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	rolled := strings.Replace(string(spec), "loadBalancer: {type: haproxy}\n",
		"loadBalancer: {type: haproxy, instanceType: t3.medium}\n    controlPlane: {instanceType: m6i.xlarge}\n", 1)
	if rolled == string(spec) {
		t.Fatalf("%s: no load balancer line to edit", f)
	}
	if err := os.WriteFile(f, []byte(rolled), 0o644); err != nil {
		t.Fatal(err)
	}
	text, code := nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 2 {
		t.Fatalf("plan of the roll: exit %d, want 2 (changes)", code)
	}
	for _, want := range []string{"rolling replacement 1 of 1 (control-plane)", "the API is DOWN while it is replaced",
		"rolling replacement 1 of 1 (load-balancer)", "the API is UNREACHABLE while it is replaced", "Plan: 0 to create, 0 to update, 2 to replace, 0 to delete"} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan of the roll lacks %q", want)
		}
	}
	t0 := time.Now()
	out, code := nuv(nil, "cluster", "apply", "--yes", "-f", f)
	if code != 0 {
		t.Fatalf("apply of the roll: exit %d", code)
	}
	t.Logf("figure: roll of the lone control plane and the load balancer %.1fs", time.Since(t0).Seconds())
	if n := strings.Count(out, "  rolled instance/"); n != 2 {
		t.Errorf("%d machines rolled, want the control plane and the load balancer", n)
	}
	after := smInstances(t, ctx, ec2c, name)
	for k, typ := range map[string]ec2types.InstanceType{"instance/control-plane-0": "m6i.xlarge", "instance/lb-0": "t3.medium"} {
		b, a := before[k], after[k]
		if a.InstanceType != typ || aws.ToString(a.InstanceId) == aws.ToString(b.InstanceId) || aws.ToString(a.PrivateIpAddress) != aws.ToString(b.PrivateIpAddress) {
			t.Errorf("%s after the roll: %s %s at %s; before: %s at %s; want a new %s at the same address", k,
				aws.ToString(a.InstanceId), a.InstanceType, aws.ToString(a.PrivateIpAddress), aws.ToString(b.InstanceId), aws.ToString(b.PrivateIpAddress), typ)
		}
	}
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(2 * time.Second) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		ready := 0
		if err == nil {
			for _, n := range nodes.Items {
				if kube.NodeReady(&n) {
					ready++
				}
			}
		}
		if err == nil && ready == 2 && len(nodes.Items) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes after the roll: %d Ready, want 2 (%v)", ready, err)
		}
	}
	if got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{}); err != nil || got.Data["a"] != "b" {
		t.Errorf("the ConfigMap written before the roll: %v %v", got, err)
	}
	if text, code := nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode"); code != 0 || !strings.Contains(text, "no changes") {
		t.Errorf("the plan after the roll: exit %d, want 0 and no changes", code)
	}
	// the state the control plane's predecessor left (its certificates and etcd's data) is not
	// kept in nuv's home once the replacement runs
	if _, err := os.Stat(filepath.Join(home, "aws", name, "control-plane-state.tgz")); !os.IsNotExist(err) {
		t.Errorf("the control plane's state is left in nuv's home: %v", err)
	}
}

// smInstances are the live instances of cluster name, by the plan resource they are.
func smInstances(t *testing.T, ctx context.Context, ec2c *ec2.Client, name string) map[string]ec2types.Instance {
	t.Helper()
	out, err := ec2c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:nuv.dev/cluster"), Values: []string{name}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped"}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ec2types.Instance{}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			for _, tag := range in.Tags {
				if aws.ToString(tag.Key) == "nuv.dev/resource" {
					got[aws.ToString(tag.Value)] = in
				}
			}
		}
	}
	return got
}

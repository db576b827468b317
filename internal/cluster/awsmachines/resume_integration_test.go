package awsmachines_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awsworld"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/bootstrap"
	"github.com/nuv-dev/nuv/internal/cluster/awsmachines"
	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/machine"
)

// externalHAProxy is the smaller self-managed cluster: three external etcd machines, one
// control plane behind an HAProxy machine, no worker (the test's Deployment tolerates the control
// plane's taint, as CoreDNS does), in one zone without a NAT gateway.
const externalHAProxy = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: ext}
spec:
  provider: aws
  zones: [us-east-1a]
  networking: {vpcCIDR: 10.91.0.0/16}
  aws:
    nat: none
    etcd: {placement: external, count: 3}
    loadBalancer: {type: haproxy}
`

// The machines of externalHAProxy by their nuv.dev/resource tag, and their roles.
var externalMachines = map[string]string{
	"instance/control-plane-0": awsmachines.RoleControlPlane,
	"instance/etcd-0":          awsmachines.RoleEtcd,
	"instance/etcd-1":          awsmachines.RoleEtcd,
	"instance/etcd-2":          awsmachines.RoleEtcd,
	"instance/lb-0":            awsmachines.RoleLoadBalancer,
}

// vpcNetworks lists the Docker networks of externalHAProxy's VPC (the emulator's subnets).
var vpcNetworks = []string{"network", "ls", "--filter", "label=nuv.dev/ec2-vpc-cidr=10.91.0.0/16", "--format", "{{.Name}}"}

// planChange is a change line of a plan: its action and resource key.
var planChange = regexp.MustCompile(`(?m)^\s*(?:\+|~|-/\+|-) ([a-z]+) (\S+)`)

// TestIntegrationMachinesHAProxy makes the issue's smaller self-managed cluster with `nuv cluster
// apply` run as its own process, killed twice with SIGKILL on its way:
//
//  1. right after ec2:RunInstances answered for a machine and before the record says so (the
//     failpoint): the next apply finds the instance by its tags and launches no second one;
//  2. while `kubeadm init` runs on the control plane (a kill -9 from the test once kubeadm wrote
//     admin.conf and before it finished): the next apply waits for the kubeadm that outlived nuv
//     and finds it completed: no second init (the cluster CA seen during the killed init is the
//     cluster's, kubeadm init ran once on the machine).
//
// The resumed apply finishes: the etcd members are the three etcd machines, the API answers
// through the HAProxy machine, CoreDNS and a test Deployment run; the SDK and the aws CLI
// (describe-instances against the emulator) see each machine once with its role, state and
// private IP; a second plan is empty. Then the roles this shape has and the stacked one of
// TestIntegrationMachinesHeal has not are healed, each a subtest: an etcd machine, and the
// load-balancer machine with its healing apply killed once after the launch; the etcd tier rolls;
// delete leaves nothing tagged for the cluster and no container or network in Docker.
func TestIntegrationMachinesHAProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs EC2 instances as containers of nuv's node image and bootstraps Kubernetes on them; skipped under -short")
	}
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Fatalf("docker: %v (the emulator's machines are containers)", err)
	}
	w := newWorld(t)
	ctx := context.Background()
	f := w.Spec("ext", externalHAProxy)
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			if _, errs, code := w.Nuv(nil, "cluster", "delete", "--yes", "ext"); code != 0 {
				t.Errorf("clean-up: delete: exit %d\n%s", code, errs)
			}
		}
		// The emulator removes a subnet's network once its machines are gone: wait for that
		// before it stops.
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
			out, err := exec.Command(docker, vpcNetworks...).Output()
			if err != nil || strings.TrimSpace(string(out)) == "" {
				return
			}
		}
		t.Errorf("clean-up: networks of VPC 10.91.0.0/16 left")
	})
	t0 := time.Now()

	// 1. kill -9 between ec2:RunInstances and the record, on the last machine the plan launches
	// (the bootstrap comes next: the resumed apply finds that machine perhaps still pending).
	out, errs, code := w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 2 {
		t.Fatalf("plan of a new cluster: exit %d, want 2\n%s%s", code, out, errs)
	}
	var keys []string
	for _, m := range planChange.FindAllStringSubmatch(out, -1) {
		keys = append(keys, m[2])
	}
	step, victim := 0, ""
	for i, k := range keys {
		if strings.HasPrefix(k, "instance/") {
			step, victim = i+1, k
		}
	}
	if step == 0 || !slices.Contains(keys, "kubeadm-init/control-plane-0") || !slices.Contains(keys, "etcd-member/etcd-2") || !slices.Contains(keys, "haproxy/lb-0") {
		t.Fatalf("the plan lacks the machines or the bootstrap:\n%s", out)
	}
	_, errs, code = w.Nuv([]string{fmt.Sprintf("NUV_FAILPOINT_KILL_BEFORE_RECORD=%d", step)}, "cluster", "apply", "--yes", "-f", f)
	if code != -1 {
		t.Fatalf("apply killed after launching %s (step %d): exit %d, want killed\n%s", victim, step, code, errs)
	}
	t.Logf("apply killed after ec2:RunInstances of %s (step %d) at %.1fs", victim, step, time.Since(t0).Seconds())
	ms := w.machines(t, "ext")
	if n := len(ms[victim]); n != 1 {
		t.Fatalf("after the kill: %d instances of %s, want 1: %v", n, victim, ms)
	}
	if n := len(w.awsCLIMachines(t, "ext")[victim]); n != 1 {
		t.Fatalf("after the kill: aws ec2 describe-instances lists %d instances of %s, want 1", n, victim)
	}
	for _, r := range awsworld.ReadRecord(t, w.Home, "ext").Resources {
		if r.Key() == victim && r.ID != "" {
			t.Fatalf("the record knows %s (%s): the kill came too late", victim, r.ID)
		}
	}
	out, errs, code = w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 2 || strings.Contains(out, "create "+victim) || !strings.Contains(out, "create kubeadm-init/control-plane-0") {
		t.Fatalf("plan after the kill: exit %d; want the bootstrap to do and %s found, not made again\n%s%s", code, victim, out, errs)
	}

	// 2. kill -9 while kubeadm init runs on the control plane.
	cp := w.machines(t, "ext")["instance/control-plane-0"]
	if len(cp) != 1 {
		t.Fatalf("control plane: %v", cp)
	}
	cpID := cp[0].id
	cmd := clustertest.Command(asNuv, w.Env, "cluster", "apply", "--yes", "-f", f)
	cmd.Dir = w.Project
	var killedOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &killedOut, &killedOut
	t1 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// kubeadm writes the CA and admin.conf, then starts the control plane's static pods and waits
	// for them: the kill comes in that wait.
	midInit := `if grep -qsx kubeadm /proc/[0-9]*/comm && [ -e /etc/kubernetes/admin.conf ] && [ ! -e /etc/kubernetes/nuv/init.done ]; then cat /etc/kubernetes/pki/ca.crt; fi`
	var caAtKill string
	for deadline := time.Now().Add(8 * time.Minute); caAtKill == ""; time.Sleep(300 * time.Millisecond) {
		select {
		case err := <-exited:
			t.Fatalf("apply ended (%v) before it was killed during kubeadm init:\n%s", err, killedOut.String())
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("kubeadm init was not seen running on %s:\n%s", cpID, killedOut.String())
		}
		if out, err := exec.Command(docker, "exec", cpID, "sh", "-c", midInit).Output(); err == nil {
			caAtKill = string(out)
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	<-exited
	t.Logf("apply killed during kubeadm init on %s at %.1fs (%.1fs into that apply)", cpID, time.Since(t0).Seconds(), time.Since(t1).Seconds())
	if !strings.Contains(killedOut.String(), "kubeadm init: ext-control-plane-0") {
		t.Fatalf("the killed apply did not start kubeadm init:\n%s", killedOut.String())
	}
	still, _ := exec.Command(docker, "exec", cpID, "sh", "-c", "grep -qsx kubeadm /proc/[0-9]*/comm && echo running || echo gone").Output()
	t.Logf("kubeadm on the control plane after nuv was killed: %s", strings.TrimSpace(string(still)))

	// 3. The apply that resumes.
	t2 := time.Now()
	out, errs, code = w.Nuv(nil, "cluster", "apply", "--yes", "-f", f)
	if code != 0 {
		w.describeMachines(t, docker, "ext")
		t.Fatalf("apply after the kills: exit %d\n%s%s", code, out, errs)
	}
	resumed := time.Since(t2)
	if all := out + errs; !strings.Contains(all, "is initialised") || strings.Contains(all, "interrupted init") || strings.Contains(all, "kubeadm init: ext-control-plane-0 (endpoint") {
		t.Errorf("the resumed apply ran kubeadm init again:\n%s%s", out, errs)
	}
	kc := kit.KubeconfigPath(w.Project, "ext")
	if st, err := os.Stat(kc); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig %s: %v (mode %v), want 0600", kc, err, st)
	}
	awsmachines.ReadyAfterApply(t, kc, 1)
	cs := awsmachines.WaitMachinesReady(t, kc, 1)
	t.Logf("resumed apply: %.1fs; control plane Ready and CoreDNS running %.1fs after the first apply began", resumed.Seconds(), time.Since(t0).Seconds())

	// One kubeadm init: the CA seen during the killed init is the cluster's, and kubeadm init ran
	// once on the machine (its log, which outlives nuv, has one run).
	ca, err := exec.Command(docker, "exec", cpID, "cat", "/etc/kubernetes/pki/ca.crt").Output()
	if err != nil {
		t.Fatal(err)
	}
	before, err1 := bootstrap.CACertHash([]byte(caAtKill))
	after, err2 := bootstrap.CACertHash(ca)
	if err1 != nil || err2 != nil || before != after {
		t.Errorf("the cluster CA changed after the kill during kubeadm init (a second init): %s at the kill (%v), %s now (%v)", before, err1, after, err2)
	}
	runs, err := exec.Command(docker, "exec", cpID, "grep", "-c", `^\[init\] Using Kubernetes version`, bootstrap.KubeadmLog).Output()
	if n := strings.TrimSpace(string(runs)); err != nil || n != "1" {
		t.Errorf("kubeadm init ran %q times on the control plane (%v; its log %s), want once", n, err, bootstrap.KubeadmLog)
	}

	// Each machine once, with its role, running, with a private IP in the VPC: through the SDK
	// and through the aws CLI.
	ms = w.machines(t, "ext")
	checkMachines(t, "SDK", ms)
	seen := map[string]bool{}
	for _, m := range ms {
		for _, in := range m {
			seen[in.id] = true
		}
	}
	cli := w.awsCLIMachines(t, "ext")
	checkMachines(t, "aws ec2 describe-instances", cli)
	var view []string
	for _, k := range slices.Sorted(maps.Keys(cli)) {
		for _, m := range cli[k] {
			view = append(view, fmt.Sprintf("%s %s %s %s %s", k, m.id, m.role, m.state, m.ip))
		}
	}
	t.Logf("aws ec2 describe-instances:\n%s", strings.Join(view, "\n"))
	for k, m := range ms {
		if cli[k][0].id != m[0].id || cli[k][0].ip != m[0].ip {
			t.Errorf("%s: the SDK sees %+v, the aws CLI %+v", k, m[0], cli[k][0])
		}
	}

	// The etcd members are the three etcd machines (asked through etcd's API).
	var etcd []bootstrap.Machine
	for _, k := range []string{"instance/etcd-0", "instance/etcd-1", "instance/etcd-2"} {
		etcd = append(etcd, &machine.Exec{Runtime: docker, Container: ms[k][0].id, IP: ms[k][0].ip})
	}
	b := &bootstrap.Bootstrap{Cluster: bootstrap.Cluster{Name: "ext", Etcd: etcd,
		ControlPlanes: []bootstrap.Machine{&machine.Exec{Runtime: docker, Container: cpID, IP: ms["instance/control-plane-0"][0].ip}}}}
	members, err := b.EtcdMembers(ctx)
	sort.Strings(members)
	if err != nil || strings.Join(members, ",") != "ext-etcd-0,ext-etcd-1,ext-etcd-2" {
		t.Errorf("etcd members: %v %v, want ext-etcd-0, ext-etcd-1 and ext-etcd-2", members, err)
	}
	// The API server is the only control plane and stores in the external etcd: no etcd pod runs.
	pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "component=etcd"})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("etcd pods on the control plane: %v %v, want none (external etcd)", pods, err)
	}

	// A Deployment runs, its pods on the control plane (tolerating its taint).
	t3 := time.Now()
	runDeployment(t, cs)
	t.Logf("test Deployment available in %.1fs", time.Since(t3).Seconds())

	if out, errs, code := w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode"); code != 0 {
		t.Errorf("the plan after the apply is not empty: exit %d\n%s%s", code, out, errs)
	}

	// 4. An etcd machine lost behind nuv's back (terminated through the SDK) is healed at its
	// address: its dead member removed, the new machine added back with fresh certificates.
	// 5. The load-balancer machine lost the same way is healed at its address, the endpoint.
	for _, heal := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"heal-etcd-1", func(t *testing.T) { healEtcd(t, w, f, ms, cs) }},
		{"heal-lb-0", func(t *testing.T) { healLB(t, w, f, cs) }},
	} {
		if !t.Run(heal.name, heal.run) {
			t.FailNow()
		}
	}
	for _, m := range w.machines(t, "ext") {
		for _, in := range m {
			seen[in.id] = true
		}
	}

	// 6. A change of the etcd tier's instance type rolls the etcd machines one at a time, the API
	// probed through HAProxy meanwhile.
	rollEtcd(t, w, f)
	for _, m := range w.machines(t, "ext") {
		for _, in := range m {
			seen[in.id] = true
		}
	}

	// Delete leaves nothing.
	deleted = true
	t4 := time.Now()
	if out, errs, code := w.Nuv(nil, "cluster", "delete", "--yes", "ext"); code != 0 {
		t.Fatalf("delete: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("delete: %.1fs", time.Since(t4).Seconds())
	if left := w.machines(t, "ext"); len(left) != 0 {
		t.Errorf("instances after delete: %v", left)
	}
	if left := w.awsCLIMachines(t, "ext"); len(left) != 0 {
		t.Errorf("aws ec2 describe-instances after delete: %v", left)
	}
	var tagged []string
	for _, r := range w.Tagged("ext") {
		if !strings.HasPrefix(r, "instance ") { // terminated instances stay listed a while, as in AWS
			tagged = append(tagged, r)
		}
	}
	if len(tagged) != 0 {
		t.Errorf("tagged for the cluster after delete: %v", tagged)
	}
	if lbs := w.taggedLoadBalancers(t, "ext"); len(lbs) != 0 {
		t.Errorf("load balancers after delete: %v", lbs)
	}
	if _, err := os.Stat(kc); !os.IsNotExist(err) {
		t.Errorf("kubeconfig after delete: %v", err)
	}
	// No container of the cluster's machines (every instance the test saw) and no network of
	// its VPC is left in Docker.
	var checks [][]string
	for _, id := range slices.Sorted(maps.Keys(seen)) {
		checks = append(checks, []string{"ps", "-a", "--filter", "label=nuv.dev/ec2-instance=" + id, "--format", "{{.Names}}"})
	}
	checks = append(checks, vpcNetworks)
	for _, what := range checks {
		var left string
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
			out, err := exec.Command(docker, what...).Output()
			if err != nil {
				t.Fatalf("docker %s: %v", strings.Join(what, " "), err)
			}
			if left = strings.TrimSpace(string(out)); left == "" {
				break
			}
		}
		if left != "" {
			t.Errorf("docker %s after delete: %s", strings.Join(what, " "), left)
		}
	}
	t.Logf("the whole lifecycle: %.1fs", time.Since(t0).Seconds())
}

// etcdOf is a bootstrap over externalHAProxy's etcd machines and control plane as they run now
// (reached with docker exec), to ask etcd about its members.
func etcdOf(t *testing.T, ms map[string][]aMachine) *bootstrap.Bootstrap {
	t.Helper()
	var etcd []bootstrap.Machine
	for _, k := range []string{"instance/etcd-0", "instance/etcd-1", "instance/etcd-2"} {
		if len(ms[k]) != 1 {
			t.Fatalf("%s: %v, want one machine", k, ms[k])
		}
		etcd = append(etcd, &machine.Exec{Runtime: "docker", Container: ms[k][0].id, IP: ms[k][0].ip})
	}
	cp := ms["instance/control-plane-0"][0]
	return &bootstrap.Bootstrap{Cluster: bootstrap.Cluster{Name: "ext", Etcd: etcd,
		ControlPlanes: []bootstrap.Machine{&machine.Exec{Runtime: "docker", Container: cp.id, IP: cp.ip}}}}
}

// checkEtcd says what is wrong with externalHAProxy's etcd tier: three members, the three etcd
// machines, each started, voting and answering.
func checkEtcd(t *testing.T, ctx context.Context, b *bootstrap.Bootstrap, when string) {
	t.Helper()
	members, err := b.EtcdMembers(ctx)
	sort.Strings(members)
	if err != nil || strings.Join(members, ",") != "ext-etcd-0,ext-etcd-1,ext-etcd-2" {
		t.Errorf("%s: etcd members %v %v, want ext-etcd-0, ext-etcd-1 and ext-etcd-2", when, members, err)
	}
	if err := b.EtcdHealthy(ctx); err != nil {
		t.Errorf("%s: %v", when, err)
	}
}

// writeThroughLB writes a ConfigMap through the kubeconfig's server (the HAProxy machine).
func writeThroughLB(t *testing.T, ctx context.Context, cs *kubernetes.Clientset, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: map[string]string{"at": time.Now().Format(time.RFC3339)}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Errorf("write through the load balancer (%s): %v", name, err)
	}
}

// healEtcd terminates etcd-1 through the SDK, and checks that the plan shows it, that apply heals
// it at its address, that etcd has three started voting members, and that the API answers
// through HAProxy and takes a write.
func healEtcd(t *testing.T, w *world, f string, ms map[string][]aMachine, cs *kubernetes.Clientset) {
	ctx := context.Background()
	lost := ms["instance/etcd-1"][0]
	t0 := time.Now()
	if _, err := w.EC2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{lost.id}}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); len(w.machines(t, "ext")["instance/etcd-1"]) != 0; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("etcd-1 (%s) is not terminated after 2m", lost.id)
		}
	}
	out, errs, code := w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "create instance/etcd-1") || !strings.Contains(out, "etcd-member/etcd-1") {
		t.Fatalf("plan after etcd-1 was terminated: exit %d; want etcd-1 and its member to make again\n%s%s", code, out, errs)
	}
	t1 := time.Now()
	out, errs, code = w.Nuv(nil, "cluster", "apply", "--yes", "-f", f)
	if code != 0 {
		t.Fatalf("apply after etcd-1 was terminated: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("etcd-1 healed: apply %.1fs, %.1fs after the loss", time.Since(t1).Seconds(), time.Since(t0).Seconds())
	all := out + errs
	if !strings.Contains(all, "launched at "+lost.ip) || !strings.Contains(all, "remove member") {
		t.Errorf("the heal did not relaunch etcd-1 at %s and remove its dead member:\n%s", lost.ip, all)
	}
	now := w.machines(t, "ext")
	checkMachines(t, "after the heal", now)
	if m := now["instance/etcd-1"]; len(m) != 1 || m[0].id == lost.id || m[0].ip != lost.ip {
		t.Errorf("etcd-1 after the heal: %+v; want a new machine at %s (it was %s)", m, lost.ip, lost.id)
	}
	checkEtcd(t, ctx, etcdOf(t, now), "after the heal")
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		t.Errorf("the API through HAProxy after the heal: %v", err)
	}
	writeThroughLB(t, ctx, cs, "after-etcd-heal")
	if out, errs, code := w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode"); code != 0 {
		t.Errorf("the plan after the heal is not empty: exit %d\n%s%s", code, out, errs)
	}
}

// probeLine is apply's report of the API prober during a machine's roll.
var probeLine = regexp.MustCompile(`API probe during the roll of (instance/\S+): (\d+) requests, (\d+) failed, longest gap (\S+)`)

// rollEtcd changes the etcd tier's instance type: apply rolls the three etcd machines one at a
// time (each validated, etcd healthy, before the next), the API probed through HAProxy; they keep
// their addresses, etcd has the same three healthy members, and a write succeeds.
func rollEtcd(t *testing.T, w *world, f string) {
	ctx := context.Background()
	before := w.machines(t, "ext")
	rolled := strings.Replace(externalHAProxy, "etcd: {placement: external, count: 3}", "etcd: {placement: external, count: 3, instanceType: m6i.xlarge}", 1)
	f = w.Spec("ext", rolled)
	out, errs, code := w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "rolling replacement 3 of 3 (etcd)") || !strings.Contains(out, "3 to replace") {
		t.Fatalf("plan of the etcd roll: exit %d\n%s%s", code, out, errs)
	}
	t0 := time.Now()
	out, errs, code = w.Nuv(nil, "cluster", "apply", "--yes", "-f", f)
	if code != 0 {
		t.Fatalf("apply of the etcd roll: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("etcd roll (3 machines): %.1fs", time.Since(t0).Seconds())
	probes := probeLine.FindAllStringSubmatch(out+errs, -1)
	for _, p := range probes {
		t.Logf("API probe during the roll of %s: %s requests, %s failed, longest gap %s", p[1], p[2], p[3], p[4])
	}
	if len(probes) != 3 {
		t.Errorf("%d probe reports, want one per etcd machine:\n%s%s", len(probes), out, errs)
	}
	after := w.machines(t, "ext")
	checkMachines(t, "after the etcd roll", after)
	for _, k := range []string{"instance/etcd-0", "instance/etcd-1", "instance/etcd-2"} {
		if b, a := before[k][0], after[k][0]; a.id == b.id || a.ip != b.ip {
			t.Errorf("%s after the roll: %+v; before: %+v; want a new machine at the same address", k, a, b)
		}
	}
	for id, typ := range typesOf(t, w, after) {
		if strings.HasPrefix(id, "instance/etcd-") && typ != "m6i.xlarge" {
			t.Errorf("%s is %s after the roll, want m6i.xlarge", id, typ)
		}
	}
	checkEtcd(t, ctx, etcdOf(t, after), "after the etcd roll")
	cs := awsmachines.WaitMachinesReady(t, kit.KubeconfigPath(w.Project, "ext"), 1)
	writeThroughLB(t, ctx, cs, "after-etcd-roll")
	if out, errs, code := w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode"); code != 0 {
		t.Errorf("the plan after the etcd roll is not empty: exit %d\n%s%s", code, out, errs)
	}
}

// typesOf is the instance type of each machine of ms, by resource key.
func typesOf(t *testing.T, w *world, ms map[string][]aMachine) map[string]string {
	t.Helper()
	var ids []string
	keyOf := map[string]string{}
	for k, m := range ms {
		ids = append(ids, m[0].id)
		keyOf[m[0].id] = k
	}
	out, err := w.EC2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: ids})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			got[keyOf[aws.ToString(in.InstanceId)]] = string(in.InstanceType)
		}
	}
	return got
}

// aMachine is one instance as the SDK or the aws CLI lists it.
type aMachine struct {
	id, state, role, ip string
}

// machines lists the instances of cluster name that are not terminated, by nuv.dev/resource tag.
func (w *world) machines(t *testing.T, name string) map[string][]aMachine {
	t.Helper()
	out, err := w.EC2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + awsnet.TagCluster), Values: []string{name}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]aMachine{}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			if in.State.Name == ec2types.InstanceStateNameTerminated {
				continue
			}
			tags := map[string]string{}
			for _, tg := range in.Tags {
				tags[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
			}
			k := tags[awsnet.TagResource]
			got[k] = append(got[k], aMachine{id: aws.ToString(in.InstanceId), state: string(in.State.Name), role: tags[awsmachines.TagRole], ip: aws.ToString(in.PrivateIpAddress)})
		}
	}
	return got
}

// describeMachines logs what a failure needs to be understood from the machines' side: each
// instance as the emulator sees it, its container's state and addresses, and its processes.
func (w *world) describeMachines(t *testing.T, docker, name string) {
	t.Helper()
	for key, ms := range w.machines(t, name) {
		for _, m := range ms {
			insp, _ := exec.Command(docker, "inspect", "-f", "{{.State.Status}} started {{.State.StartedAt}} restarts {{.RestartCount}} networks {{range $k, $v := .NetworkSettings.Networks}}{{$k}}={{$v.IPAddress}} {{end}}", m.id).CombinedOutput()
			inside, _ := exec.Command(docker, "exec", m.id, "sh", "-c", "ip -br addr; ip route; ps -eo pid,etime,comm | grep -Ev 'ps|sh|grep' | tail -n 25").CombinedOutput()
			t.Logf("%s %s (%s, %s, %s): %s%s", key, m.id, m.role, m.state, m.ip, insp, inside)
		}
	}
}

// awsCLIMachines is machines through the real aws CLI (`aws ec2 describe-instances`) pointed at
// the emulator with AWS_ENDPOINT_URL.
func (w *world) awsCLIMachines(t *testing.T, name string) map[string][]aMachine {
	t.Helper()
	cli, err := exec.LookPath("aws")
	if err != nil {
		t.Fatalf("the aws CLI: %v", err)
	}
	cmd := exec.Command(cli, "ec2", "describe-instances", "--output", "json", "--filters", "Name=tag:"+awsnet.TagCluster+",Values="+name)
	// The emulator's endpoint and credentials; the variables the world empties (a profile, a
	// session token) are left out: the CLI takes an empty AWS_PROFILE for a profile's name.
	// The CLI (v1) reads the region from AWS_DEFAULT_REGION.
	_, _, _, region := w.Emu.Credentials()
	for _, kv := range append(os.Environ(), w.Env...) {
		if kv != "AWS_PROFILE=" && kv != "AWS_SESSION_TOKEN=" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "AWS_DEFAULT_REGION="+region)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("aws ec2 describe-instances: %v\n%s", err, stderr.String())
	}
	var resp struct {
		Reservations []struct {
			Instances []struct {
				InstanceID       string `json:"InstanceId"`
				PrivateIPAddress string `json:"PrivateIpAddress"`
				State            struct{ Name string }
				Tags             []struct{ Key, Value string }
			}
		}
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("aws ec2 describe-instances: %v\n%s", err, out)
	}
	got := map[string][]aMachine{}
	for _, r := range resp.Reservations {
		for _, in := range r.Instances {
			if in.State.Name == "terminated" {
				continue
			}
			tags := map[string]string{}
			for _, tg := range in.Tags {
				tags[tg.Key] = tg.Value
			}
			k := tags[awsnet.TagResource]
			got[k] = append(got[k], aMachine{id: in.InstanceID, state: in.State.Name, role: tags[awsmachines.TagRole], ip: in.PrivateIPAddress})
		}
	}
	return got
}

// checkMachines says what differs from externalHAProxy's machines: each once, running, its role
// tagged, its private IP in the VPC.
func checkMachines(t *testing.T, who string, got map[string][]aMachine) {
	t.Helper()
	if len(got) != len(externalMachines) {
		t.Errorf("%s lists %v, want %d machines", who, got, len(externalMachines))
	}
	for k, role := range externalMachines {
		ms := got[k]
		if len(ms) != 1 {
			t.Errorf("%s: %d instances of %s, want 1: %v", who, len(ms), k, ms)
			continue
		}
		if m := ms[0]; m.state != "running" || m.role != role || !strings.HasPrefix(m.ip, "10.91.") {
			t.Errorf("%s: %s is %+v, want running, role %s, a private IP in 10.91.0.0/16", who, k, m, role)
		}
	}
}

// taggedLoadBalancers lists the elbv2 load balancers tagged for cluster name.
func (w *world) taggedLoadBalancers(t *testing.T, name string) []string {
	t.Helper()
	ctx := context.Background()
	key, secret, _, region := w.Emu.Credentials()
	c := elb.NewFromConfig(aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(key, secret, ""), BaseEndpoint: aws.String(w.URL)})
	lbs, err := c.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, lb := range lbs.LoadBalancers {
		tags, err := c.DescribeTags(ctx, &elb.DescribeTagsInput{ResourceArns: []string{aws.ToString(lb.LoadBalancerArn)}})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range tags.TagDescriptions {
			for _, tg := range d.Tags {
				if aws.ToString(tg.Key) == awsnet.TagCluster && aws.ToString(tg.Value) == name {
					out = append(out, aws.ToString(lb.LoadBalancerName))
				}
			}
		}
	}
	return out
}

// runDeployment runs a Deployment of two replicas of the pause image the nodes hold (the
// machines pull nothing) on the control plane, and waits until both are available.
func runDeployment(t *testing.T, cs *kubernetes.Clientset) {
	t.Helper()
	ctx := context.Background()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	image := ""
	for _, nd := range nodes.Items {
		for _, im := range nd.Status.Images {
			for _, n := range im.Names {
				if strings.Contains(n, "/pause:") {
					image = n
				}
			}
		}
	}
	if image == "" {
		t.Fatalf("no node holds a pause image")
	}
	two := int32(2)
	labels := map[string]string{"app": "resume-test"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "resume-test", Namespace: "default"}, Spec: appsv1.DeploymentSpec{
		Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			Tolerations: []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			Containers:  []corev1.Container{{Name: "pause", Image: image, ImagePullPolicy: corev1.PullNever}},
		}},
	}}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	last := ""
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		got, err := cs.AppsV1().Deployments("default").Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			continue
		}
		if got.Status.AvailableReplicas == two {
			return
		}
		last = fmt.Sprintf("%d of %d available", got.Status.AvailableReplicas, two)
	}
	t.Fatalf("Deployment %s: %s", d.Name, last)
}

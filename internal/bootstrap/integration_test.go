package bootstrap_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/bootstrap"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/kind"
	"github.com/nuv-dev/nuv/internal/cluster/nodeimage"
	"github.com/nuv-dev/nuv/internal/machine"
)

// testMachines starts privileged containers of nuv's node image (the way kind starts its nodes:
// systemd as PID 1, a private cgroup namespace, /var a volume) on a Docker network of its own with
// fixed addresses, and removes them and the network when the test ends, failed or not.
type testMachines struct {
	t       *testing.T
	docker  string
	image   string
	network string
	subnet  string // "10.204.N"
}

func newTestMachines(t *testing.T, network, subnet string) *testMachines {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: real node-image containers")
	}
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Fatalf("docker: %v (hack/test.sh starts nuv's dockerd: eval \"$(bash hack/dockerd.sh env)\")", err)
	}
	if out, err := exec.Command(docker, "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
		t.Fatalf("no Docker daemon answers: %v: %s", err, out)
	}
	ctx := context.Background()
	image, err := nodeimage.Ensure(ctx, nodeimage.Options{Log: cli.Quiet(), Getenv: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	tm := &testMachines{t: t, docker: docker, image: image, network: network, subnet: subnet}
	exec.Command(docker, "network", "rm", network).Run() // a leftover of an interrupted run
	tm.docker_(t, "network", "create", "--subnet", subnet+".0/24", "--label", "nuv.dev/test=bootstrap", network)
	t.Cleanup(func() { exec.Command(docker, "network", "rm", network).Run() })
	return tm
}

func (tm *testMachines) docker_(t testing.TB, args ...string) string {
	out, err := exec.Command(tm.docker, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// start starts the machines name -> host part of the address, in parallel, and waits until
// containerd answers in each.
func (tm *testMachines) start(names map[string]int) map[string]*machine.Exec {
	t := tm.t
	t.Helper()
	out := map[string]*machine.Exec{}
	for name, host := range names {
		ip := fmt.Sprintf("%s.%d", tm.subnet, host)
		exec.Command(tm.docker, "rm", "-f", "-v", name).Run()
		t.Cleanup(func() {
			if o, err := exec.Command(tm.docker, "rm", "-f", "-v", name).CombinedOutput(); err != nil {
				t.Errorf("remove machine %s: %v: %s", name, err, o)
			}
		})
		tm.docker_(t, "run", "--detach", "--tty", "--name", name, "--hostname", name,
			"--label", "nuv.dev/test=bootstrap", "--network", tm.network, "--ip", ip,
			"--privileged", "--cgroupns=private", "--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
			"--tmpfs", "/tmp", "--tmpfs", "/run", "--volume", "/var", "--volume", "/lib/modules:/lib/modules:ro",
			"--restart=on-failure:1", tm.image)
		out[name] = &machine.Exec{Runtime: tm.docker, Container: name, IP: ip}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(out))
	for _, m := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if _, err := m.Run(ctx, "until [ -S /run/containerd/containerd.sock ] && ctr version >/dev/null 2>&1; do sleep 0.5; done\n", nil); err != nil {
				errs <- fmt.Errorf("machine %s: containerd did not start: %w", m.Name(), err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return out
}

// timedRun runs the steps in order, timing each, and returns the times by step key.
func timedRun(t *testing.T, ctx context.Context, b *bootstrap.Bootstrap) map[string]time.Duration {
	t.Helper()
	steps, err := b.Steps()
	if err != nil {
		t.Fatal(err)
	}
	times := map[string]time.Duration{}
	for _, s := range steps {
		t0 := time.Now()
		if err := s.Run(ctx); err != nil {
			t.Fatalf("step %s: %v", s.Key, err)
		}
		times[s.Key] = time.Since(t0)
		t.Logf("step %-36s %6.1fs", s.Key, times[s.Key].Seconds())
	}
	return times
}

// waitReady waits until every node is Ready and CoreDNS's pods Running, through the kubeconfig the
// bootstrap read back (its server: the endpoint).
func waitReady(t *testing.T, ctx context.Context, kubeconfig []byte, nodes int, timeout time.Duration) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(timeout)
	var state string
	for time.Now().Before(deadline) {
		state = ""
		ready := 0
		if nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
			state = err.Error()
		} else {
			for _, n := range nl.Items {
				for _, c := range n.Status.Conditions {
					if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
			state = fmt.Sprintf("%d/%d nodes Ready", ready, len(nl.Items))
		}
		running := 0
		pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-dns"})
		if err == nil {
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning {
					running++
				}
			}
			state += fmt.Sprintf(", %d/%d CoreDNS pods Running", running, len(pods.Items))
		}
		if ready == nodes && err == nil && running == len(pods.Items) && running > 0 {
			return cs
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("the cluster is not ready after %s: %s", timeout, state)
	return nil
}

// snapshot is what a rerun of the steps must leave unchanged: the admin kubeconfig, the nodes'
// UIDs, the pod network DaemonSet's generation, the control-plane containers.
func snapshot(t *testing.T, ctx context.Context, cs kubernetes.Interface, first machine.Machine) string {
	t.Helper()
	admin, err := first.ReadFile(ctx, bootstrap.AdminConf)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "admin.conf %d bytes %x\n", len(admin), admin[len(admin)-16:])
	nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nl.Items {
		fmt.Fprintf(&b, "node %s %s\n", n.Name, n.UID)
	}
	ds, err := cs.AppsV1().DaemonSets("kube-system").Get(ctx, "nuv-podnet", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "nuv-podnet generation %d\n", ds.Generation)
	ids, err := first.Run(ctx, "crictl ps -q --name 'kube-apiserver|etcd' | sort\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "control-plane containers %s\n", strings.Fields(string(ids)))
	return b.String()
}

func hostFacts() bootstrap.Host {
	h := kind.DetectHost()
	return bootstrap.Host{CgroupV1: h.CgroupV1, Containerized: true}
}

// TestIntegrationBootstrapOneControlPlane: one control plane (the endpoint is its own address)
// and one worker, real node-image containers: init, join, pod network, kubeconfig; nodes Ready and
// CoreDNS Running through the kubeconfig read back; a second run of every step changes nothing.
func TestIntegrationBootstrapOneControlPlane(t *testing.T) {
	tm := newTestMachines(t, "nuv-bootstrap-1", "10.204.1")
	ctx := context.Background()
	t0 := time.Now()
	ms := tm.start(map[string]int{"nuv-bs1-cp-0": 10, "nuv-bs1-worker-0": 20})
	t.Logf("machines up in %.1fs", time.Since(t0).Seconds())
	cp, w := ms["nuv-bs1-cp-0"], ms["nuv-bs1-worker-0"]
	var log []string
	b := &bootstrap.Bootstrap{Cluster: bootstrap.Cluster{
		Name: "bs1", KubernetesVersion: "1.36.3", Endpoint: cp.Address() + ":6443",
		PodCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/16",
		ControlPlanes: []bootstrap.Machine{cp}, Workers: []bootstrap.Machine{w}, Host: hostFacts(),
	}, Log: func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }}
	t1 := time.Now()
	timedRun(t, ctx, b)
	cs := waitReady(t, ctx, b.Kubeconfig, 2, 4*time.Minute)
	t.Logf("create to all nodes Ready and CoreDNS Running: %.1fs (steps and wait)", time.Since(t1).Seconds())
	checkSecretsNotLogged(t, b, log)
	before := snapshot(t, ctx, cs, cp)
	b2 := &bootstrap.Bootstrap{Cluster: b.Cluster}
	t2 := time.Now()
	timedRun(t, ctx, b2)
	t.Logf("rerun of every step: %.1fs", time.Since(t2).Seconds())
	if after := snapshot(t, ctx, cs, cp); after != before {
		t.Errorf("a rerun changed the cluster:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if b2.Secrets.CACertHash != b.Secrets.CACertHash {
		t.Errorf("the CA hash read back differs from init's")
	}

	// the worker leaves (drained, reset, its Node deleted) and a later run joins it again
	t3 := time.Now()
	if err := b.Drain(ctx, w.Name()); err != nil {
		t.Fatal(err)
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, w.Name(), metav1.GetOptions{})
	if err != nil || !n.Spec.Unschedulable {
		t.Fatalf("the drained node is not cordoned: %v", err)
	}
	if err := b.Reset(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteNode(ctx, w.Name()); err != nil {
		t.Fatal(err)
	}
	if err := b.Drain(ctx, w.Name()); err != nil {
		t.Errorf("drain of a node that is gone: %v", err)
	}
	if _, err := w.ReadFile(ctx, bootstrap.KubeletConf); err == nil {
		t.Errorf("the reset worker still has %s", bootstrap.KubeletConf)
	}
	t.Logf("drain, reset and delete of the worker: %.1fs", time.Since(t3).Seconds())
	b3 := &bootstrap.Bootstrap{Cluster: b.Cluster}
	timedRun(t, ctx, b3)
	waitReady(t, ctx, b3.Kubeconfig, 2, 3*time.Minute)
	n, err = cs.CoreV1().Nodes().Get(ctx, w.Name(), metav1.GetOptions{})
	if err != nil || n.Spec.Unschedulable {
		t.Errorf("the worker did not join again as a schedulable node: %v", err)
	}
}

func checkSecretsNotLogged(t *testing.T, b *bootstrap.Bootstrap, log []string) {
	t.Helper()
	all := strings.Join(log, "\n")
	for _, s := range []string{b.Secrets.Token, b.Secrets.CertificateKey} {
		if s == "" {
			t.Errorf("a join secret is empty after the bootstrap")
		} else if strings.Contains(all, s) {
			t.Errorf("the log carries a join secret")
		}
	}
}

// TestIntegrationBootstrapHA: three control planes with stacked etcd behind an HAProxy machine
// (the endpoint) and one worker, real node-image containers. Then a rerun of every step changes
// nothing; a control plane is lost behind the bootstrap's back: the API keeps answering through
// the load balancer and a write succeeds, its etcd member is removed, and a replacement machine
// joins with join secrets made again (a later apply's path: the token and the uploaded
// certificates of init are not reused).
func TestIntegrationBootstrapHA(t *testing.T) {
	tm := newTestMachines(t, "nuv-bootstrap-2", "10.204.2")
	ctx := context.Background()
	t0 := time.Now()
	ms := tm.start(map[string]int{"nuv-bs2-lb": 5, "nuv-bs2-cp-0": 10, "nuv-bs2-cp-1": 11, "nuv-bs2-cp-2": 12, "nuv-bs2-worker-0": 20})
	t.Logf("machines up in %.1fs", time.Since(t0).Seconds())
	var log []string
	c := bootstrap.Cluster{
		Name: "bs2", KubernetesVersion: "1.36.3", Endpoint: ms["nuv-bs2-lb"].Address() + ":6443", CertSANs: []string{"api.bs2.nuv.test"},
		PodCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/16", LoadBalancer: ms["nuv-bs2-lb"],
		ControlPlanes: []bootstrap.Machine{ms["nuv-bs2-cp-0"], ms["nuv-bs2-cp-1"], ms["nuv-bs2-cp-2"]},
		Workers:       []bootstrap.Machine{ms["nuv-bs2-worker-0"]}, Host: hostFacts(),
	}
	b := &bootstrap.Bootstrap{Cluster: c, Log: func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }}
	t1 := time.Now()
	timedRun(t, ctx, b)
	cs := waitReady(t, ctx, b.Kubeconfig, 4, 5*time.Minute)
	t.Logf("create to all nodes Ready and CoreDNS Running: %.1fs (steps and wait)", time.Since(t1).Seconds())
	checkSecretsNotLogged(t, b, log)
	members, err := b.EtcdMembers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(sorted(members), " ") != "nuv-bs2-cp-0 nuv-bs2-cp-1 nuv-bs2-cp-2" {
		t.Errorf("etcd members %v, want the three control planes", members)
	}
	before := snapshot(t, ctx, cs, ms["nuv-bs2-cp-0"])
	t2 := time.Now()
	timedRun(t, ctx, &bootstrap.Bootstrap{Cluster: c})
	t.Logf("rerun of every step: %.1fs", time.Since(t2).Seconds())
	if after := snapshot(t, ctx, cs, ms["nuv-bs2-cp-0"]); after != before {
		t.Errorf("a rerun changed the cluster:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// a control plane lost
	tm.docker_(t, "rm", "-f", "-v", "nuv-bs2-cp-2")
	t3 := time.Now()
	failed := 0
	for {
		_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-loss"}}, metav1.CreateOptions{})
		if err == nil {
			break
		}
		failed++
		if time.Since(t3) > time.Minute {
			t.Fatalf("no write through the load balancer for a minute after a control plane was lost: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("a write through the load balancer after losing a control plane: %.1fs, %d failed attempt(s)", time.Since(t3).Seconds(), failed)
	t4 := time.Now()
	if err := b.RemoveEtcdMember(ctx, "nuv-bs2-cp-2"); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteNode(ctx, "nuv-bs2-cp-2"); err != nil {
		t.Fatal(err)
	}
	members, err = b.EtcdMembers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(sorted(members), " ") != "nuv-bs2-cp-0 nuv-bs2-cp-1" {
		t.Errorf("etcd members after the removal %v, want the two live control planes", members)
	}
	// the replacement: a new machine with the same name and address, secrets made again
	repl := tm.start(map[string]int{"nuv-bs2-cp-2": 12})
	c.ControlPlanes[2] = repl["nuv-bs2-cp-2"]
	heal := &bootstrap.Bootstrap{Cluster: c}
	timedRun(t, ctx, heal)
	waitReady(t, ctx, heal.Kubeconfig, 4, 4*time.Minute)
	t.Logf("heal (member removed, machine replaced and joined, all Ready): %.1fs", time.Since(t4).Seconds())
	members, err = heal.EtcdMembers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(sorted(members), " ") != "nuv-bs2-cp-0 nuv-bs2-cp-1 nuv-bs2-cp-2" {
		t.Errorf("etcd members after the heal %v, want the three control planes", members)
	}
}

func sorted(xs []string) []string {
	out := append([]string(nil), xs...)
	sort.Strings(out)
	return out
}

// TestIntegrationBootstrapExternalEtcd: three external etcd machines (certificates made by nuv,
// members started one at a time), one control plane behind an HAProxy machine, real node-image
// containers: the member list has the three etcd machines, the node is Ready and CoreDNS Running
// through the load balancer, the API server's data is in the external tier, a rerun changes
// nothing, and a lost etcd machine is removed from the member list.
func TestIntegrationBootstrapExternalEtcd(t *testing.T) {
	tm := newTestMachines(t, "nuv-bootstrap-3", "10.204.3")
	ctx := context.Background()
	ms := tm.start(map[string]int{"nuv-bs3-lb": 5, "nuv-bs3-etcd-0": 30, "nuv-bs3-etcd-1": 31, "nuv-bs3-etcd-2": 32, "nuv-bs3-cp-0": 10})
	var log []string
	c := bootstrap.Cluster{
		Name: "bs3", KubernetesVersion: "1.36.3", Endpoint: ms["nuv-bs3-lb"].Address() + ":6443",
		PodCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/16", LoadBalancer: ms["nuv-bs3-lb"],
		ControlPlanes: []bootstrap.Machine{ms["nuv-bs3-cp-0"]},
		Etcd:          []bootstrap.Machine{ms["nuv-bs3-etcd-0"], ms["nuv-bs3-etcd-1"], ms["nuv-bs3-etcd-2"]},
		Host:          hostFacts(),
	}
	b := &bootstrap.Bootstrap{Cluster: c, Log: func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }}
	t1 := time.Now()
	timedRun(t, ctx, b)
	cs := waitReady(t, ctx, b.Kubeconfig, 1, 4*time.Minute)
	t.Logf("create to Ready and CoreDNS Running: %.1fs (steps and wait)", time.Since(t1).Seconds())
	checkSecretsNotLogged(t, b, log)
	members, err := b.EtcdMembers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(sorted(members), " ") != "nuv-bs3-etcd-0 nuv-bs3-etcd-1 nuv-bs3-etcd-2" {
		t.Errorf("etcd members %v, want the three etcd machines", members)
	}
	// no etcd on the control plane: its API server uses the external tier
	if out, err := ms["nuv-bs3-cp-0"].Run(ctx, "crictl ps -q --name '^etcd$' | wc -l\n", nil); err != nil || strings.TrimSpace(string(out)) != "0" {
		t.Errorf("an etcd container runs on the control plane: %q %v", out, err)
	}
	before := snapshot(t, ctx, cs, ms["nuv-bs3-cp-0"])
	timedRun(t, ctx, &bootstrap.Bootstrap{Cluster: c})
	if after := snapshot(t, ctx, cs, ms["nuv-bs3-cp-0"]); after != before {
		t.Errorf("a rerun changed the cluster:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	tm.docker_(t, "rm", "-f", "-v", "nuv-bs3-etcd-2")
	if err := b.RemoveEtcdMember(ctx, "nuv-bs3-etcd-2"); err != nil {
		t.Fatal(err)
	}
	members, err = b.EtcdMembers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(sorted(members), " ") != "nuv-bs3-etcd-0 nuv-bs3-etcd-1" {
		t.Errorf("etcd members after the removal %v", members)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-removal"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a write after the removal: %v", err)
	}
}

// TestIntegrationBootstrapResumeAfterKill: the apply dies during `kubeadm init` (its context
// cancelled: the docker exec client killed, as a kill -9 of nuv would); the next run of the steps
// waits for the kubeadm still running on the machine, finds init completed and does not run it
// again (the cluster CA made by the first and only init is the one the cluster serves), and the
// node becomes Ready.
func TestIntegrationBootstrapResumeAfterKill(t *testing.T) {
	tm := newTestMachines(t, "nuv-bootstrap-4", "10.204.4")
	ctx := context.Background()
	ms := tm.start(map[string]int{"nuv-bs4-cp-0": 10})
	cp := ms["nuv-bs4-cp-0"]
	c := bootstrap.Cluster{Name: "bs4", KubernetesVersion: "1.36.3", Endpoint: cp.Address() + ":6443",
		PodCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/16", ControlPlanes: []bootstrap.Machine{cp}, Host: hostFacts()}
	killed, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	if err := (&bootstrap.Bootstrap{Cluster: c}).Init(killed); err == nil {
		t.Fatal("init finished within 8 s; the test kills it part-way")
	}
	ca, err := cp.ReadFile(ctx, "/etc/kubernetes/pki/ca.crt")
	if err != nil {
		t.Fatalf("the killed init made no CA yet: %v", err)
	}
	t0 := time.Now()
	var log []string
	b := &bootstrap.Bootstrap{Cluster: c, Log: func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }}
	timedRun(t, ctx, b)
	t.Logf("resume after the kill: %.1fs; log:\n%s", time.Since(t0).Seconds(), strings.Join(log, "\n"))
	if got, _ := cp.ReadFile(ctx, "/etc/kubernetes/pki/ca.crt"); string(got) != string(ca) {
		t.Errorf("the cluster CA changed: kubeadm init ran a second time")
	}
	if !strings.Contains(strings.Join(log, "\n"), "is initialised") {
		t.Errorf("the resumed run did not find init completed")
	}
	waitReady(t, ctx, b.Kubeconfig, 1, 3*time.Minute)
}

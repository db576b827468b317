package bootstrap_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
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
//
// It is the package's one integration test: the steps over `docker exec`, without a cloud. The
// same steps on more machines run through the self-managed AWS provider (package awsmachines), over SSH on the AWS
// emulator's machines: three stacked control planes behind a load balancer, one lost and healed,
// rolled and scaled (TestIntegrationMachinesHeal); external etcd behind an HAProxy machine, an
// apply killed during kubeadm init and resumed without a second init, an etcd member lost, healed
// and rolled (TestIntegrationMachinesHAProxy). Each cluster costs a minute or more of both cores:
// the package does not boot them a second time.
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

package clustercmd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/nuv-dev/nuv/internal/cluster/kind"
	"github.com/nuv-dev/nuv/internal/cluster/kind/kindtest"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
	"github.com/nuv-dev/nuv/internal/runner"
	"github.com/nuv-dev/nuv/internal/syncbuf"
)

// kindRuntime is the container runtime of the kind tests: the project's dockerd (hack/dockerd.sh,
// started by hack/test.sh and named by DOCKER_HOST).
func kindRuntime(t *testing.T) containerrt.Runtime {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a container runtime and a kind node image; skipped under -short")
	}
	rt, err := containerrt.Detect(context.Background(), os.Getenv)
	if err != nil {
		t.Fatalf("%v\n(hack/test.sh starts nuv's own dockerd: `eval \"$(hack/dockerd.sh env)\"`)", err)
	}
	return rt
}

func rtOut(t *testing.T, rt containerrt.Runtime, args ...string) string {
	t.Helper()
	out, err := runner.Output(context.Background(), runner.Cmd{Path: rt.Path, Args: args})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// removeNode removes node container node of kind cluster name behind nuv's back, as a user's
// `docker rm -f -v` would. On a loaded cgroup v1 host the runtime can fail to kill a node whose
// freezer group runc left frozen ("did not receive an exit event"): like nuv's own delete, it
// thaws the cluster's frozen groups and asks again, a few times.
func removeNode(t *testing.T, rt containerrt.Runtime, c cliRun, name, node string) {
	t.Helper()
	kp := kindtest.Provider(t, c.home, c.project, nil)
	for attempt := 1; ; attempt++ {
		kp.ThawNodes(context.Background(), rt, name)
		out, err := runner.Output(context.Background(), runner.Cmd{Path: rt.Path, Args: []string{"rm", "-f", "-v", node}})
		if err == nil {
			return
		}
		if attempt == 4 {
			t.Fatalf("%s rm -f -v %s (%d attempts): %v\n%s", rt.Path, node, attempt, err, out)
		}
		t.Logf("%s rm -f -v %s failed (%v); trying again", rt.Path, node, err)
		time.Sleep(time.Duration(attempt) * 5 * time.Second)
	}
}

// kindLeftovers asks the runtime what is left of kind cluster name: its containers, the volumes
// they had (vols), and kind's network if it has no other cluster on it.
func kindLeftovers(t *testing.T, rt containerrt.Runtime, name string, vols []string) []string {
	t.Helper()
	var left []string
	if c := rtOut(t, rt, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+name, "--format", "{{.Names}}"); c != "" {
		left = append(left, "containers: "+c)
	}
	have := map[string]bool{}
	for _, v := range strings.Fields(rtOut(t, rt, "volume", "ls", "--format", "{{.Name}}")) {
		have[v] = true
	}
	for _, v := range vols {
		if have[v] {
			left = append(left, "volume "+v)
		}
	}
	for _, n := range strings.Fields(rtOut(t, rt, "network", "ls", "--format", "{{.Name}}")) {
		if n == "kind" && rtOut(t, rt, "ps", "-a", "--filter", "network=kind", "--format", "{{.Names}}") == "" {
			left = append(left, "network kind (no container on it)")
		}
	}
	return left
}

// nodeVolumes lists the volumes of kind cluster name's node containers.
func nodeVolumes(t *testing.T, rt containerrt.Runtime, name string) []string {
	t.Helper()
	var vols []string
	for _, c := range strings.Fields(rtOut(t, rt, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+name, "--format", "{{.Names}}")) {
		out := rtOut(t, rt, "inspect", "--format", `{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}`, c)
		vols = append(vols, strings.Fields(out)...)
	}
	return vols
}

func kindSpec(name string, workers int) string {
	s := "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata: {name: " + name + "}\nspec:\n  provider: kind\n  kubernetesVersion: \"1.36\"\n"
	if workers > 0 {
		s += "  nodeGroups:\n  - {name: workers, count: " + itoa(workers) + ", labels: {tier: app}}\n"
	}
	return s
}

// TestIntegrationKind runs the kind provider through `nuv cluster` on the project's dockerd with
// the offline node image: a 1-node and a 2-node cluster made by `apply -f` (nodes Ready and typed
// kind, a pod on each node resolving a Service name and reaching a pod on the other node, the
// pod network's masquerade on every node), a plan
// after apply with no changes, a node-count change planned as a replacement, kind's log export, and
// a delete that leaves no container, volume or network; the 1-node cluster, made with a ttl, goes
// by `nuv cluster gc` once its record is lost (gcByLabel); then a kind cluster of the same name made
// without nuv is a conflict nuv leaves alone.
func TestIntegrationKind(t *testing.T) {
	rt := kindRuntime(t)
	c := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	nodeImage := "" // the node image nuv chose, for the cluster made without nuv
	for _, tc := range []struct {
		name    string
		workers int
	}{{"nuv-kind-1", 0}, {"nuv-kind-2", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			c := cliRun{t: t, home: c.home, project: c.project}
			t.Cleanup(func() { c.run("delete", tc.name) })
			spec := kindSpec(tc.name, tc.workers)
			if tc.workers == 0 {
				spec += "  ttl: 1h\n" // gone by gc at the end (gcByLabel)
			}
			file := c.specFile(spec)
			out, errs, code := c.run("plan", "-f", file, "--detailed-exitcode")
			if code != 2 || !strings.Contains(out, "+ create kind-cluster/"+tc.name) {
				t.Fatalf("plan of a new cluster: exit %d\n%s%s", code, out, errs)
			}
			t0 := time.Now()
			made := t0
			out, errs, code = c.run("apply", "-f", file)
			if code != 0 {
				t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
			}
			t.Logf("apply of %d node(s): %.1fs", tc.workers+1, time.Since(t0).Seconds())
			if nodeImage == "" {
				nodeImage = rtOut(t, rt, "inspect", "--format", "{{.Config.Image}}", tc.name+"-control-plane")
			}
			kc := filepath.Join(c.project, "clusters", tc.name+".kubeconfig")
			st, err := os.Stat(kc)
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("kubeconfig %s: %v %v", kc, st, err)
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", kc)
			if err != nil {
				t.Fatal(err)
			}
			cs := kubernetes.NewForConfigOrDie(cfg)
			ctx := context.Background()
			nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes.Items) != tc.workers+1 {
				t.Fatalf("%d nodes, want %d", len(nodes.Items), tc.workers+1)
			}
			for _, n := range nodes.Items {
				if !nodeReady(&n) {
					t.Errorf("node %s is not Ready", n.Name)
				}
			}
			if typ := kube.DetectNodes(nodes.Items); typ != kube.TypeKind {
				t.Errorf("nuv detects the cluster as %q, want kind", typ)
			}
			if tc.workers > 0 {
				// the node image's pod network masquerades what leaves the pod range, on every node
				for _, n := range []string{tc.name + "-control-plane", tc.name + "-worker"} {
					if out := rtOut(t, rt, "exec", n, "nft", "list", "table", "inet", "nuv-podnet"); !strings.Contains(out, "ip saddr 10.244.0.0/16 ip daddr != 10.244.0.0/16 masquerade") {
						t.Errorf("%s: nuv-podnet's nftables table lacks the masquerade:\n%s", n, out)
					}
				}
			}
			kindtest.LoadNetcheck(t, ctx, tc.name)
			for _, l := range kindtest.CheckPodNetwork(t, ctx, cs, 3*time.Minute) {
				t.Log(l)
			}
			out, errs, code = c.run("plan", "-f", file, "--detailed-exitcode")
			if code != 0 || !strings.Contains(out, "no changes") {
				t.Fatalf("plan after apply: exit %d\n%s%s", code, out, errs)
			}
			if tc.workers == 0 {
				// stopped node containers are an update of "running", which start (or apply) makes
				if out, errs, code = c.run("stop", tc.name); code != 0 {
					t.Fatalf("stop: exit %d\n%s%s", code, out, errs)
				}
				out, errs, code = c.run("plan", "-f", file, "--detailed-exitcode")
				if code != 2 || !strings.Contains(out, "~ update kind-cluster/"+tc.name) || !strings.Contains(out, "running: stopped -> true") {
					t.Fatalf("plan of a stopped cluster: exit %d\n%s%s", code, out, errs)
				}
				if out, errs, code = c.run("apply", "-f", file); code != 0 {
					t.Fatalf("apply of a stopped cluster: exit %d\n%s%s", code, out, errs)
				}
				if out, errs, code = c.run("plan", "-f", file, "--detailed-exitcode"); code != 0 {
					t.Fatalf("plan after the restart: exit %d\n%s%s", code, out, errs)
				}
			}
			out, _, _ = c.run("list")
			if !regexpMatch(`(?m)^`+tc.name+`\s+kind\s+running\s+https://127\.0\.0\.1:\d+\s+`+itoa(tc.workers+1)+`/`+itoa(tc.workers+1), out) {
				t.Errorf("list:\n%s", out)
			}
			if tc.workers > 0 {
				out, errs, code = c.run("plan", "-f", c.specFile(kindSpec(tc.name, tc.workers+1)), "--detailed-exitcode")
				want := "workers: workers=" + itoa(tc.workers) + " -> workers=" + itoa(tc.workers+1) + "  (forces replacement)"
				if code != 2 || !strings.Contains(out, "-/+ replace kind-cluster/"+tc.name) || !strings.Contains(out, want) {
					t.Errorf("plan of one more worker: exit %d, want a replacement with %q\n%s%s", code, want, out, errs)
				}
				out, errs, code = c.run("logs", tc.name, "--tail", "3")
				if code != 0 || !strings.Contains(out, "==> "+tc.name+"-worker/kubelet <==") {
					t.Errorf("logs: exit %d\n%s%s", code, tail(out, 2000), errs)
				}
			}
			if tc.workers == 0 {
				// a cluster that expired while its record was lost goes by gc, found by its labels
				gcByLabel(t, rt, c, tc.name, made)
				return
			}
			vols := nodeVolumes(t, rt, tc.name)
			out, errs, code = c.run("delete", tc.name)
			if code != 0 {
				t.Fatalf("delete: exit %d\n%s%s", code, out, errs)
			}
			if left := kindLeftovers(t, rt, tc.name, vols); len(left) > 0 {
				t.Errorf("left after delete: %s", strings.Join(left, "; "))
			}
			if _, err := os.Stat(kc); !os.IsNotExist(err) {
				t.Errorf("kubeconfig still there: %v", err)
			}
		})
	}
	t.Run("foreign", func(t *testing.T) {
		c := cliRun{t: t, home: c.home, project: c.project}
		const name = "nuv-kind-foreign"
		kp := kindcluster.NewProvider(kindcluster.ProviderWithDocker())
		// The cluster goes the way nuv deletes its own (frozen cgroups thawed, a busy node asked
		// again), and a clean-up that fails or leaves anything fails the test.
		cleanHome := t.TempDir()
		t.Cleanup(func() {
			vols := nodeVolumes(t, rt, name)
			if err := kindtest.Provider(t, cleanHome, c.project, nil).DeleteNodes(context.Background(), name); err != nil {
				t.Errorf("clean-up of the foreign kind cluster %s: %v", name, err)
			}
			if left := kindLeftovers(t, rt, name, vols); len(left) > 0 {
				t.Errorf("left after the clean-up of %s: %s", name, strings.Join(left, "; "))
			}
		})
		if nodeImage == "" {
			t.Fatal("no node image: the clusters nuv made failed")
		}
		raw := "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n- role: control-plane\n  image: " + nodeImage + "\n"
		if h := kind.DetectHost(); h.CgroupV1 {
			raw += "kubeadmConfigPatches:\n- |\n  kind: KubeletConfiguration\n  apiVersion: kubelet.config.k8s.io/v1beta1\n  failCgroupV1: false\n"
		}
		if err := kp.Create(name, kindcluster.CreateWithRawConfig([]byte(raw)), kindcluster.CreateWithKubeconfigPath(filepath.Join(t.TempDir(), "kubeconfig"))); err != nil {
			t.Fatalf("kind create (without nuv): %v", err)
		}
		file := c.specFile(kindSpec(name, 0))
		out, errs, code := c.run("plan", "-f", file, "--detailed-exitcode")
		if code != 2 || !strings.Contains(out, "! conflict kind-cluster/"+name) || !strings.Contains(out, "was not made by nuv; left alone") {
			t.Fatalf("plan over a foreign kind cluster: exit %d\n%s%s", code, out, errs)
		}
		out, errs, code = c.run("apply", "-f", file)
		if code == 0 || !strings.Contains(errs, "nuv did not make them; nuv leaves them alone") {
			t.Fatalf("apply over a foreign kind cluster: exit %d\n%s%s", code, out, errs)
		}
		out, errs, code = c.run("delete", name)
		if code == 0 || !strings.Contains(errs, "was not made by nuv") {
			t.Fatalf("delete of a foreign kind cluster: exit %d\n%s%s", code, out, errs)
		}
		if got := rtOut(t, rt, "ps", "--filter", "label=io.x-k8s.kind.cluster="+name, "--format", "{{.Names}}"); got != name+"-control-plane" {
			t.Fatalf("the foreign cluster's node was touched: running containers %q", got)
		}
	})
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// waitOutput waits until the running command's output has want, or fails (killing it).
func waitOutput(t *testing.T, cmd *exec.Cmd, out *syncbuf.Buffer, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no %q within %s:\n%s", want, limit, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kindNetworks counts the runtime's networks named kind (kind makes one and reuses it).
func kindNetworks(t *testing.T, rt containerrt.Runtime) int {
	return len(strings.Fields(rtOut(t, rt, "network", "ls", "--filter", "name=^kind$", "--format", "{{.ID}}")))
}

// TestIntegrationKindResume kills `nuv cluster apply -f` (SIGKILL: nothing can clean up) while
// kind's create runs kubeadm init in the node container it made: the plan then names the
// half-made cluster and replaces it, saying why; the next apply takes over the dead nuv's lock
// and finishes with every node Ready, leaving only the cluster's own container, one kind network
// and none of the killed create's volumes. A node container removed behind nuv's back is
// replaced the same way. A delete killed while kind removes the node is then finished by the
// next delete.
func TestIntegrationKindResume(t *testing.T) {
	rt := kindRuntime(t)
	c := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	const name = "nuv-life-resume"
	t.Cleanup(func() { c.run("delete", name) })
	node := name + "-control-plane"
	file := c.specFile(kindSpec(name, 0))
	kc := filepath.Join(c.project, "clusters", name+".kubeconfig")

	// 1. SIGKILL while kubeadm init runs in the node container.
	cmd := c.cmd("apply", "-f", file)
	var errb syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &errb, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, cmd, &errb, "Starting control-plane", 5*time.Minute)
	cmd.Process.Kill()
	cmd.Wait()
	killedAt := errb.String()
	if strings.Contains(killedAt, "✓ Starting control-plane") {
		t.Fatalf("kubeadm had finished when nuv was killed:\n%s", killedAt)
	}
	halfID := rtOut(t, rt, "inspect", "--format", "{{.Id}}", node)
	halfVols := nodeVolumes(t, rt, name)
	t.Logf("killed during kubeadm init; half-made node %s (%.12s), volumes %v", node, halfID, halfVols)

	out, errs, code := c.run("plan", "-f", file, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "-/+ replace kind-cluster/"+name) ||
		!regexpMatch(`why: its create did not finish \(nuv was interrupted before the cluster was Ready; node container\(s\) `+node+` exist`, out) ||
		!strings.Contains(out, "running: incomplete -> true") {
		t.Fatalf("plan after a killed create: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("plan after the kill:\n%s", out)

	// 2. The next apply takes the dead nuv's lock over and replaces the half-made cluster.
	out, errs, code = c.run("apply", "-f", file, "--yes") // a replacement: consent given
	if code != 0 {
		t.Fatalf("apply after a killed create: exit %d\n%s%s", code, out, errs)
	}
	if m := regexp.MustCompile(`create phases: .*`).FindString(errs); m != "" {
		t.Log(m)
	}
	if !strings.Contains(errs, "taking it over") {
		t.Errorf("the lock of the killed nuv was not reported as taken over:\n%s", errs)
	}
	if got := nodesOf(t, kc); len(got) != 1 {
		t.Fatalf("nodes after the resumed apply: %v", got)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if !nodeReady(&n) {
			t.Errorf("node %s is not Ready", n.Name)
		}
	}
	if got := rtOut(t, rt, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+name, "--format", "{{.Names}}"); got != node {
		t.Errorf("containers of %s after the resume: %q, want only %s", name, got, node)
	}
	if id := rtOut(t, rt, "inspect", "--format", "{{.Id}}", node); id == halfID {
		t.Errorf("the half-made node container %.12s was kept, not replaced", halfID)
	}
	if n := kindNetworks(t, rt); n != 1 {
		t.Errorf("%d networks named kind, want 1", n)
	}
	have := map[string]bool{}
	for _, v := range strings.Fields(rtOut(t, rt, "volume", "ls", "--format", "{{.Name}}")) {
		have[v] = true
	}
	for _, v := range halfVols {
		if have[v] {
			t.Errorf("volume %s of the killed create's node is still there", v)
		}
	}
	if vols := nodeVolumes(t, rt, name); len(vols) != len(halfVols) {
		t.Errorf("the new node has volumes %v; the killed one had %v", vols, halfVols)
	}
	if out, errs, code = c.run("plan", "-f", file, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after the resumed apply: exit %d\n%s%s", code, out, errs)
	}

	// 2b. The node container removed behind nuv's back (what a delete killed right after kind
	// removed the nodes leaves): the plan replaces the cluster, naming what nuv still has of it,
	// and apply makes it again.
	removeNode(t, rt, c, name, node)
	out, errs, code = c.run("plan", "-f", file, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "-/+ replace kind-cluster/"+name) ||
		!strings.Contains(out, "why: its node containers are gone") || !strings.Contains(out, "kubeconfig "+kc) {
		t.Fatalf("plan after the node container was removed: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code = c.run("apply", "-f", file, "--yes"); code != 0 {
		t.Fatalf("apply after the node container was removed: exit %d\n%s%s", code, out, errs)
	}
	if got := nodesOf(t, kc); len(got) != 1 {
		t.Fatalf("nodes after the apply: %v", got)
	}

	// 3. A delete killed while kind removes the node is finished by the next delete.
	vols := nodeVolumes(t, rt, name)
	cmd = c.cmd("delete", name)
	errb = syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = &errb, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		st, err := runner.Output(context.Background(), runner.Cmd{Path: rt.Path, Args: []string{"inspect", "--format", "{{.State.Status}}", node}})
		if err != nil || strings.TrimSpace(string(st)) != "running" {
			break // kind's `rm -f` has begun (or is done)
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("delete did not stop the node within a minute:\n%s", errb.String())
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	// kind's `rm -f -v` of the node, a process of its own, outlives the killed nuv: let it end, so
	// the next delete finds what a delete killed after kind removed the nodes leaves (nuv's files)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if rtOut(t, rt, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+name, "--format", "{{.Names}}") == "" {
			break
		}
	}
	var state []string
	if cs := rtOut(t, rt, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+name, "--format", "{{.Names}}"); cs != "" {
		state = append(state, "containers "+cs)
	}
	if _, err := os.Stat(kc); err == nil {
		state = append(state, "kubeconfig")
	}
	if _, err := os.Stat(filepath.Join(c.home, "state", name+".json")); err == nil {
		state = append(state, "state record")
	}
	t.Logf("after the killed delete: %v", state)
	if len(state) > 0 && !strings.HasPrefix(state[0], "containers") {
		out, _, _ := c.run("delete", name, "--dry-run")
		t.Logf("delete --dry-run with the nodes gone and nuv's files left:\n%s", out)
		if !strings.Contains(out, "delete kind-cluster/"+name) {
			t.Errorf("the next delete would not finish the job:\n%s", out)
		}
	}
	if out, errs, code = c.run("delete", name); code != 0 {
		t.Fatalf("delete after a killed delete: exit %d\n%s%s", code, out, errs)
	}
	if left := kindLeftovers(t, rt, name, vols); len(left) > 0 {
		t.Errorf("left after the second delete: %s", strings.Join(left, "; "))
	}
	// the scratch directory kind wrote the admin kubeconfig into (the killed runs' included)
	for _, p := range []string{kc, filepath.Join(c.home, "kind", name), filepath.Join(c.home, "state", name+".json"), filepath.Join(c.home, "tmp", "kind-"+name)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", p, err)
		}
	}
}

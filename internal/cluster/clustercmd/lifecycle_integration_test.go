package clustercmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func lifecycleSpec(name string, web int, withBatch bool, webLabel string) string {
	s := `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata:
  name: ` + name + `
spec:
  provider: local
  nodeGroups:
  - name: web
    count: ` + itoa(web) + `
    labels: {tier: ` + webLabel + `}
`
	if withBatch {
		s += "  - name: batch\n    count: 1\n    taints: [\"batch=true:NoSchedule\"]\n"
	}
	return s
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// nodesOf returns "name:group:tier[:taint]" for every node of the cluster behind kubeconfig, sorted.
// The taint is the first one the spec put there: the node.kubernetes.io/* taints that the node
// lifecycle controller adds and removes on its own (not-ready, for a node a moment old) are not the
// spec's and come and go with timing.
func nodesOf(t *testing.T, kubeconfig string) []string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	l, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range l.Items {
		taint := ""
		for _, tn := range n.Spec.Taints {
			if !strings.HasPrefix(tn.Key, "node.kubernetes.io/") {
				taint = ":" + tn.Key
				break
			}
		}
		out = append(out, n.Name+":"+n.Labels["nuv.dev/nodegroup"]+":"+n.Labels["tier"]+taint)
	}
	sort.Strings(out)
	return out
}

func (c cliRun) specFile(body string) string {
	c.t.Helper()
	p := filepath.Join(c.project, "clusters", "specs", "lc.yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		c.t.Fatal(err)
	}
	return p
}

// TestIntegrationLifecycle is kOps' lifecycle test on a local cluster: plan a new spec (exit 2,
// every resource), apply, plan again (exit 0, nothing written), change the node groups (the plan
// shows exactly that), apply (nodes appear and go), delete (no process, state or kubeconfig left).
func TestIntegrationLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("needs local clusters; skipped under -short")
	}
	c := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	t.Cleanup(func() { c.run("delete", "--all", "--yes") })
	f := c.specFile(lifecycleSpec("lc", 2, true, "web"))

	out, errs, code := c.run("plan", "-f", f, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "+ create control-plane/lc") || !strings.Contains(out, "+ create node-group/web") ||
		!strings.Contains(out, "+ create node-group/batch") || !strings.Contains(out, "Plan: 3 to create") {
		t.Fatalf("plan of a new cluster: exit %d\n%s%s", code, out, errs)
	}
	// The expected apply time goes to stderr: no history yet.
	if !strings.Contains(errs, "Expected apply time of cluster lc, from the recorded applies of provider local:\n") ||
		!regexp.MustCompile(`(?m)^  total +no history$`).MatchString(errs) {
		t.Fatalf("plan of a new cluster, stderr:\n%s", errs)
	}
	out, errs, code = c.run("apply", "-f", f)
	if code != 0 || !strings.Contains(out, "cluster lc: 3 created") {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
	// The apply's steps are the history the plan of the next local cluster estimates from.
	next := filepath.Join(t.TempDir(), "lc-next.yaml")
	if err := os.WriteFile(next, []byte(lifecycleSpec("lc-next", 2, true, "web")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code = c.run("plan", "-f", next, "--detailed-exitcode")
	if code != 2 || !regexp.MustCompile(`(?m)^  create control-plane/lc-next +~\S+ \(p90 \S+, 1 sample\)$`).MatchString(errs) ||
		!regexp.MustCompile(`(?m)^  total +~\S+ \(p90 \S+\)$`).MatchString(errs) {
		t.Fatalf("plan of a second cluster after an apply: exit %d, stderr:\n%s", code, errs)
	}
	if fi, err := os.Stat(filepath.Join(c.home, "state", "history", "local.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the apply history file: %v %v", fi, err)
	}
	kubeconfig := filepath.Join(c.project, "clusters", "lc.kubeconfig")
	want := []string{"lc-batch-1:batch::batch", "lc-web-1:web:web", "lc-web-2:web:web"}
	if got := nodesOf(t, kubeconfig); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("nodes after apply: %v, want %v", got, want)
	}
	record := filepath.Join(c.home, "state", "lc.json")
	before, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var rec state.Record
	if err := json.Unmarshal(before, &rec); err != nil || rec.Phase != state.Running || len(rec.Resources) != 3 {
		t.Fatalf("record after apply: %+v %v", rec, err)
	}

	out, errs, code = c.run("plan", "-f", f, "--detailed-exitcode")
	if code != 0 || !strings.Contains(out, "no changes") {
		t.Fatalf("plan after apply: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = c.run("apply", "-f", f)
	if code != 0 || !strings.Contains(out, "no changes") {
		t.Fatalf("second apply: exit %d\n%s%s", code, out, errs)
	}
	if after, _ := os.ReadFile(record); !bytes.Equal(before, after) {
		t.Fatalf("a plan or no-change apply rewrote the state record")
	}

	f = c.specFile(lifecycleSpec("lc", 4, false, "frontend"))
	out, errs, code = c.run("plan", "-f", f, "--detailed-exitcode")
	wantPlan := "cluster lc (local):\n  ~ update node-group/web (lc/web)\n      count: 2 -> 4\n      labels: tier=web -> tier=frontend\n  - delete node-group/batch (lc/batch)\nPlan: 0 to create, 1 to update, 0 to replace, 1 to delete; 1 unchanged.\n"
	if code != 2 || out != wantPlan {
		t.Fatalf("plan of a scale: exit %d\n%s%s--- want\n%s", code, out, errs, wantPlan)
	}
	// The scale deletes a node group: without a terminal and without --yes, apply refuses.
	out, errs, code = c.run("apply", "-f", f)
	if code != 1 || !strings.Contains(errs, "refusing to apply (delete node-group/batch of cluster lc) without confirmation") {
		t.Fatalf("apply of a scale that deletes, without consent: exit %d\n%s%s", code, out, errs)
	}
	if after, _ := os.ReadFile(record); !bytes.Equal(before, after) {
		t.Fatalf("a refused apply rewrote the state record")
	}
	// A saved plan is the consent (terraform's habit): plan -out, then apply FILE carries it out.
	saved := filepath.Join(c.project, "scale.plan")
	if out, errs, code = c.run("plan", "-f", f, "-out", saved); code != 0 || !strings.Contains(out, wantPlan) {
		t.Fatalf("plan -out: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code = c.run("apply", saved); code != 0 || !strings.Contains(out, "cluster lc: 1 updated, 1 deleted") {
		t.Fatalf("apply of the saved plan: exit %d\n%s%s", code, out, errs)
	}
	// Applied once, the plan is stale: the world and the record moved.
	if out, errs, code = c.run("apply", saved); code != 1 || !strings.Contains(errs, "saved plan is stale") {
		t.Fatalf("second apply of the saved plan: exit %d\n%s%s", code, out, errs)
	}
	// create --dry-run of an existing cluster says what create says.
	_, dryErr, dryCode := c.run("create", "-f", f, "--dry-run")
	_, realErr, realCode := c.run("create", "-f", f)
	if dryCode != 1 || realCode != 1 || dryErr != realErr || !strings.Contains(dryErr, "cluster already exists") {
		t.Fatalf("create --dry-run of an existing cluster: exit %d %s\ncreate: exit %d %s", dryCode, dryErr, realCode, realErr)
	}
	want = []string{"lc-web-1:web:frontend", "lc-web-2:web:frontend", "lc-web-3:web:frontend", "lc-web-4:web:frontend"}
	if got := nodesOf(t, kubeconfig); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("nodes after the scale: %v, want %v", got, want)
	}
	if _, _, code = c.run("plan", "-f", f, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after the scale: exit %d", code)
	}

	out, errs, code = c.run("delete", "lc", "--dry-run")
	if code != 0 || !strings.Contains(out, "- delete control-plane/lc") || !strings.Contains(out, "- delete node-group/web") {
		t.Fatalf("delete --dry-run: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code = c.run("delete", "lc"); code != 0 || out != "lc deleted\n" {
		t.Fatalf("delete: exit %d\n%s%s", code, out, errs)
	}
	for _, p := range []string{kubeconfig, record, filepath.Join(c.home, "clusters", "lc")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s remains after delete (%v)", p, err)
		}
	}
	if left := procsMentioning(filepath.Join(c.home, "clusters", "lc")); len(left) > 0 {
		t.Fatalf("processes remain: %v", left)
	}
}

// TestIntegrationResume kills nuv (SIGKILL, nothing can clean up) at several points and shows that
// the next apply or delete finishes the job without making anything twice.
func TestIntegrationResume(t *testing.T) {
	if testing.Short() {
		t.Skip("needs local clusters; skipped under -short")
	}
	c := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	t.Cleanup(func() { c.run("delete", "--all", "--yes") })
	f := c.specFile(lifecycleSpec("lc", 2, true, "web"))
	kubeconfig := filepath.Join(c.project, "clusters", "lc.kubeconfig")
	dir := filepath.Join(c.home, "clusters", "lc")
	want := "lc-batch-1:batch::batch lc-web-1:web:web lc-web-2:web:web"

	// 1. Killed while the control plane starts: before any step is recorded.
	cmd := c.cmd("apply", "-f", f)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForAPIServerPID(t, cmd, dir, &errb)
	cmd.Process.Kill()
	cmd.Wait()
	out, errs, code := c.run("plan", "-f", f)
	if code != 0 || !strings.Contains(out, "~ update control-plane/lc") {
		t.Fatalf("plan after a kill during the control plane: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code = c.run("apply", "-f", f); code != 0 {
		t.Fatalf("apply after a kill: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "taking it over") {
		t.Errorf("the lock of the killed nuv was not reported as taken over:\n%s", errs)
	}
	if got := strings.Join(nodesOf(t, kubeconfig), " "); got != want {
		t.Fatalf("nodes after resume: %s, want %s", got, want)
	}
	apiPID, _ := os.ReadFile(filepath.Join(dir, "pids", "kube-apiserver.pid"))

	// 2. Killed right after each recorded step of an update (scale web to 3, drop batch).
	f = c.specFile(lifecycleSpec("lc", 3, false, "web"))
	for step := 1; step <= 2; step++ {
		cmd := c.cmd("apply", "-f", f, "--yes") // drops batch: consent given
		cmd.Env = append(cmd.Env, "NUV_FAILPOINT_KILL_AFTER_STEP="+itoa(1))
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
			t.Fatalf("apply with a failpoint at step 1 (round %d): %v", step, err)
		}
	}
	if out, errs, code = c.run("apply", "-f", f, "--yes"); code != 0 {
		t.Fatalf("apply after killed updates: exit %d\n%s%s", code, out, errs)
	}
	if got := strings.Join(nodesOf(t, kubeconfig), " "); got != "lc-web-1:web:web lc-web-2:web:web lc-web-3:web:web" {
		t.Fatalf("nodes after the resumed update: %s", got)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "pids", "kube-apiserver.pid")); !bytes.Equal(apiPID, now) {
		t.Fatalf("the control plane was restarted or made again: %q -> %q", apiPID, now)
	}

	// 3. Two applies at once: one waits for the other, both succeed, nothing is made twice.
	f = c.specFile(lifecycleSpec("lc", 5, false, "web"))
	var wg sync.WaitGroup
	codes := make([]int, 2)
	stderrs := make([]string, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, stderrs[i], codes[i] = c.run("apply", "-f", f)
		}()
	}
	wg.Wait()
	if codes[0] != 0 || codes[1] != 0 {
		t.Fatalf("concurrent applies: exits %v\n%s\n%s", codes, stderrs[0], stderrs[1])
	}
	if n := len(nodesOf(t, kubeconfig)); n != 5 {
		t.Fatalf("%d nodes after two concurrent applies of 5", n)
	}

	// 4. A delete killed after its first step is finished by the next delete.
	cmd = c.cmd("delete", "lc")
	cmd.Env = append(cmd.Env, "NUV_FAILPOINT_KILL_AFTER_STEP=1")
	_ = cmd.Run()
	if out, _, _ := c.run("list"); !regexpMatch(`(?m)^lc\s+local\s+\S+ \[deleting\]`, out) {
		t.Fatalf("list after a killed delete:\n%s", out)
	}
	if _, errs, code := c.run("apply", "-f", f); code == 0 || !strings.Contains(errs, "being deleted") {
		t.Fatalf("apply during an unfinished delete: exit %d\n%s", code, errs)
	}
	if out, errs, code = c.run("delete", "lc"); code != 0 {
		t.Fatalf("second delete: exit %d\n%s%s", code, out, errs)
	}
	if left := procsMentioning(dir); len(left) > 0 {
		t.Fatalf("processes remain: %v", left)
	}
	if _, err := os.Stat(filepath.Join(c.home, "state", "lc.json")); !os.IsNotExist(err) {
		t.Fatalf("state record remains: %v", err)
	}
}

// TestIntegrationSharedState keeps the state of a cluster in another cluster (the Kubernetes
// backend a team shares): apply records there, `state list` reads it back, and an unreachable
// store stops apply before anything is made.
func TestIntegrationSharedState(t *testing.T) {
	if testing.Short() {
		t.Skip("needs local clusters; skipped under -short")
	}
	store := localtest.Start(t, localtest.Options{})
	c := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	t.Cleanup(func() { c.run("delete", "--all", "--yes", "--state", "kube:team@"+store.Kubeconfig) })
	f := c.specFile(lifecycleSpec("lc", 1, false, "web"))

	out, errs, code := c.run("apply", "-f", f, "--state", "kube:team@"+filepath.Join(c.project, "missing.kubeconfig"))
	if code != 1 || !strings.Contains(errs, "missing.kubeconfig") {
		t.Fatalf("apply with an unreachable store: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(c.home, "clusters", "lc")); !os.IsNotExist(err) {
		t.Fatalf("a cluster was made although the store could not be reached: %v", err)
	}
	loc := "kube:team@" + store.Kubeconfig
	if out, errs, code = c.run("apply", "-f", f, "--state", loc); code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
	out, _, code = c.run("state", "list", "--state", loc)
	if code != 0 || !regexpMatch(`(?m)^lc\s+local\s+running\s+2\s+-\s`, out) {
		t.Fatalf("state list:\n%s", out)
	}
	cs := kubernetes.NewForConfigOrDie(store.Config)
	sec, err := cs.CoreV1().Secrets("team").Get(context.Background(), "nuv-state-lc", metav1.GetOptions{})
	if err != nil || sec.Type != state.SecretType {
		t.Fatalf("record Secret: %v", err)
	}
	if _, _, code = c.run("plan", "-f", f, "--state", loc, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan against the shared state: exit %d", code)
	}
	if out, errs, code = c.run("delete", "lc", "--state", loc); code != 0 {
		t.Fatalf("delete: exit %d\n%s%s", code, out, errs)
	}
	if _, err := cs.CoreV1().Secrets("team").Get(context.Background(), "nuv-state-lc", metav1.GetOptions{}); err == nil {
		t.Fatal("the record Secret remains after delete")
	}
}

// TestIntegrationSpecAddons: a spec that lists add-ons gets them once its cluster is up; the plan
// shows their changes (install, then an upgrade with both versions) and a converged cluster plans
// nothing.
func TestIntegrationSpecAddons(t *testing.T) {
	if testing.Short() {
		t.Skip("needs local clusters; skipped under -short")
	}
	c := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	t.Cleanup(func() { c.run("delete", "--all", "--yes") })
	writeIndex := func(version, value string) {
		dir := filepath.Join(c.project, "addons")
		if err := os.MkdirAll(filepath.Join(dir, "settings"), 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{
			"index.yaml":       "apiVersion: nuv.dev/v1alpha1\nkind: Addons\nmetadata: {name: test}\nspec:\n  addons:\n  - {name: settings, version: \"" + version + "\", source: {path: settings}}\n",
			"settings/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {level: \"" + value + "\"}\n",
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeIndex("1.0.0", "low")
	f := c.specFile(lifecycleSpec("lc", 1, false, "web") + "  addons: {}\n")

	out, errs, code := c.run("plan", "-f", f, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "+ create addons/lc\n      index: "+filepath.Join(c.project, "addons", "index.yaml")) {
		t.Fatalf("plan of a new cluster with add-ons: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code = c.run("apply", "-f", f); code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
	level := func() string {
		cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(c.project, "clusters", "lc.kubeconfig"))
		if err != nil {
			t.Fatal(err)
		}
		cm, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default").Get(context.Background(), "settings", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the add-on's ConfigMap: %v", err)
		}
		return cm.Data["level"]
	}
	if got := level(); got != "low" {
		t.Fatalf("add-on ConfigMap level %q after apply", got)
	}
	if out, errs, code = c.run("plan", "-f", f, "--detailed-exitcode"); code != 0 || !strings.Contains(out, "no changes") {
		t.Fatalf("plan of the converged cluster: exit %d\n%s%s", code, out, errs)
	}
	writeIndex("1.1.0", "high")
	out, errs, code = c.run("plan", "-f", f, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "~ update addons/lc\n      settings: 1.0.0 -> 1.1.0\n") || strings.Contains(out, "node-group") {
		t.Fatalf("plan of an add-on upgrade: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code = c.run("apply", "-f", f); code != 0 {
		t.Fatalf("apply of the upgrade: exit %d\n%s%s", code, out, errs)
	}
	if got := level(); got != "high" {
		t.Fatalf("add-on ConfigMap level %q after the upgrade", got)
	}
	if _, _, code = c.run("plan", "-f", f, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after the upgrade: exit %d", code)
	}
}

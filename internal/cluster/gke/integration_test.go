package gke_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
	"github.com/nuv-dev/nuv/internal/cluster/gke"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/emulator/emucore"
	"github.com/nuv-dev/nuv/internal/emulator/gcp"
	"github.com/nuv-dev/nuv/internal/kube"
)

// asNuv makes the test binary act as nuv: `nuv cluster ...` runs in its own process (killed with
// SIGKILL by the failpoint), and the kubeconfig's exec credential runs it with -gke-token.
const asNuv = "NUV_GKE_TEST_AS_NUV"

func TestMain(m *testing.M) { clustertest.ActAsNuv(m, asNuv) }

// world is a GKE emulator on loopback, a project directory and a nuv home.
type world struct {
	t             *testing.T
	emu           *gcp.Server
	url, dir      string
	home, project string
	env           map[string]string
	conn          *gke.Conn
	gcpProject    string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	s, err := gcp.New(gcp.Options{Dir: dir, Delay: 300 * time.Millisecond, Log: localtest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	addr := clustertest.Serve(t, func(ctx context.Context, ln net.Listener) error { return gcp.Serve(ctx, ln, s) })
	ctx := context.Background()
	for i := 0; i < 100 && gcp.Ping(ctx, addr) != nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	w := &world{t: t, emu: s, url: "http://" + addr, dir: dir, home: t.TempDir(), project: t.TempDir()}
	w.gcpProject, _ = s.Project()
	w.env = map[string]string{
		gke.EndpointEnv:                  w.url + "/",
		"GOOGLE_APPLICATION_CREDENTIALS": filepath.Join(dir, gcp.CredentialsFileName),
		"NUV_HOME":                       w.home,
		"NUV_PROJECT":                    w.project,
		"CLOUDSDK_CORE_PROJECT":          w.gcpProject,
	}
	// The kubeconfig's exec credential runs this binary as nuv, with the test's environment.
	t.Setenv(asNuv, "1")
	for k, v := range w.env {
		t.Setenv(k, v)
	}
	if w.conn, err = gke.Connect(ctx, os.Getenv); err != nil {
		t.Fatal(err)
	}
	return w
}

// cmd is `nuv ARGS` in the test's environment (newWorld set the world's variables in it).
func (w *world) cmd(args ...string) *exec.Cmd { return clustertest.Command(asNuv, nil, args...) }

// nuv runs nuv ARGS and returns stdout, stderr and the exit code.
func (w *world) nuv(args ...string) (string, string, int) {
	w.t.Helper()
	return clustertest.Output(w.t, w.cmd(args...))
}

func (w *world) must(args ...string) string {
	w.t.Helper()
	out, errs, code := w.nuv(args...)
	if code != 0 {
		w.t.Fatalf("nuv %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out + errs
}

func (w *world) spec(name, body string) string {
	w.t.Helper()
	p := filepath.Join(w.project, "clusters", "specs", name+".yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func gkeSpec(name, project, version, groups string) string {
	return `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: ` + name + `}
spec:
  provider: gke
  kubernetesVersion: "` + version + `"
  tags: {team: ops}
  nodeGroups:
` + groups + `  gke: {project: ` + project + `, location: us-central1-a}
`
}

// nodes lists the nodes of a cluster through its kubeconfig (exec credential: nuv -gke-token):
// "name pool providerID-prefix", sorted.
func (w *world) nodes(name string) []string {
	w.t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(w.project, "clusters", name+".kubeconfig"))
	if err != nil {
		w.t.Fatal(err)
	}
	l, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		w.t.Fatalf("list nodes of %s with its kubeconfig: %v", name, err)
	}
	if got := kube.DetectNodes(l.Items); got != kube.TypeGKE {
		w.t.Errorf("cluster %s detects as %s, want gke", name, got)
	}
	var out []string
	for _, n := range l.Items {
		pid := n.Spec.ProviderID
		pid = pid[:strings.LastIndex(pid, "/")+1]
		out = append(out, n.Labels["cloud.google.com/gke-nodepool"]+" "+n.Labels["node.kubernetes.io/instance-type"]+" "+pid+" "+n.Labels["tier"])
	}
	sort.Strings(out)
	return out
}

// adminRequest is a request to the emulator's /_nuv/faults with its admin token.
func (w *world) adminRequest(method string, body io.Reader) *http.Request {
	w.t.Helper()
	tok, err := emucore.ReadAdminToken(w.dir)
	if err != nil {
		w.t.Fatal(err)
	}
	req, err := emucore.NewAdminRequest(context.Background(), method, w.url+"/_nuv/faults", tok, body)
	if err != nil {
		w.t.Fatal(err)
	}
	return req
}

func (w *world) fault(body string) {
	w.t.Helper()
	resp, err := http.DefaultClient.Do(w.adminRequest(http.MethodPost, strings.NewReader(body)))
	if err != nil || resp.StatusCode != 200 {
		w.t.Fatalf("fault: %v %v", resp, err)
	}
	resp.Body.Close()
}

func (w *world) ops(cluster string, typ containerpb.Operation_Type) []*containerpb.Operation {
	w.t.Helper()
	l, err := w.conn.Client.ListOperations(context.Background(), &containerpb.ListOperationsRequest{Parent: "projects/" + w.gcpProject + "/locations/-"})
	if err != nil {
		w.t.Fatal(err)
	}
	var out []*containerpb.Operation
	for _, op := range l.Operations {
		if op.OperationType == typ && (strings.HasSuffix(op.TargetLink, "/clusters/"+cluster) || strings.Contains(op.TargetLink, "/clusters/"+cluster+"/")) {
			out = append(out, op)
		}
	}
	return out
}

func rx(t *testing.T, re, s, what string) {
	t.Helper()
	if !regexp.MustCompile(re).MatchString(s) {
		t.Fatalf("%s: no match for %s in\n%s", what, re, s)
	}
}

// TestIntegrationGKELifecycle is the kOps-style lifecycle on an emulated GKE cluster through nuv's
// CLI: plan (every resource), apply, plan with no changes, scale a pool (the plan shows just
// that; nodes appear), upgrade, a node pool whose creation fails midway (reported with its
// operation, resumed by the next apply), gcloud against the REST side, delete with nothing left.
func TestIntegrationGKELifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("needs local clusters; skipped under -short")
	}
	if _, err := exec.LookPath("gcloud"); err != nil {
		t.Fatal("gcloud is required (hack/test.sh checks for it): the REST side is tested with it")
	}
	w := newWorld(t)
	t.Cleanup(func() { w.nuv("cluster", "delete", "--yes", "g1") })
	team := "ops"
	g1spec := func(version, groups string) string {
		return strings.Replace(gkeSpec("g1", w.gcpProject, version, groups), "team: ops", "team: "+team, 1)
	}
	web := func(n string) string {
		return "  - {name: web, count: " + n + ", instanceType: e2-standard-4, labels: {tier: web}}\n"
	}
	f := w.spec("g1", g1spec("1.35", web("2")))

	out, errs, code := w.nuv("cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 2 {
		t.Fatalf("plan of a new cluster: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{`\+ create cluster/g1\n(.*\n)*      location: us-central1-a\n`, `\+ create node-pool/web\n(.*\n)*      count: 2\n(.*\n)*      machineType: e2-standard-4\n`,
		`\+ create kubeconfig/g1\n`, `Plan: 3 to create, 0 to update, 0 to replace, 0 to delete; 0 unchanged.`} {
		rx(t, want, out, "plan of a new cluster")
	}
	out = w.must("cluster", "apply", "--yes", "-f", f)
	rx(t, `GKE operation operation-\d+-[0-9a-f]+ \(CREATE_CLUSTER g1\): DONE, \d+s elapsed`, out, "apply")
	rx(t, `GKE operation operation-\S+ \(DELETE_NODE_POOL g1/nodePools/nuv-bootstrap\): DONE`, out, "apply")
	kc := filepath.Join(w.project, "clusters", "g1.kubeconfig")
	if fi, err := os.Stat(kc); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig: %v %v", fi, err)
	}
	b, _ := os.ReadFile(kc)
	if !strings.Contains(string(b), "-gke-token") || strings.Contains(string(b), "ya29.") {
		t.Fatalf("kubeconfig has no exec credential, or holds a token:\n%s", b)
	}
	zone := "gce://" + w.gcpProject + "/us-central1-a/"
	if got, want := strings.Join(w.nodes("g1"), "|"), "web e2-standard-4 "+zone+" web|web e2-standard-4 "+zone+" web"; got != want {
		t.Fatalf("nodes: %s, want %s", got, want)
	}
	// nuv's own cluster inventory detects it as gke through its kubeconfig (exec credential).
	if typ := strings.TrimSpace(w.must("kube", "detect", "g1")); typ != "gke" {
		t.Fatalf("nuv kube detect g1: %q", typ)
	}
	state := filepath.Join(w.home, "state", "g1.json")
	before, _ := os.ReadFile(state)
	out, errs, code = w.nuv("cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 0 || !strings.Contains(out, "no changes") {
		t.Fatalf("plan after apply: exit %d\n%s%s", code, out, errs)
	}
	w.must("cluster", "apply", "--yes", "-f", f)
	if after, _ := os.ReadFile(state); !bytes.Equal(before, after) {
		t.Fatal("a no-change apply rewrote the state record")
	}

	// Scale: the plan shows just that change.
	f = w.spec("g1", g1spec("1.35", web("3")))
	out, _, code = w.nuv("cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "  ~ update node-pool/web (projects/"+w.gcpProject+"/locations/us-central1-a/clusters/g1/nodePools/web)\n      count: 2 -> 3\nPlan: 0 to create, 1 to update, 0 to replace, 0 to delete; 2 unchanged.") {
		t.Fatalf("plan of a scale: exit %d\n%s", code, out)
	}
	rx(t, `SET_NODE_POOL_SIZE g1/nodePools/web\): DONE`, w.must("cluster", "apply", "--yes", "-f", f), "scale")
	if n := len(w.nodes("g1")); n != 3 {
		t.Fatalf("%d nodes after scaling to 3", n)
	}

	// The cluster's labels (spec.tags) change in place, through GKE's fingerprinted SetLabels.
	team = "dev"
	f = w.spec("g1", g1spec("1.35", web("3")))
	out, _, _ = w.nuv("cluster", "plan", "-f", f)
	rx(t, `~ update cluster/g1 \(\S+\)\n      labels: team=ops -> team=dev\nPlan: 0 to create, 1 to update`, out, "plan of a label change")
	rx(t, `SET_LABELS g1\): DONE`, w.must("cluster", "apply", "--yes", "-f", f), "label change")

	// Upgrade: the control plane, then the node pool.
	f = w.spec("g1", g1spec("1.36", web("3")))
	out, _, _ = w.nuv("cluster", "plan", "-f", f)
	rx(t, `~ update cluster/g1 \(\S+\)\n      version: 1\.35 -> 1\.36\n  ~ update node-pool/web \(\S+\)\n      version: 1\.35 -> 1\.36\nPlan: 0 to create, 2 to update`, out, "plan of an upgrade")
	out = w.must("cluster", "apply", "--yes", "-f", f)
	rx(t, `UPGRADE_MASTER g1\): DONE(.*\n)*.*UPGRADE_NODES g1/nodePools/web\): DONE`, out, "upgrade")
	gc, err := w.conn.Client.GetCluster(context.Background(), &containerpb.GetClusterRequest{Name: "projects/" + w.gcpProject + "/locations/us-central1-a/clusters/g1"})
	if err != nil || !strings.HasPrefix(gc.CurrentMasterVersion, "1.36.") || !strings.HasPrefix(gc.NodePools[0].Version, "1.36.") {
		t.Fatalf("after the upgrade: %v %v", gc, err)
	}

	// A node pool whose creation fails midway: the error names the operation; the next apply
	// replaces the pool GKE left in ERROR.
	w.fault(`{"method":"CreateNodePool","kind":"fail-operation","message":"Insufficient regional quota to satisfy request: resource \"CPUS\"","count":1}`)
	batch := "  - {name: batch, count: 1, taints: [\"batch=true:NoSchedule\"]}\n"
	f = w.spec("g1", g1spec("1.36", web("3")+batch))
	out, errs, code = w.nuv("cluster", "apply", "--yes", "-f", f)
	if code == 0 {
		t.Fatalf("apply with a failing operation succeeded:\n%s%s", out, errs)
	}
	rx(t, `create node-pool/batch of cluster g1 failed after \S+: GKE operation operation-\S+ \(CREATE_NODE_POOL of g1/nodePools/batch\) failed after \S+: Internal: Insufficient regional quota`, errs, "failed apply")
	out, _, _ = w.nuv("cluster", "plan", "-f", f)
	rx(t, `~ update node-pool/batch \(\S+\)\n      status: ERROR: Insufficient regional quota to satisfy request: resource "CPUS" -> RUNNING\n`, out, "plan after the failure")
	w.must("cluster", "apply", "--yes", "-f", f)
	nodes := strings.Join(w.nodes("g1"), "|")
	if !strings.Contains(nodes, "batch e2-medium "+zone) || len(w.nodes("g1")) != 4 {
		t.Fatalf("nodes after the resumed apply: %s", nodes)
	}
	// Scaling down removes nodes.
	f = w.spec("g1", g1spec("1.36", web("1")+batch))
	w.must("cluster", "apply", "--yes", "-f", f)
	if got, want := strings.Join(w.nodes("g1"), "|"), "batch e2-medium "+zone+" |web e2-standard-4 "+zone+" web"; got != want {
		t.Fatalf("nodes after scaling web to 1: %s, want %s", got, want)
	}

	// gcloud, against the REST side, sees what nuv made.
	gcloud := func(args ...string) string {
		t.Helper()
		creds, _, err := gke.Credentials(context.Background(), os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := creds.Token(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tf := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(tf, []byte(tok.Value), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("gcloud", append(args, "--project", w.gcpProject, "--access-token-file", tf, "--format", "json")...)
		cmd.Env = append(os.Environ(), "CLOUDSDK_CONFIG="+t.TempDir(), "CLOUDSDK_CORE_DISABLE_PROMPTS=1")
		b, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("gcloud %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
			}
			t.Fatal(err)
		}
		return string(b)
	}
	var listed []struct {
		Name, Status, Location, Endpoint string
		CurrentNodeCount                 int
		ResourceLabels                   map[string]string
	}
	if err := json.Unmarshal([]byte(gcloud("container", "clusters", "list")), &listed); err != nil || len(listed) != 1 ||
		listed[0].Name != "g1" || listed[0].Status != "RUNNING" || listed[0].CurrentNodeCount != 2 || listed[0].ResourceLabels["nuv-cluster"] != "g1" {
		t.Fatalf("gcloud container clusters list: %v %+v", err, listed)
	}
	var pools []struct{ Name, Status string }
	if err := json.Unmarshal([]byte(gcloud("container", "node-pools", "list", "--cluster", "g1", "--zone", "us-central1-a")), &pools); err != nil ||
		len(pools) != 2 || pools[0].Name != "web" || pools[1].Name != "batch" || pools[1].Status != "RUNNING" {
		t.Fatalf("gcloud container node-pools list: %v %+v", err, pools)
	}
	var described struct {
		Endpoint   string
		MasterAuth struct{ ClusterCaCertificate string }
		NodePools  []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(gcloud("container", "clusters", "describe", "g1", "--zone", "us-central1-a")), &described); err != nil || len(described.NodePools) != 2 {
		t.Fatalf("gcloud container clusters describe: %v %+v", err, described)
	}
	if cfg, _ := clientcmd.LoadFromFile(kc); cfg == nil || cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].Server != "https://"+described.Endpoint {
		t.Fatalf("the kubeconfig's server is not the endpoint gcloud describes (%s)", described.Endpoint)
	}

	// Delete: nothing left, in the emulator, on disk or as processes.
	out = w.must("cluster", "delete", "--yes", "g1")
	rx(t, `DELETE_CLUSTER g1\): DONE`, out, "delete")
	l, err := w.conn.Client.ListClusters(context.Background(), &containerpb.ListClustersRequest{Parent: "projects/" + w.gcpProject + "/locations/-"})
	if err != nil || len(l.Clusters) != 0 {
		t.Fatalf("clusters after delete: %v %v", l, err)
	}
	for _, p := range []string{kc, state} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left after delete: %v", p, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(w.dir, "clusters", "clusters"))
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") { // the local provider's lock files stay
			t.Errorf("control plane %s left in the emulator", e.Name())
		}
	}
}

// TestIntegrationGKEResume: a create killed (SIGKILL) while GKE runs its CREATE_CLUSTER operation,
// then one killed right after its first recorded step (the failpoint), are finished by the next
// apply without making anything twice.
func TestIntegrationGKEResume(t *testing.T) {
	if testing.Short() {
		t.Skip("needs local clusters; skipped under -short")
	}
	w := newWorld(t)
	t.Cleanup(func() { w.nuv("cluster", "delete", "--yes", "g2") })
	// A regional cluster (the highly available choice) over two zones: nodes per pool and zone.
	body := strings.Replace(gkeSpec("g2", w.gcpProject, "1.35", "  - {name: app, count: 1}\n  - {name: jobs, count: 1}\n"),
		"location: us-central1-a}", "location: us-central1}\n  zones: [us-central1-a, us-central1-b]\n  controlPlane: {count: 3}", 1)
	f := w.spec("g2", body)

	// 1. Killed while the cluster is being created.
	cmd := w.cmd("cluster", "apply", "--yes", "-f", f)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &errb, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for len(w.ops("g2", containerpb.Operation_CREATE_CLUSTER)) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no CREATE_CLUSTER operation:\n%s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if op := w.ops("g2", containerpb.Operation_CREATE_CLUSTER)[0]; op.Status == containerpb.Operation_DONE {
		t.Logf("the create operation was already done when nuv was killed")
	}
	out, _, _ := w.nuv("cluster", "plan", "-f", f)
	rx(t, `- delete node-pool/nuv-bootstrap|~ update cluster/g2`, out, "plan after a kill during the create")
	if strings.Contains(out, "+ create cluster/g2") {
		t.Fatalf("the plan after the kill creates the cluster again:\n%s", out)
	}

	// 1b. Killed in the window that matters: the first step of the resumed apply made its change
	// and the record does not say so yet.
	cmd = w.cmd("cluster", "apply", "-f", f)
	cmd.Env = append(cmd.Env, "NUV_FAILPOINT_KILL_BEFORE_RECORD=1")
	cmd.Stdout, cmd.Stderr = &errb, &errb
	if err := cmd.Run(); err == nil {
		t.Fatalf("the failpoint before the record did not kill nuv:\n%s", errb.String())
	}

	// 2. Killed right after the first step of the resumed apply was recorded.
	cmd = w.cmd("cluster", "apply", "--yes", "-f", f)
	cmd.Env = append(cmd.Env, "NUV_FAILPOINT_KILL_AFTER_STEP=1")
	cmd.Stdout, cmd.Stderr = &errb, &errb
	if err := cmd.Run(); err == nil {
		t.Fatalf("the failpoint did not kill nuv:\n%s", errb.String())
	}
	out = w.must("cluster", "apply", "--yes", "-f", f)
	if strings.Contains(out, "create cluster/g2") {
		t.Fatalf("the cluster was created again:\n%s", out)
	}
	a, b := "gce://"+w.gcpProject+"/us-central1-a/", "gce://"+w.gcpProject+"/us-central1-b/"
	if got, want := strings.Join(w.nodes("g2"), "|"), "app e2-medium "+a+" |app e2-medium "+b+" |jobs e2-medium "+a+" |jobs e2-medium "+b+" "; got != want {
		t.Fatalf("nodes after the resumed create: %s, want %s", got, want)
	}
	if n := len(w.ops("g2", containerpb.Operation_CREATE_CLUSTER)); n != 1 {
		t.Fatalf("%d CREATE_CLUSTER operations for g2, want 1", n)
	}
	if n := len(w.ops("g2", containerpb.Operation_CREATE_NODE_POOL)); n != 2 {
		t.Fatalf("%d CREATE_NODE_POOL operations for g2, want 2", n)
	}
	out, _, code := w.nuv("cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 0 {
		t.Fatalf("plan after the resumed create: exit %d\n%s", code, out)
	}
	w.must("cluster", "delete", "--yes", "g2")
	if n := len(w.ops("g2", containerpb.Operation_DELETE_CLUSTER)); n != 1 {
		t.Fatalf("%d DELETE_CLUSTER operations", n)
	}
}

// TestIntegrationGKECreateFailsMidway: GKE's CREATE_CLUSTER operation failing halfway is reported
// with the operation, the plan shows the cluster GKE left in ERROR, and the next apply makes it
// again and finishes.
func TestIntegrationGKECreateFailsMidway(t *testing.T) {
	if testing.Short() {
		t.Skip("needs local clusters; skipped under -short")
	}
	w := newWorld(t)
	t.Cleanup(func() { w.nuv("cluster", "delete", "--yes", "g3") })
	f := w.spec("g3", gkeSpec("g3", w.gcpProject, "1.36", "  - {name: app, count: 1}\n"))
	w.fault(`{"method":"CreateCluster","kind":"fail-operation","code":"RESOURCE_EXHAUSTED","message":"Insufficient regional quota to satisfy request: resource \"IN_USE_ADDRESSES\"","count":1}`)
	out, errs, code := w.nuv("cluster", "apply", "--yes", "-f", f)
	if code == 0 {
		t.Fatalf("apply with a failing create succeeded:\n%s%s", out, errs)
	}
	rx(t, `create cluster/g3 of cluster g3 failed after \S+: GKE operation operation-\S+ \(CREATE_CLUSTER of g3\) failed after \S+: ResourceExhausted: Insufficient regional quota`, errs, "failed create")
	out, _, _ = w.nuv("cluster", "plan", "-f", f)
	rx(t, `~ update cluster/g3 \(\S+\)\n      status: ERROR: Insufficient regional quota to satisfy request: resource "IN_USE_ADDRESSES" -> RUNNING\n`, out, "plan after the failed create")
	out = w.must("cluster", "apply", "--yes", "-f", f)
	rx(t, `cluster g3 is in ERROR: .*: deleting it and creating it again`, out, "resumed apply")
	if got := w.nodes("g3"); len(got) != 1 {
		t.Fatalf("nodes: %v", got)
	}
	if _, _, code := w.nuv("cluster", "plan", "-f", f, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after the resumed apply: exit %d", code)
	}
}

package allkubes

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/report"
)

// The unit tests run a stand-in for nuv (a shell script) against stand-in API servers (an HTTPS
// server answering /version); the integration tests run the real nuv on real local clusters.

const standIn = `#!/bin/sh
echo "target=$1 cluster=$NUV_CLUSTER kube=$KUBE kubeconfig=$KUBECONFIG tmp=$TMPDIR"
case "$1" in
pass) exit 0 ;;
fail)
  echo "step 02-assert broke"
  printf '{"failingStep":"t1/02-assert","message":"t1/02-assert: not ready","steps":[{"name":"t1","status":"failed"}]}' > "$NUV_RESULT"
  echo "saved by the child" > "$NUV_ARTIFACTS/note.txt"
  exit 1 ;;
flaky)
  f="$FLAKY_DIR/$NUV_CLUSTER"
  if [ -f "$f" ]; then echo second try passes; exit 0; fi
  touch "$f"; echo first try fails; exit 3 ;;
hang)
  sleep 300 &
  echo $! > "$PIDS_DIR/$NUV_CLUSTER.pid"
  echo started
  wait ;;
leak)
  echo "the token is $DEPLOY_TOKEN"
  . ./.env
  echo "password=$DB_PASSWD" > "$NUV_ARTIFACTS/dump.txt"
  printf '{"failingStep":"leak","message":"login with %s failed"}' "$DEPLOY_TOKEN" > "$NUV_RESULT"
  exit 1 ;;
failon)
  if [ "$NUV_CLUSTER" = "$2" ]; then echo "fails here"; exit 1; fi
  exit 0 ;;
upgrade)
  echo "from=${NUV_UPGRADE_FROM:-none}"
  if [ -n "$NUV_UPGRADE_FROM" ]; then
    printf '{"steps":[{"name":"install-from","status":"passed"},{"name":"converged","status":"passed"}],"upgrade":{"from":"%s","uidKept":true,"data":"kept"}}' "$NUV_UPGRADE_FROM" > "$NUV_RESULT"
  fi
  exit 0 ;;
esac
echo "unknown target $1"; exit 9
`

type fileInv struct{}

func (f fileInv) List(project string) ([]Cluster, error) {
	paths, err := filepath.Glob(filepath.Join(project, "clusters", "*.kubeconfig"))
	if err != nil {
		return nil, err
	}
	var out []Cluster
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".kubeconfig")
		c := Cluster{Name: name, Kubeconfig: p}
		cfg, err := clientcmd.LoadFromFile(p)
		if err != nil {
			c.Err = err
		} else if ctx := cfg.Contexts[cfg.CurrentContext]; ctx != nil && cfg.Clusters[ctx.Cluster] != nil {
			c.Server = cfg.Clusters[ctx.Cluster].Server
		}
		out = append(out, c)
	}
	return out, nil
}

func (f fileInv) RESTConfig(path string) (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", path)
}

func (f fileInv) Nodes(ctx context.Context, cfg *rest.Config) ([]corev1.Node, error) {
	return ListNodes(ctx, cfg)
}

// nodeList is what a stand-in API server of the given flavor answers for /api/v1/nodes: the nodes
// a nuv local cluster of that flavor has (kwok-managed, labelled nuv.dev/provider=local); for ""
// one real-looking node of a cluster nuv did not make.
func nodeList(name, flavor string) string {
	list := corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}}
	if flavor == "" {
		list.Items = append(list.Items, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name + "-worker",
			Labels: map[string]string{"kubernetes.io/hostname": name + "-worker"}}})
	} else {
		for i := 0; i < 2; i++ {
			key := flavor
			if flavor == "local" { // a plain local cluster: no --flavor
				key = ""
			}
			fl, ok := cluster.Flavors()[key]
			if !ok {
				panic("stand-in API server: no flavor " + flavor)
			}
			n, labels, pid := fl.Node(name, i)
			labels[kube.LabelProvider], labels[kube.LabelCluster] = "local", name
			if key != "" {
				labels[kube.LabelFlavor] = key
			}
			list.Items = append(list.Items, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels,
				Annotations: map[string]string{kube.AnnotationKwokNode: "fake"}}, Spec: corev1.NodeSpec{ProviderID: pid}})
		}
	}
	data, _ := json.Marshal(list)
	return string(data)
}

type fixture struct {
	project, exe, flaky, pids string
	inv                       fileInv
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{project: t.TempDir(), inv: fileInv{}}
	bin := t.TempDir()
	f.exe = filepath.Join(bin, "nuv")
	if err := os.WriteFile(f.exe, []byte(standIn), 0o755); err != nil {
		t.Fatal(err)
	}
	f.flaky, f.pids = t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(f.project, "clusters"), 0o755)
	return f
}

// apiServer adds a cluster whose stand-in API server answers /version.
func (f *fixture) apiServer(t *testing.T, name, typ string) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/version":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"major":"1","minor":"36","gitVersion":"v1.36.3"}`)
			return
		case "/api/v1/nodes":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, nodeList(name, typ))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	f.kubeconfig(t, name, srv.URL)
}

func (f *fixture) kubeconfig(t *testing.T, name, server string) {
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster: {server: %[2]s, insecure-skip-tls-verify: true}
users:
- name: %[1]s
  user: {token: secret-token-never-printed}
contexts:
- name: %[1]s
  context: {cluster: %[1]s, user: %[1]s}
current-context: %[1]s
`, name, server)
	if err := os.WriteFile(filepath.Join(f.project, "clusters", name+".kubeconfig"), []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) options(out *bytes.Buffer, target ...string) Options {
	return Options{
		Project: f.project, Exe: f.exe, Command: target, Target: target[0],
		Out: out, Log: cli.Quiet(), Inv: f.inv, ProbeTimeout: 2 * time.Second,
		Environ: append(os.Environ(), "FLAKY_DIR="+f.flaky, "PIDS_DIR="+f.pids, "KUBECONFIG=/must/not/leak"),
	}
}

func readReport(t *testing.T, dir string) report.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, report.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func statuses(r *report.Report) map[string]report.Status {
	m := map[string]report.Status{}
	for _, res := range r.Results {
		m[res.Cluster] = res.Status
	}
	return m
}

func TestAllPassEachRunHasItsOwnClusterAndScratch(t *testing.T) {
	f := newFixture(t)
	f.apiServer(t, "a", "eks")
	f.apiServer(t, "b", "gke")
	f.apiServer(t, "c", "")
	var out bytes.Buffer
	res, err := Run(context.Background(), f.options(&out, "pass"))
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	r := readReport(t, res.Dir)
	if len(r.Results) != 3 {
		t.Fatalf("want one entry per cluster, got %d", len(r.Results))
	}
	tmps := map[string]bool{}
	for _, x := range r.Results {
		if x.Status != report.Passed || x.ServerVersion != "v1.36.3" || x.Attempts != 1 {
			t.Errorf("%s: %+v", x.Cluster, x)
		}
		log, err := os.ReadFile(filepath.Join(res.Dir, x.Log))
		if err != nil {
			t.Fatal(err)
		}
		want := "kubeconfig=" + filepath.Join(f.project, "clusters", x.Cluster+".kubeconfig")
		if !strings.Contains(string(log), want) || !strings.Contains(string(log), "cluster="+x.Cluster) {
			t.Errorf("%s log lacks its own KUBECONFIG/NUV_CLUSTER:\n%s", x.Cluster, log)
		}
		_, after, _ := strings.Cut(string(log), "tmp=")
		tmp := strings.Fields(after)[0]
		if tmps[tmp] {
			t.Errorf("TMPDIR %s shared", tmp)
		}
		tmps[tmp] = true
		if _, err := os.Stat(tmp); !os.IsNotExist(err) {
			t.Errorf("scratch %s left behind", tmp)
		}
	}
	types := map[string]string{}
	for _, x := range r.Results {
		types[x.Cluster] = x.Type
	}
	if types["a"] != "eks" || types["b"] != "gke" || types["c"] != "generic" {
		t.Errorf("types: %v", types)
	}
	// Each cell says truthfully what it ran on: a local cluster flavored eks is not an EKS cluster.
	want := map[string]report.Platform{
		"a": {Provider: "local", Flavor: "eks", DetectedBy: "providerID", Evidence: "aws://", Nodes: 2, Simulated: 2},
		"b": {Provider: "local", Flavor: "gke", DetectedBy: "providerID", Evidence: "gce://", Nodes: 2, Simulated: 2},
		"c": {Provider: "kubeconfig", DetectedBy: "none", Evidence: "no distribution marker on the nodes", Nodes: 1, Simulated: 0},
	}
	for _, x := range r.Results {
		if x.Platform == nil || *x.Platform != want[x.Cluster] {
			t.Errorf("%s platform: %+v, want %+v", x.Cluster, x.Platform, want[x.Cluster])
		}
		if p := x.Provenance; p == nil || p.Run != filepath.Base(res.Dir) || p.Machine == "" || p.Ended.Before(p.Started) {
			t.Errorf("%s provenance: %+v", x.Cluster, p)
		}
	}
	for _, line := range []string{`(?m)^a\s+eks\s+providerID\s+local/eks\s+2 simulated\s+v1.36.3\s+passed`, `(?m)^c\s+generic\s+none\s+kubeconfig\s+1 real\s+v1.36.3\s+passed`} {
		if !regexp.MustCompile(line).MatchString(out.String()) {
			t.Errorf("table lacks %q:\n%s", line, out.String())
		}
	}
	if !strings.Contains(out.String(), "a | target=pass cluster=a kube=eks") {
		t.Errorf("output is not prefixed per cluster:\n%s", out.String())
	}
	if strings.Contains(out.String(), "secret-token") {
		t.Error("a credential was printed")
	}
	if !strings.Contains(out.String(), "report: "+res.Dir) {
		t.Error("report path not printed")
	}
	var suites report.JUnitSuites
	data, _ := os.ReadFile(filepath.Join(res.Dir, report.JUnitFile))
	if err := xml.Unmarshal(data, &suites); err != nil || len(suites.Suites) != 3 {
		t.Errorf("junit: %v, %d suites", err, len(suites.Suites))
	}
}

func TestUnreachableIsFastAndDoesNotDelayOthers(t *testing.T) {
	f := newFixture(t)
	f.apiServer(t, "up", "local")
	// A closed port refuses at once; a listener that never accepts hangs until the probe timeout.
	f.kubeconfig(t, "refused", "https://127.0.0.1:1")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f.kubeconfig(t, "blackhole", "https://"+l.Addr().String())
	os.WriteFile(filepath.Join(f.project, "clusters", "broken.kubeconfig"), []byte("clusters: [oops"), 0o600)
	var out bytes.Buffer
	o := f.options(&out, "pass")
	o.ProbeTimeout = 1500 * time.Millisecond
	start := time.Now()
	res, err := Run(context.Background(), o)
	took := time.Since(start)
	if err == nil {
		t.Fatal("want a non-nil error when a cluster is unreachable")
	}
	if took > 5*time.Second {
		t.Errorf("run took %s with a %s probe timeout", took, o.ProbeTimeout)
	}
	st := statuses(res.Report)
	if st["up"] != report.Passed || st["refused"] != report.Unreachable || st["blackhole"] != report.Unreachable || st["broken"] != report.Failed {
		t.Errorf("statuses: %v", st)
	}
	for _, x := range res.Report.Results {
		if x.Cluster == "blackhole" && x.Seconds > 3 {
			t.Errorf("blackhole marked after %.1fs", x.Seconds)
		}
	}
}

func TestFailureKeepsStepAndArtifactsOfThatCellOnly(t *testing.T) {
	f := newFixture(t)
	f.apiServer(t, "a", "eks")
	f.apiServer(t, "b", "gke")
	var out bytes.Buffer
	res, err := Run(context.Background(), f.options(&out, "failon", "b"))
	if err == nil || !strings.Contains(err.Error(), "1 of 2") {
		t.Fatalf("want 1 of 2 failed, got %v", err)
	}
	st := statuses(res.Report)
	if st["a"] != report.Passed || st["b"] != report.Failed {
		t.Errorf("statuses: %v", st)
	}
	for _, x := range res.Report.Results {
		if (x.Artifacts != "") != (x.Cluster == "b") {
			t.Errorf("%s artifacts %q", x.Cluster, x.Artifacts)
		}
		if x.Cluster == "b" && x.Message != "fails here" {
			t.Errorf("b message %q", x.Message)
		}
	}

	f2 := newFixture(t)
	f2.apiServer(t, "x", "kind")
	res, err = Run(context.Background(), f2.options(&out, "fail"))
	if err == nil {
		t.Fatal("want failure")
	}
	x := res.Report.Results[0]
	if x.FailingStep != "t1/02-assert" || len(x.Steps) != 1 || x.ExitCode != 1 {
		t.Errorf("child result not read: %+v", x)
	}
	note, err := os.ReadFile(filepath.Join(res.Dir, x.Artifacts, "child", "note.txt"))
	if err != nil || !strings.Contains(string(note), "saved by the child") {
		t.Errorf("child artifacts not copied: %v", err)
	}
}

func TestRetriesRunAgainOnlyWhatFailed(t *testing.T) {
	f := newFixture(t)
	f.apiServer(t, "a", "")
	var out bytes.Buffer
	o := f.options(&out, "flaky")
	o.Retries = 1
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	x := res.Report.Results[0]
	if x.Status != report.Passed || x.Attempts != 2 {
		t.Errorf("want passed on attempt 2: %+v", x)
	}
	log, _ := os.ReadFile(filepath.Join(res.Dir, x.Log))
	if !strings.Contains(string(log), "first try fails") || !strings.Contains(string(log), "attempt 2 of 2") {
		t.Errorf("log:\n%s", log)
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestTimeoutEndsTheWholeProcessGroup(t *testing.T) {
	f := newFixture(t)
	f.apiServer(t, "slow", "")
	f.apiServer(t, "fast", "")
	var out bytes.Buffer
	o := f.options(&out, "hang")
	o.Only = []string{"slow"}
	o.Timeout = time.Second
	res, err := Run(context.Background(), o)
	if err == nil {
		t.Fatal("want failure on timeout")
	}
	if st := statuses(res.Report); st["slow"] != report.TimedOut || len(st) != 1 {
		t.Errorf("statuses: %v", st)
	}
	ps := readPids(f.pids)
	if len(ps) != 1 {
		t.Fatalf("grandchild pids: %v", ps)
	}
	waitFor(t, "grandchild to end", 2*time.Second, func() bool { return !alive(ps[0]) })
}

func TestCancelEndsEveryChildAndWritesAPartialReport(t *testing.T) {
	f := newFixture(t)
	for _, n := range []string{"a", "b", "c"} {
		f.apiServer(t, n, "")
	}
	var out bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitFor(t, "all children to start", 10*time.Second, func() bool { return len(readPids(f.pids)) == 3 })
		cancel()
	}()
	start := time.Now()
	res, err := Run(ctx, f.options(&out, "hang"))
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("cancel took %s", time.Since(start))
	}
	r := readReport(t, res.Dir)
	if !r.Partial || len(r.Results) != 3 {
		t.Fatalf("want a partial report with 3 entries: %+v", r)
	}
	for _, x := range r.Results {
		if x.Status != report.Cancelled {
			t.Errorf("%s: %s", x.Cluster, x.Status)
		}
	}
	for _, p := range readPids(f.pids) {
		waitFor(t, "children to end", 2*time.Second, func() bool { return !alive(p) })
	}
}

func TestGroupPrintsOneBlockPerCluster(t *testing.T) {
	f := newFixture(t)
	f.apiServer(t, "a", "")
	f.apiServer(t, "b", "")
	var out bytes.Buffer
	o := f.options(&out, "pass")
	o.Group = true
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, n := range []string{"a", "b"} {
		i := strings.Index(s, "=== "+n+": passed\n    target=pass cluster="+n)
		if i < 0 {
			t.Errorf("no block for %s:\n%s", n, s)
		}
	}
}

func TestFilter(t *testing.T) {
	all := []Cluster{{Name: "b"}, {Name: "a"}, {Name: "c"}}
	for _, tc := range []struct {
		only, exclude []string
		want          string
		err           bool
	}{
		{nil, nil, "a,b,c", false},
		{[]string{"c", "a"}, nil, "a,c", false},
		{nil, []string{"b"}, "a,c", false},
		{[]string{"a", "b"}, []string{"b"}, "a", false},
		{[]string{"zz"}, nil, "", true},
		{nil, []string{"zz"}, "", true},
	} {
		got, err := filter(all, tc.only, tc.exclude)
		if (err != nil) != tc.err {
			t.Errorf("%v/%v: err %v", tc.only, tc.exclude, err)
			continue
		}
		if err == nil && strings.Join(names(got), ",") != tc.want {
			t.Errorf("%v/%v: got %v want %s", tc.only, tc.exclude, names(got), tc.want)
		}
		if err != nil && cli.ExitCode(err) != 2 {
			t.Errorf("unknown cluster should be a usage error: %v", err)
		}
	}
}

func TestNoClusters(t *testing.T) {
	f := newFixture(t)
	var out bytes.Buffer
	_, err := Run(context.Background(), f.options(&out, "pass"))
	if err == nil || !strings.Contains(err.Error(), "no clusters") {
		t.Errorf("want a hint about no clusters, got %v", err)
	}
}

// TestFailedReportHoldsNoSecret: a failing child that prints secret values in its output, result
// message and artifacts leaves none of them in any file of the report, and the report's files and
// directories are private.
func TestFailedReportHoldsNoSecret(t *testing.T) {
	f := newFixture(t)
	f.apiServer(t, "a", "eks")
	os.WriteFile(filepath.Join(f.project, ".env"), []byte("DB_PASSWD=from-dotenv-hunter2\n"), 0o600)
	var out bytes.Buffer
	o := f.options(&out, "leak")
	o.Environ = append(o.Environ, "DEPLOY_TOKEN=tok-in-environment-42") // DB_PASSWD only in .env
	res, err := Run(context.Background(), o)
	if err == nil {
		t.Fatal("want a failure")
	}
	x := res.Report.Results[0]
	if x.Artifacts == "" || !strings.Contains(x.Message, "login with *** failed") {
		t.Fatalf("artifacts %q, message %q", x.Artifacts, x.Message)
	}
	if strings.Contains(out.String(), "tok-in-environment-42") || !strings.Contains(out.String(), "the token is ***") {
		t.Errorf("streamed output:\n%s", out.String())
	}
	checkNoSecrets(t, res.Dir, "tok-in-environment-42", "from-dotenv-hunter2")
	dump, err := os.ReadFile(filepath.Join(res.Dir, x.Artifacts, "child", "dump.txt"))
	if err != nil || string(dump) != "password=***\n" {
		t.Errorf("child artifact: %q %v", dump, err)
	}
}

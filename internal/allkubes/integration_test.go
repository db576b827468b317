package allkubes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/report"
)

// repoRoot is the module root (two levels up from this package).
func repoRoot(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// BuildNuv builds the nuv binary the children run.
func buildNuv(t testing.TB) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "nuv")
	cmd := exec.Command("go", "build", "-o", exe, "./nuv")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build nuv: %v\n%s", err, out)
	}
	return exe
}

// testProject makes a project that deploys the repository's operator (go.mod copied, operator/
// linked) with the repository's instance files, plus the itest suites given (path -> content).
func testProject(t testing.TB, suites map[string]string) string {
	t.Helper()
	root := repoRoot(t)
	p := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, f), data, 0o644)
	}
	if err := os.Symlink(filepath.Join(root, "operator"), filepath.Join(p, "operator")); err != nil {
		t.Fatal(err)
	}
	tests := filepath.Join(root, "tests")
	filepath.WalkDir(tests, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tests, path)
		if d.IsDir() && (d.Name() == "itest") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			return linkFile(path, filepath.Join(p, "tests", rel))
		}
		return nil
	})
	for rel, content := range suites {
		path := filepath.Join(p, "tests", rel)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

const step = "apiVersion: itest.nuv.dev/v1\nkind: Step\n"

// The flavour suite's Secret holds these: no file of a report may show them.
const (
	literalSecret    = "super-secret-literal"
	literalSecretB64 = "c3VwZXItc2VjcmV0LWxpdGVyYWw=" // base64 of literalSecret
	envSecret        = "tok-from-the-environment-42"
)

var suites = map[string]string{
	// flavour: passes everywhere except on gke, where a type-specific step expects what is not.
	"itest/flavour/01-apply.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mark}\ndata: {cluster: '${NUV_CLUSTER}', kube: '${KUBE}'}\n",
	"itest/flavour/01-apply-secret.yaml":        "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {password: " + literalSecretB64 + "}\nstringData: {token: '${ALLKUBES_TEST_TOKEN}'}\n",
	"itest/flavour/02-assert.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mark}\ndata: {cluster: '${NUV_CLUSTER}'}\n",
	"gke/itest/flavour/03-assert-gke-only.yaml": step + "timeout: 2s\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: mark}\ndata: {kube: not-gke}\n",
	// isolation: each cluster marks a ConfigMap with its own name (run with --keep).
	"itest/isolation/01-apply.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mark}\ndata: {cluster: '${NUV_CLUSTER}', kube: '${KUBE}'}\n",
	// hang: records its pid and sleeps, for the Ctrl-C test.
	"itest/hang/01-command.yaml": step + "timeout: 10m\nscript: |\n  echo $$ > \"$PIDS/$NUV_CLUSTER\"\n  echo hanging\n  sleep 300\n",
}

type run struct {
	out  string
	code int
	dir  string
}

var reportLine = regexp.MustCompile(`(?m)^report: (\S+)$`)

func allKubes(t *testing.T, exe, project, home string, env []string, args ...string) run {
	t.Helper()
	cmd := exec.Command(exe, append([]string{"all-kubes"}, args...)...)
	cmd.Dir = project
	cmd.Env = append(os.Environ(), append(env, "NUV_HOME="+home, "NUV_PROJECT="+project)...)
	out, err := cmd.CombinedOutput()
	r := run{out: string(out)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if m := reportLine.FindStringSubmatch(r.out); m != nil {
		r.dir = m[1]
	}
	t.Logf("nuv all-kubes %s: exit %d\n%s", strings.Join(args, " "), r.code, r.out)
	return r
}

// checkReport validates the three report files and returns the JSON report.
func checkReport(t *testing.T, dir string, clusters []string) *report.Report {
	t.Helper()
	if dir == "" {
		t.Fatal("no report path printed")
	}
	data, err := os.ReadFile(filepath.Join(dir, report.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	if len(r.Results) != len(clusters) {
		t.Errorf("report.json has %d entries, want %d", len(r.Results), len(clusters))
	}
	data, err = os.ReadFile(filepath.Join(dir, report.JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	var suites report.JUnitSuites
	if err := xml.Unmarshal(data, &suites); err != nil {
		t.Fatalf("junit.xml does not parse: %v", err)
	}
	if len(suites.Suites) != len(clusters) {
		t.Errorf("junit.xml has %d testsuites, want %d", len(suites.Suites), len(clusters))
	}
	html, err := os.ReadFile(filepath.Join(dir, report.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clusters {
		if !strings.Contains(string(html), ">"+c+"<") {
			t.Errorf("index.html does not name %s", c)
		}
		log := "logs/" + c + ".log" // a merged report keeps each run's logs under runs/<run>/
		for _, x := range r.Results {
			if x.Cluster == c && x.Log != "" {
				log = x.Log
			}
		}
		if _, err := os.Stat(filepath.Join(dir, log)); err != nil {
			t.Errorf("log of %s: %v", c, err)
		}
	}
	for _, s := range suites.Suites {
		props := map[string]string{}
		for _, p := range s.Properties {
			props[p.Name] = p.Value
		}
		if props["server.version"] == "" && props["status"] != "unreachable" {
			t.Errorf("suite %s lacks server.version: %v", s.Name, props)
		}
		if props["cluster.type"] == "" && props["status"] != "unreachable" {
			t.Errorf("suite %s lacks cluster.type", s.Name)
		}
	}
	return &r
}

func byCluster(r *report.Report) map[string]report.Result {
	m := map[string]report.Result{}
	for _, x := range r.Results {
		m[x.Cluster] = x
	}
	return m
}

// TestIntegrationAllKubes runs nuv all-kubes over three real local clusters of different flavours
// (shared by the subtests; the one that stops a cluster runs last).
func TestIntegrationAllKubes(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	exe := buildNuv(t)
	project := testProject(t, suites)
	home := t.TempDir()
	flavors := []string{"eks", "gke", "kind"}
	clusters := map[string]*localtest.Cluster{}
	var names []string
	for _, f := range flavors {
		name := f + "1"
		clusters[name] = localtest.Start(t, localtest.Options{Flavor: f, Name: name, Project: project, Home: home})
		names = append(names, name)
	}

	t.Run("dtest passes on every flavour", func(t *testing.T) {
		r := allKubes(t, exe, project, home, nil, "--timeout", "5m", "--", "dtest")
		if r.code != 0 {
			t.Errorf("exit %d", r.code)
		}
		rep := checkReport(t, r.dir, names)
		for _, x := range rep.Results {
			if x.Status != report.Passed || x.Type != strings.TrimSuffix(x.Cluster, "1") || x.ServerVersion != "v1.36.3" {
				t.Errorf("%s: %s type=%s version=%s: %s", x.Cluster, x.Status, x.Type, x.ServerVersion, x.Message)
			}
		}
	})

	t.Run("an itest step failing on one flavour fails that cell only", func(t *testing.T) {
		r := allKubes(t, exe, project, home, []string{"ALLKUBES_TEST_TOKEN=" + envSecret}, "--", "itest", "T=flavour")
		if r.code == 0 {
			t.Error("exit 0 with a failing cluster")
		}
		rep := checkReport(t, r.dir, names)
		checkNoSecrets(t, r.dir, literalSecret, literalSecretB64, envSecret)
		res := byCluster(rep)
		for _, n := range names {
			x := res[n]
			if n == "gke1" {
				if x.Status != report.Failed || x.FailingStep != "flavour/03-assert-gke-only" {
					t.Errorf("gke1: %s at %q", x.Status, x.FailingStep)
				}
				objs, err := os.ReadFile(filepath.Join(r.dir, x.Artifacts, "child", "flavour", "objects.yaml"))
				if err != nil || !strings.Contains(string(objs), "kube: gke") {
					t.Errorf("gke1 artifacts (objects the test touched): %v\n%s", err, objs)
				}
				if !strings.Contains(string(objs), "name: creds") || !strings.Contains(string(objs), "password: '***'") {
					t.Errorf("gke1 artifacts lack the Secret the test applied, redacted:\n%s", objs)
				}
				for _, f := range []string{"events.txt", "pods.txt"} {
					if _, err := os.Stat(filepath.Join(r.dir, x.Artifacts, f)); err != nil {
						t.Errorf("gke1 artifact %s: %v", f, err)
					}
				}
				continue
			}
			if x.Status != report.Passed || x.Artifacts != "" {
				t.Errorf("%s: %s artifacts=%q", n, x.Status, x.Artifacts)
			}
		}
		var suites report.JUnitSuites
		data, _ := os.ReadFile(filepath.Join(r.dir, report.JUnitFile))
		xml.Unmarshal(data, &suites)
		if suites.Failures != 1 {
			t.Errorf("junit failures = %d, want 1", suites.Failures)
		}
	})

	t.Run("each cluster's objects exist only on that cluster", func(t *testing.T) {
		// The children never read or write ~/.kube/config: point HOME at a directory holding a
		// config for a cluster that does not exist and check it is left byte-identical.
		fakeHome := t.TempDir()
		sentinel := []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: wrong\n  cluster: {server: 'https://127.0.0.1:1'}\ncontexts:\n- name: wrong\n  context: {cluster: wrong, user: wrong}\ncurrent-context: wrong\nusers:\n- name: wrong\n  user: {}\n")
		os.MkdirAll(filepath.Join(fakeHome, ".kube"), 0o755)
		os.WriteFile(filepath.Join(fakeHome, ".kube", "config"), sentinel, 0o600)
		r := allKubes(t, exe, project, home, []string{"HOME=" + fakeHome}, "--", "itest", "--keep", "T=isolation")
		if r.code != 0 {
			t.Fatalf("exit %d", r.code)
		}
		if got, _ := os.ReadFile(filepath.Join(fakeHome, ".kube", "config")); !bytes.Equal(got, sentinel) {
			t.Error("~/.kube/config changed")
		}
		if ents, _ := os.ReadDir(filepath.Join(fakeHome, ".kube")); len(ents) != 1 {
			t.Errorf("files appeared in ~/.kube: %v", ents)
		}
		ctx := context.Background()
		for _, n := range names {
			cs := kubernetes.NewForConfigOrDie(clusters[n].Config)
			nss, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: "itest.nuv.dev/test=isolation"})
			if err != nil {
				t.Fatal(err)
			}
			if len(nss.Items) != 1 {
				t.Errorf("%s: %d isolation namespaces, want 1", n, len(nss.Items))
				continue
			}
			ns := nss.Items[0].Name
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "mark", metav1.GetOptions{})
			if err != nil {
				t.Errorf("%s: %v", n, err)
				continue
			}
			if cm.Data["cluster"] != n || cm.Data["kube"] != strings.TrimSuffix(n, "1") {
				t.Errorf("%s holds another cluster's object: %v", n, cm.Data)
			}
			cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		}
	})

	t.Run("Ctrl-C ends every child and writes a partial report", func(t *testing.T) {
		pids := t.TempDir()
		cmd := exec.Command(exe, "all-kubes", "--", "itest", "T=hang")
		cmd.Dir = project
		cmd.Env = append(os.Environ(), "NUV_HOME="+home, "NUV_PROJECT="+project, "PIDS="+pids)
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		done := make(chan struct{})
		go func() { io.Copy(&out, bufio.NewReader(stdout)); close(done) }()
		deadline := time.Now().Add(2 * time.Minute)
		var children []int
		for len(children) < len(names) {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("children did not start:\n%s", out.String())
			}
			time.Sleep(200 * time.Millisecond)
			children = readPids(pids)
		}
		time.Sleep(500 * time.Millisecond)
		start := time.Now()
		cmd.Process.Signal(syscall.SIGINT)
		<-done
		err := cmd.Wait()
		took := time.Since(start)
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		t.Logf("exit %d after %s\n%s", code, took, out.String())
		if code != 130 {
			t.Errorf("exit %d, want 130", code)
		}
		if took > 15*time.Second {
			t.Errorf("Ctrl-C took %s", took)
		}
		m := reportLine.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatal("no report path printed")
		}
		rep := checkReport(t, m[1], names)
		if !rep.Partial {
			t.Error("report not marked partial")
		}
		for _, x := range rep.Results {
			if x.Status != report.Cancelled {
				t.Errorf("%s: %s", x.Cluster, x.Status)
			}
		}
		for _, pid := range children {
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("child %d still running", pid)
			}
			if left := groupMembers(pid); len(left) > 0 {
				t.Errorf("processes of child %d's group still running: %v", pid, left)
			}
		}
	})

	t.Run("three separate --only runs merge into the cells of one run, with provenance", func(t *testing.T) {
		// As three CI jobs would: separate processes, separate _reports roots, separate machines
		// (NUV_MACHINE); then nuv report merge over their directories.
		roots := t.TempDir()
		var dirs []string
		for _, n := range names {
			r := allKubes(t, exe, project, home, []string{"NUV_MACHINE=runner-" + n}, "--only", n, "--reports", filepath.Join(roots, "job-"+n), "--", "itest", "T=flavour")
			if r.dir == "" {
				t.Fatalf("no report for %s", n)
			}
			dirs = append(dirs, filepath.Dir(r.dir))
		}
		// A fourth job whose report.json was cut short: named and skipped, not dropped silently.
		broken := allKubes(t, exe, project, home, nil, "--only", "eks1", "--reports", filepath.Join(roots, "job-broken"), "--", "itest", "T=flavour")
		data, _ := os.ReadFile(filepath.Join(broken.dir, report.JSONFile))
		os.WriteFile(filepath.Join(broken.dir, report.JSONFile), data[:len(data)/3], 0o644)
		one := allKubes(t, exe, project, home, nil, "--reports", filepath.Join(roots, "one"), "--", "itest", "T=flavour")

		merged := filepath.Join(t.TempDir(), "merged")
		cmd := exec.Command(exe, append(append([]string{"report", "merge", "--out", merged}, dirs...), filepath.Join(roots, "job-broken"))...)
		cmd.Dir = project
		cmd.Env = append(os.Environ(), "NUV_HOME="+home, "NUV_PROJECT="+project)
		out, err := cmd.CombinedOutput()
		t.Logf("nuv report merge:\n%s", out)
		if err != nil {
			t.Fatalf("report merge: %v", err)
		}
		if !strings.Contains(string(out), broken.dir) || !strings.Contains(string(out), "malformed report.json") {
			t.Errorf("the truncated report.json is not named:\n%s", out)
		}
		m := checkReport(t, merged, names)
		want := byCluster(checkReport(t, one.dir, names))
		for _, x := range m.Results {
			w := want[x.Cluster]
			if x.Status != w.Status || x.Type != w.Type || x.FailingStep != w.FailingStep || x.ServerVersion != w.ServerVersion ||
				x.Platform == nil || w.Platform == nil || *x.Platform != *w.Platform {
				t.Errorf("%s merged %s/%s/%q %+v, one run %s/%s/%q %+v", x.Cluster, x.Status, x.Type, x.FailingStep, x.Platform, w.Status, w.Type, w.FailingStep, w.Platform)
			}
			if p := x.Provenance; p == nil || p.Machine != "runner-"+x.Cluster || p.Nuv == "" || p.Nuv == "unknown" || p.Dir == "" {
				t.Errorf("%s provenance: %+v", x.Cluster, p)
			}
			if _, err := os.Stat(filepath.Join(merged, x.Log)); err != nil {
				t.Errorf("%s log not in the merged report: %v", x.Cluster, err)
			}
			if x.Status == report.Failed {
				if _, err := os.Stat(filepath.Join(merged, x.Artifacts, "events.txt")); err != nil {
					t.Errorf("%s artifacts not in the merged report: %v", x.Cluster, err)
				}
			}
		}
		if len(m.Skipped) != 1 || m.Skipped[0].Dir != broken.dir {
			t.Errorf("skipped: %+v", m.Skipped)
		}
	})

	t.Run("a stopped cluster is unreachable fast and the others pass", func(t *testing.T) {
		stopped := clusters["kind1"]
		if err := stopped.Provider.Stop(context.Background(), stopped.Name); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		r := allKubes(t, exe, project, home, nil, "--probe-timeout", "3s", "--", "itest", "T=isolation")
		t.Logf("took %s", time.Since(start))
		if r.code == 0 {
			t.Error("exit 0 with an unreachable cluster")
		}
		rep := checkReport(t, r.dir, names)
		res := byCluster(rep)
		if x := res["kind1"]; x.Status != report.Unreachable || x.Seconds > 4 {
			t.Errorf("kind1: %s after %.1fs", x.Status, x.Seconds)
		}
		for _, n := range []string{"eks1", "gke1"} {
			if res[n].Status != report.Passed {
				t.Errorf("%s: %s (%s)", n, res[n].Status, res[n].Message)
			}
		}
	})

	t.Run("a local cluster flavored eks and a plain kubeconfig cluster differ in every format", func(t *testing.T) {
		// The plain cluster: a cluster nuv did not make, as far as this project knows: another
		// NUV_HOME, no nuv.dev labels on its nodes, its kubeconfig copied into clusters/.
		plain := localtest.Start(t, localtest.Options{Flavor: "generic", Name: "plain", Home: t.TempDir(), Project: t.TempDir()})
		cs := kubernetes.NewForConfigOrDie(plain.Config)
		ctx := context.Background()
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes.Items {
			patch := []byte(`{"metadata":{"labels":{"nuv.dev/provider":null,"nuv.dev/cluster":null,"nuv.dev/flavor":null}}}`)
			if _, err := cs.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		kc, err := os.ReadFile(plain.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(project, "clusters", "plain.kubeconfig")
		if err := os.WriteFile(dst, kc, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(dst)

		r := allKubes(t, exe, project, home, nil, "--only", "eks1,plain", "--", "itest", "T=isolation")
		rep := checkReport(t, r.dir, []string{"eks1", "plain"})
		res := byCluster(rep)
		eks, pl := res["eks1"], res["plain"]
		if eks.Type != "eks" || eks.Platform == nil || eks.Platform.Provider != "local" || eks.Platform.Flavor != "eks" ||
			eks.Platform.DetectedBy != "providerID" || eks.Platform.NodeKind() != "simulated" || eks.Platform.Nodes != 1 {
			t.Errorf("eks1: type %s %+v", eks.Type, eks.Platform)
		}
		if pl.Type != "generic" || pl.Platform == nil || pl.Platform.Provider != "kubeconfig" || pl.Platform.Flavor != "" ||
			pl.Platform.DetectedBy != "none" || pl.Platform.Nodes != 1 || pl.ServerVersion != "v1.36.3" {
			t.Errorf("plain: type %s %+v", pl.Type, pl.Platform)
		}
		// The table.
		for _, re := range []string{`(?m)^eks1\s+eks\s+providerID\s+local/eks\s+1 simulated\s+v1.36.3`, `(?m)^plain\s+generic\s+none\s+kubeconfig\s+1 simulated\s+v1.36.3`} {
			if !regexp.MustCompile(re).MatchString(r.out) {
				t.Errorf("table lacks %s", re)
			}
		}
		// JUnit properties.
		var suites report.JUnitSuites
		data, _ := os.ReadFile(filepath.Join(r.dir, report.JUnitFile))
		if err := xml.Unmarshal(data, &suites); err != nil {
			t.Fatal(err)
		}
		for _, s := range suites.Suites {
			props := map[string]string{}
			for _, p := range s.Properties {
				props[p.Name] = p.Value
			}
			want := map[string]string{"cluster.provider": "local", "cluster.flavor": "eks", "cluster.type": "eks", "cluster.type.detected.by": "providerID"}
			if s.Name == "plain" {
				want = map[string]string{"cluster.provider": "kubeconfig", "cluster.flavor": "", "cluster.type": "generic", "cluster.type.detected.by": "none"}
			}
			for k, v := range want {
				if props[k] != v {
					t.Errorf("junit %s: %s=%q, want %q", s.Name, k, props[k], v)
				}
			}
		}
		// The HTML page (rendered-DOM checks of the page are in internal/report).
		html, _ := os.ReadFile(filepath.Join(r.dir, report.HTMLFile))
		for _, want := range []string{"local/eks, 1 simulated node", "kubeconfig, 1 simulated node", "by providerID", "<b class=\"type\">generic</b> by none"} {
			if !strings.Contains(string(html), want) {
				t.Errorf("index.html lacks %q", want)
			}
		}
	})
}

// readPids lists the pids written one a file in dir by the test children.
func readPids(dir string) []int {
	var out []int
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if n, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// groupMembers lists live processes whose process group is pgid (from /proc).
func groupMembers(pgid int) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, fmt.Sprintf("%s %s", filepath.Base(filepath.Dir(p)), s[:i+1]))
		}
	}
	return out
}

// linkFile links a file of the repository's tests/ into the test project.
func linkFile(src, dst string) error {
	os.MkdirAll(filepath.Dir(dst), 0o755)
	return os.Symlink(src, dst)
}

// checkNoSecrets reads every file under a report directory: none may hold a secret value, every
// directory is 0700 and every file 0600.
func checkNoSecrets(t *testing.T, dir string, values ...string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			if info.Mode().Perm() != 0o700 {
				t.Errorf("directory %s has mode %v, want 0700", path, info.Mode().Perm())
			}
			return nil
		}
		files++
		if info.Mode().Perm() != 0o600 {
			t.Errorf("file %s has mode %v, want 0600", path, info.Mode().Perm())
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, v := range values {
			if bytes.Contains(data, []byte(v)) {
				t.Errorf("%s shows the secret %q", path, v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatalf("no file under %s", dir)
	}
}

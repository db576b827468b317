package eks_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/report"
)

// linkRepo links the repository's module files, operator sources and instance files into the
// project, so the host-run operator is built from this checkout.
func linkRepo(t *testing.T, project string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
	for _, f := range []string{"go.mod", "go.sum", "operator", "tests"} {
		if err := os.Symlink(filepath.Join(root, f), filepath.Join(project, f)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIntegrationEKSFullPath is the path a user walks with an EKS cluster, on the emulator: `nuv
// cluster create eks` (the shorthand), `nuv kube list` shows it with type eks, `nuv kube use N`
// selects it, `nuv operator`, `nuv instance` and `nuv dtest` run on it, `nuv all-kubes -- dtest`
// runs over it and a local cluster in one report, and `nuv cluster delete` leaves nothing tagged.
func TestIntegrationEKSFullPath(t *testing.T) {
	if testing.Short() {
		t.Skip("makes an emulated EKS cluster and a local cluster; skipped under -short")
	}
	w := newWorld(t)
	linkRepo(t, w.Project)
	for _, k := range []string{"NUV_CLUSTER", "KUBE", "DETECT_FORCE", "MY_OPERATOR_IMAGE", "TAG", "WHISK", "NUV_OPERATOR_DIR", "NUV_OPERATOR_MAIN", "KUBECONFIG"} {
		w.Env = append(w.Env, k+"=")
	}
	t.Cleanup(func() {
		w.Nuv(nil, "cluster", "delete", "--yes", "demo")
		w.Nuv(nil, "cluster", "delete", "--yes", "loc")
	})
	must := func(args ...string) string {
		t.Helper()
		out, errs, code := w.Nuv(nil, args...)
		if code != 0 {
			t.Fatalf("nuv %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
		t.Logf("nuv %s:\n%s", strings.Join(args, " "), out)
		return out
	}

	out := must("cluster", "create", "eks", "demo", "--nodes", "2")
	kubeconfig := filepath.Join(w.Project, "clusters", "demo.kubeconfig")
	if out != "demo\t"+kubeconfig+"\n" {
		t.Fatalf("create eks printed %q, want NAME<TAB>KUBECONFIG", out)
	}
	must("cluster", "create", "local", "loc", "--nodes", "1")
	if out := must("cluster", "list"); !regexp.MustCompile(`(?m)^demo\s+eks\s+running\s+https://127\.0\.0\.1:\d+\s+2/2\s`).MatchString(out) {
		t.Fatalf("cluster list does not show demo as a running eks cluster with 2 of 2 nodes Ready:\n%s", out)
	}

	list := must("kube", "list", "--timeout", "15s") // detection: a loaded machine answers slower than the daily 1 s
	m := regexp.MustCompile(`(?m)^\s*\*?\s*(\d+)\s+demo\s+(\S+)`).FindStringSubmatch(list)
	if m == nil || m[2] != "eks" {
		t.Fatalf("kube list does not show demo with type eks:\n%s", list)
	}
	must("kube", "use", m[1])
	if b, err := os.ReadFile(filepath.Join(w.Project, ".nuv", "current")); err != nil || !strings.Contains(string(b), "demo") {
		t.Fatalf("selection after `kube use %s`: %q %v", m[1], b, err)
	}

	if out := must("operator"); !strings.Contains(out, "(eks)") || !strings.Contains(out, "operator running on the host") {
		t.Errorf("operator on the EKS cluster: not typed eks or no host operator:\n%s", out)
	}
	if out := must("instance"); !strings.Contains(out, "/tests/eks/whisk.yaml") || !strings.Contains(out, "Ready") {
		t.Errorf("instance on the EKS cluster: not the eks instance file or not Ready:\n%s", out)
	}
	must("dtest")

	out, errs, code := w.Nuv(nil, "all-kubes", "--timeout", "5m", "--", "dtest")
	t.Logf("all-kubes -- dtest: exit %d\n%s%s", code, out, errs)
	rm := regexp.MustCompile(`(?m)^report: (\S+)$`).FindStringSubmatch(out + errs)
	if code != 0 || rm == nil {
		t.Fatalf("all-kubes -- dtest: exit %d, report line %v", code, rm)
	}
	b, err := os.ReadFile(filepath.Join(rm[1], report.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, r := range rep.Results {
		types[r.Cluster] = r.Type
		if r.Status != report.Passed {
			t.Errorf("cell %s: %s", r.Cluster, r.Status)
		}
	}
	if len(rep.Results) != 2 || types["demo"] != "eks" || types["loc"] != "local" {
		t.Fatalf("report cells by type: %v, want demo eks and loc local", types)
	}

	must("cluster", "delete", "--yes", "demo")
	must("cluster", "delete", "--yes", "loc")
	if got := w.Tagged("demo"); len(got) != 0 {
		t.Fatalf("tagged resources left: %v", got)
	}
}

package addons

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/report"
)

// root is the repository's root directory.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// buildNuv builds the nuv binary all-kubes runs for each cluster.
func buildNuv(t testing.TB) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "nuv")
	cmd := exec.Command("go", "build", "-o", exe, "./nuv")
	cmd.Dir = root()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build nuv: %v\n%s", err, out)
	}
	return exe
}

// TestIntegrationAddonsAllKubes applies one index to three local clusters of different types
// (local, eks-flavored, gke-flavored) with `nuv all-kubes -- addons apply`: one command, one
// report. The chart add-on's selector leaves out gke, which the plan there says.
func TestIntegrationAddonsAllKubes(t *testing.T) {
	project := t.TempDir()
	var clusters []*localtest.Cluster
	for _, fl := range []string{"", "eks", "gke"} {
		if fl == "" { // the plain cluster is the package's shared one; the flavored ones are this test's
			c := localtest.Shared(t, localtest.Options{Project: project})
			leaveNoAddons(t, c)
			clusters = append(clusters, c)
			continue
		}
		clusters = append(clusters, localtest.Start(t, localtest.Options{Project: project, Flavor: fl}))
	}
	exe := buildNuv(t)
	host := startRegistry(t)
	pushChart(t, host, chartArchive(t, "web", "1.0.0", map[string]any{"replicas": 1, "image": "nginx:1.27"},
		map[string]string{"deployment.yaml": webDeployment, "service.yaml": webService}), "web", "1.0.0")
	files := map[string]string{"addons/crds/crd.yaml": crdYAML, "addons/index.yaml": strings.ReplaceAll(`apiVersion: nuv.dev/v1alpha1
kind: Addons
spec:
  addons:
  - {name: crds, version: 1.0.0, source: {path: crds}}
  - name: web
    namespace: web-system
    version: 1.0.0
    selector: {types: [local, eks]}
    source: {chart: {repo: "oci://{{REGISTRY}}/charts", name: web, version: 1.0.0}}
    dependsOn: [crds]
`, "{{REGISTRY}}", host)}
	writeFiles(t, project, files)
	home := t.TempDir()
	run := func(args ...string) (string, error) {
		cmd := exec.Command(exe, args...)
		cmd.Dir = project
		cmd.Env = append(os.Environ(), "NUV_HOME="+home, "NUV_PROJECT="+project, "NUV_CACHE_DIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		t.Logf("nuv %s:\n%s", strings.Join(args, " "), out)
		return string(out), err
	}
	start := time.Now()
	out, err := run("all-kubes", "--", "addons", "apply", "--timeout", "2m")
	if err != nil {
		t.Fatalf("all-kubes -- addons apply: %v", err)
	}
	t.Logf("three clusters in %s", time.Since(start).Round(time.Millisecond))
	m := regexp.MustCompile(`(?m)^report: (\S+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatal("no report path printed")
	}
	data, err := os.ReadFile(filepath.Join(m[1], report.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, r := range rep.Results {
		types[r.Cluster] = r.Type
		if !r.Status.OK() {
			t.Errorf("%s (%s): %s %s", r.Cluster, r.Type, r.Status, r.Message)
		}
	}
	if len(rep.Results) != 3 {
		t.Fatalf("report has %d clusters, want 3", len(rep.Results))
	}
	// the Taskfile verb: all-kubes runs `nuv -task addons:plan` (tasks/addons.yml) on each cluster
	tasks, err := os.ReadFile(filepath.Join(root(), "tasks", "addons.yml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, project, map[string]string{"tasks/addons.yml": string(tasks),
		"Taskfile.yml": "version: '3'\nincludes:\n  addons: ./tasks/addons.yml\n"})
	out, err = run("all-kubes", "--", "addons:plan")
	if err != nil || strings.Count(out, "0 change(s)") != 3 || !strings.Contains(out, "3 passed") {
		t.Errorf("all-kubes -- addons:plan: %v", err)
	}

	ctx := context.Background()
	for _, c := range clusters {
		tg, err := NewTarget(ctx, c.Name, "", c.Config)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := tg.Records(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantWeb := tg.Type != "gke"
		if recs["crds"] == nil || (recs["web"] != nil) != wantWeb {
			t.Errorf("cluster %s (%s, report says %s): records %v", c.Name, tg.Type, types[c.Name], recs)
		}
		plan, err := run("addons", "plan", "--kubeconfig", c.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "0 change(s)") {
			t.Errorf("plan after apply on %s is not empty:\n%s", c.Name, plan)
		}
		if tg.Type == "gke" && !strings.Contains(plan, "skipped    web") {
			t.Errorf("gke plan does not say web is skipped:\n%s", plan)
		}
		if tg.Type == "gke" {
			// remove without prune.crds keeps the CRD (and so the custom resources), the rest goes
			if _, err := run("addons", "remove", "--all", "--kubeconfig", c.Kubeconfig); err != nil {
				t.Fatal(err)
			}
			crd, err := tg.get(ctx, ObjRef{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "widgets.example.nuv.dev"})
			if err != nil || crd == nil {
				t.Errorf("the CRD went with remove though prune.crds is off: %v", err)
			}
			cm, err := tg.get(ctx, ObjRef{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: "crds-info"})
			if err != nil || cm != nil {
				t.Errorf("configmap crds-info left after remove: %v", err)
			}
		}
	}
}

package itest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/cluster/localtest"
)

// TestIntegrationEngine runs the engine's own suites (testdata/suites) on a real local cluster:
// every operation, the namespace per test, cleanup, the failure report and its artifacts.
func TestIntegrationEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	c := localtest.Start(t, localtest.Options{})
	cs := kubernetes.NewForConfigOrDie(c.Config)
	arts := t.TempDir()
	touched := filepath.Join(t.TempDir(), "touched.jsonl")
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	results, err := Run(ctx, Config{
		Project: c.Project, KubeType: "local", Cluster: c.Name, Kubeconfig: c.Kubeconfig, REST: c.Config,
		Dirs: []string{"testdata/suites"}, Out: &out, Artifacts: arts, Touched: touched,
	})
	t.Log(out.String())
	if err == nil || !strings.Contains(err.Error(), "1 of 2 tests failed") {
		t.Fatalf("want exactly one failed test, got %v", err)
	}
	byName := map[string]Result{}
	for _, r := range results {
		byName[r.Name] = r
	}
	if r := byName["basics"]; r.Err != nil {
		t.Errorf("basics failed at %s: %v", r.FailingStep, r.Err)
	}
	f := byName["failing"]
	if f.Err == nil || f.FailingStep != "failing/02-assert" || !strings.Contains(f.Err.Error(), `.data.a: expected "2", got "1"`) {
		t.Errorf("failing: step %q err %v", f.FailingStep, f.Err)
	}
	if strings.Contains(out.String(), "03-apply-never ok") {
		t.Error("a step after the failing one ran")
	}
	if !strings.Contains(out.String(), "namespace "+byName["basics"].Namespace+" on "+c.Name) {
		t.Error("command step output or its environment missing")
	}
	objs, err := os.ReadFile(filepath.Join(arts, "failing", "objects.yaml"))
	if err != nil || !strings.Contains(string(objs), "name: cm") || !strings.Contains(string(objs), `a: "1"`) {
		t.Errorf("artifacts of the failed test: %v\n%s", err, objs)
	}
	if data, _ := os.ReadFile(touched); !strings.Contains(string(data), `"name":"cm"`) || !strings.Contains(string(data), `"kind":"Widget"`) {
		t.Errorf("touched objects file:\n%s", data)
	}
	// Cleanup: both namespaces and the CRD the test applied are gone.
	for _, r := range results {
		if _, err := cs.CoreV1().Namespaces().Get(ctx, r.Namespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace %s left behind (%v)", r.Namespace, err)
		}
	}
	dyn := dynamic.NewForConfigOrDie(c.Config)
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := dyn.Resource(crds).Get(ctx, "widgets.itest.nuv.dev", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("CRD applied by the test left behind (%v)", err)
			break
		}
		time.Sleep(250 * time.Millisecond)
	}

	// T=prefix: only matching tests; no match is a failure, not a silent pass.
	results, err = Run(ctx, Config{REST: c.Config, Kubeconfig: c.Kubeconfig, Dirs: []string{"testdata/suites"}, Prefix: "bas"})
	if err != nil || len(results) != 1 || results[0].Name != "basics" {
		t.Errorf("T=bas: %v %+v", err, results)
	}
	if _, err := Run(ctx, Config{REST: c.Config, Dirs: []string{"testdata/suites"}, Prefix: "nope"}); err == nil {
		t.Error("T=nope ran nothing and passed")
	}
}

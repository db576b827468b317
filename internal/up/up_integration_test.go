package up

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/deploy"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/paths"
)

var whiskGVR = schema.GroupVersionResource{Group: "nuv.dev", Version: "v1alpha1", Resource: "whisks"}

// testProject makes a project directory that links the repository's operator sources, module
// files and instance files, so the host-run operator is built from this checkout.
func testProject(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum", "operator", "tests"} {
		if err := os.Symlink(filepath.Join(root, f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ready tells whether obj has the condition Ready=True.
func ready(obj *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// testGetenv is the process environment without the variables that would change what the
// verbs deploy (a developer's shell may set them).
func testGetenv(k string) string {
	switch k {
	case kube.EnvCluster, kube.EnvType, "MY_OPERATOR_IMAGE", "TAG", "WHISK", "NUV_OPERATOR_DIR", "NUV_OPERATOR_MAIN":
		return ""
	}
	return os.Getenv(k)
}

func TestIntegrationUpFromEmptyClusters(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	project := testProject(t)
	home := t.TempDir()
	getenv := func(k string) string {
		switch k {
		case "NUV_HOME":
			return home
		}
		return testGetenv(k)
	}
	t.Cleanup(func() {
		if err := (local.Provider{Home: home, Project: project, Getenv: getenv}).Delete(context.Background(), "dev"); err != nil && !errors.Is(err, cluster.ErrNotFound) {
			t.Errorf("clean-up: delete local cluster dev: %v", err)
		}
	})
	if _, err := os.Stat(paths.Clusters(project)); !os.IsNotExist(err) {
		t.Fatalf("clusters/ exists before up: %v", err)
	}
	ctx := context.Background()
	var out bytes.Buffer
	up := func() (time.Duration, string) {
		out.Reset()
		start := time.Now()
		env := &cli.Env{Streams: cli.Streams{Out: &out, Err: &out}, Log: localtest.Logger(t), Getenv: getenv, Dir: project}
		err := Up(ctx, env, Options{Options: deploy.Options{Project: project, Home: home, Getenv: getenv, Out: &out, Log: localtest.Logger(t), Timeout: 2 * time.Minute}})
		t.Logf("up output:\n%s", out.String())
		if err != nil {
			t.Fatalf("up: %v", err)
		}
		return time.Since(start), out.String()
	}
	d1, _ := up()
	sel, err := kube.Selected(project, getenv)
	if err != nil || sel.Name != "dev" {
		t.Fatalf("selection after up: %+v %v", sel, err)
	}
	cfg, err := kube.RESTConfig(sel.Path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := dynamic.NewForConfigOrDie(cfg).Resource(whiskGVR).Namespace("default").Get(ctx, "whisk", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !ready(w) {
		t.Fatalf("Whisk after up is not Ready: %v", w.Object["status"])
	}
	rv := w.GetResourceVersion()

	d2, out2 := up()
	for _, want := range []string{"reusing local cluster dev", "0 created, 0 configured", "whisk default/whisk unchanged", "operator running on the host (pid"} {
		if !strings.Contains(out2, want) {
			t.Errorf("second up: %q missing", want)
		}
	}
	w2, err := dynamic.NewForConfigOrDie(cfg).Resource(whiskGVR).Namespace("default").Get(ctx, "whisk", metav1.GetOptions{})
	if err != nil || w2.GetResourceVersion() != rv {
		t.Errorf("second up changed the Whisk (%v)", err)
	}
	t.Logf("nuv up: first %.1fs, again %.1fs", d1.Seconds(), d2.Seconds())

	// `nuv cluster stop` ends the host operator (registered in the cluster's pids/); up restarts both.
	if _, ok := deploy.HostOperator(home, "dev"); !ok {
		t.Fatal("host operator not running after up")
	}
	if err := (local.Provider{Home: home, Project: project, Getenv: getenv}).Stop(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	if _, ok := deploy.HostOperator(home, "dev"); ok {
		t.Error("cluster stop left the host operator running")
	}
	d3, out3 := up()
	if !strings.Contains(out3, "operator running on the host as system:serviceaccount:nuv-system:whisk-operator") {
		t.Error("up after a stop did not restart the host operator")
	}
	t.Logf("nuv up after cluster stop: %.1fs", d3.Seconds())
}

package deploy

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/nuv-dev/nuv/internal/cluster/local"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/paths"
)

// testGetenv is the process environment without the variables that would change what the
// verbs deploy (a developer's shell may set them).
func testGetenv(k string) string {
	switch k {
	case kube.EnvCluster, "MY_OPERATOR_IMAGE", "TAG", "WHISK", "NUV_OPERATOR_DIR", "NUV_OPERATOR_MAIN":
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
		_ = local.Provider{Home: home, Project: project, Getenv: getenv}.Delete(context.Background(), "dev")
	})
	if _, err := os.Stat(paths.Clusters(project)); !os.IsNotExist(err) {
		t.Fatalf("clusters/ exists before up: %v", err)
	}
	ctx := context.Background()
	var out bytes.Buffer
	up := func() (time.Duration, string) {
		out.Reset()
		start := time.Now()
		err := Up(ctx, UpOptions{Options: Options{Project: project, Home: home, Getenv: getenv, Out: &out, Log: localtest.Logger(t), Timeout: 2 * time.Minute}})
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
	if c := findCondition(w, "Ready"); c == nil || c.Status != "True" {
		t.Fatalf("Whisk after up: Ready = %+v", c)
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
	h := newHostRun(home, "dev")
	if _, _, ok := h.running(); !ok {
		t.Fatal("host operator not running after up")
	}
	if err := (local.Provider{Home: home, Project: project, Getenv: getenv}).Stop(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := h.running(); ok {
		t.Error("cluster stop left the host operator running")
	}
	d3, out3 := up()
	if !strings.Contains(out3, "operator running on the host as system:serviceaccount:nuv-system:whisk-operator") {
		t.Error("up after a stop did not restart the host operator")
	}
	t.Logf("nuv up after cluster stop: %.1fs", d3.Seconds())
}

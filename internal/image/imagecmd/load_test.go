package imagecmd

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/image/load"
	"github.com/nuv-dev/nuv/internal/registry"
	"github.com/nuv-dev/nuv/internal/registry/registrycmd"
)

// TestMain lets the test binary stand in for nuv when build-and-load starts the loopback registry
// (`<exe> registry serve ...`).
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "registry" && os.Args[2] == "serve" {
		env := &cli.Env{Streams: cli.OSStreams(), Log: cli.Quiet(), Getenv: os.Getenv}
		if err := registrycmd.NewCommand().Run(context.Background(), env, os.Args[2:]); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestIntegrationBuildAndLoadLocalCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a local cluster")
	}
	h := newHarness(t)
	// A kind-flavored local cluster detects as kind, yet it is nuv's own: the image must go to the
	// loopback registry, not through kind's node loading (there is no kind node to load into).
	c := localtest.Start(t, localtest.Options{Project: h.dir, Flavor: "kind"})
	h.vars["NUV_HOME"] = c.Home
	h.vars["NUV_CLUSTER"] = c.Name
	h.vars["NUV_REGISTRY_PORT"] = "0"
	h.exe = os.Args[0]
	t.Cleanup(func() { registry.Down(context.Background(), registry.Dir(c.Home)) })

	out, stderr, err := h.run("load")
	if err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	ref := strings.TrimSpace(out)
	t.Logf("loaded %s\n%s", ref, stderr)
	st, ok, err := registry.Status(context.Background(), registry.Dir(c.Home))
	if err != nil || !ok {
		t.Fatalf("loopback registry not running after load: %v", err)
	}
	if !strings.HasPrefix(ref, st.Host()+"/nuv-dev/whisk-operator:dev@sha256:") {
		t.Fatalf("loaded reference %q, want one in the loopback registry %s", ref, st.Host())
	}
	// the reference is recorded for nuv operator
	rec, err := load.ReadRef(h.dir, c.Name)
	if err != nil || rec != ref {
		t.Fatalf("recorded %q (%v), printed %q", rec, err, ref)
	}
	if _, err := os.Stat(filepath.Join(h.dir, ".nuv", "images", c.Name+".ref")); err != nil {
		t.Fatal(err)
	}
	// the cluster advertises the registry (KEP-1755)
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps("kube-public").Get(context.Background(), "local-registry-hosting", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("local-registry-hosting ConfigMap: %v", err)
	}
	if doc := cm.Data["localRegistryHosting.v1"]; !strings.Contains(doc, `host: "`+st.Host()+`"`) {
		t.Errorf("localRegistryHosting.v1 = %q, want host %s", doc, st.Host())
	}
	// the image is pullable from the registry, for the host's platform
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Architecture != runtime.GOARCH || cf.Config.User != "65532:65532" {
		t.Errorf("loaded image: arch %s user %s", cf.Architecture, cf.Config.User)
	}
	// a second load reuses the running registry and updates the record
	out2, _, err := h.run("load", "--tag", "dev2")
	if err != nil {
		t.Fatalf("second load: %v", err)
	}
	if rec, _ := load.ReadRef(h.dir, c.Name); rec != strings.TrimSpace(out2) || !strings.Contains(rec, ":dev2@") {
		t.Errorf("after a second load the record is %q, printed %q", rec, out2)
	}
	if st2, _, _ := registry.Status(context.Background(), registry.Dir(c.Home)); st2.PID != st.PID {
		t.Errorf("second load started another registry (pid %d, was %d)", st2.PID, st.PID)
	}
}

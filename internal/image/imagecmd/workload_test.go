package imagecmd

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image/imagetest"
)

// TestWorkloadController builds the controller's image from the repository (the operator image's
// builder, cached by content) and refuses what it cannot build, naming it.
func TestWorkloadController(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	h.vars["NUV_CACHE_DIR"] = t.TempDir()

	// a project without operator/cmd/whisk-controller cannot build it
	if _, _, err := h.run("workload", "controller"); err == nil || !strings.Contains(err.Error(), "main package ./operator/cmd/whisk-controller not found in "+h.dir) {
		t.Errorf("controller image without its source: %v", err)
	}
	if _, _, err := h.run("workload", "nope"); err == nil || !strings.Contains(err.Error(), `no image for component "nope" (there are: controller, couchdb, redis, static)`) {
		t.Errorf("unknown component: %v", err)
	}

	h.vars["NUV_PROJECT"], h.dir = root, root
	out, errOut, err := h.run("workload", "controller")
	if err != nil || strings.TrimSpace(out) != "nuv.dev/whisk-controller:v1" {
		t.Fatalf("nuv image workload controller = %q, %v\n%s", out, err, errOut)
	}
	if !strings.Contains(errOut, "built in") {
		t.Errorf("first build not reported as built:\n%s", errOut)
	}
	if _, errOut, err = h.run("workload", "controller"); err != nil || !strings.Contains(errOut, "from the cache") {
		t.Errorf("second build not from the cache: %v\n%s", err, errOut)
	}
}

// TestIntegrationWorkloadPush pushes the controller's image with `nuv image workload --push` to a
// real registry on loopback (docker-registry with htpasswd, credentials from `nuv image login`)
// and reads it back by the printed digest; a bad prefix is refused before anything is built.
func TestIntegrationWorkloadPush(t *testing.T) {
	if testing.Short() {
		t.Skip("starts docker-registry and compiles Go")
	}
	_, file, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	const user, pass = "nuvtest", "pa55-Sekret-77ab"
	reg := imagetest.StartRegistry(t, user, pass)
	h := newHarness(t)
	h.vars["NUV_CACHE_DIR"] = t.TempDir()
	dotenv := "REGISTRY=" + reg.Host + "\nREGISTRY_USER=" + user + "\nREGISTRY_PASSWORD=" + pass + "\n"
	if err := os.WriteFile(filepath.Join(h.dir, ".env"), []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.run("login"); err != nil {
		t.Fatalf("login: %v", err)
	}
	if _, _, err := h.run("workload", "--push", "Not A/Repo", "controller"); cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), `--push "Not A/Repo": not a repository prefix`) {
		t.Fatalf("bad prefix: %v", err)
	}
	h.vars["NUV_PROJECT"], h.dir = root, root
	out, errOut, err := h.run("workload", "--push", reg.Host+"/team", "controller")
	if err != nil {
		t.Fatalf("push: %v\n%s", err, errOut)
	}
	pushed := strings.TrimSpace(out)
	if !strings.HasPrefix(pushed, reg.Host+"/team/whisk-controller@sha256:") {
		t.Fatalf("printed %q, want %s/team/whisk-controller@sha256:...", pushed, reg.Host)
	}
	if strings.Contains(out+errOut, pass) {
		t.Fatal("the registry password was printed")
	}
	ref, err := name.ParseReference(pushed)
	if err != nil {
		t.Fatal(err)
	}
	auth := remote.WithAuth(&authn.Basic{Username: user, Password: pass})
	byDigest, err := remote.Index(ref, auth)
	if err != nil {
		t.Fatalf("read back %s: %v", pushed, err)
	}
	byTag, err := remote.Index(ref.Context().Tag("v1"), auth)
	if err != nil {
		t.Fatalf("read back the tag v1: %v", err)
	}
	d1, _ := byDigest.Digest()
	d2, _ := byTag.Digest()
	if d1 != d2 {
		t.Errorf("tag v1 is %s, the printed digest %s", d2, d1)
	}
}

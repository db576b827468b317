package imagecmd

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
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

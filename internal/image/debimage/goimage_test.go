package debimage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/image/gobuild"
)

// tinyModule writes a module with one main package and returns its directory.
func tinyModule(t *testing.T, msg string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":           "module example.com/tiny\n\ngo 1.22\n",
		"cmd/tiny/main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(" + msg + ") }\n",
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBuildGoCachesByContent builds a Go workload image with the operator image's builder: the
// image runs the binary as the non-root user with every timestamp at the epoch; a second build
// comes from the cache; a changed source makes a new key; a damaged entry is rebuilt.
func TestBuildGoCachesByContent(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	o := Options{Getenv: func(k string) string {
		if k == "NUV_CACHE_DIR" {
			return cache
		}
		return ""
	}}
	mod := tinyModule(t, `"hello"`)
	s := GoSpec{Repository: "nuv.dev/tiny", Tag: "v1", Main: "./cmd/tiny"}
	r, err := BuildGo(ctx, s, mod, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Cached || r.Ref != "nuv.dev/tiny:v1" || !strings.HasPrefix(r.Tarball, cache) {
		t.Errorf("first build = %+v", r)
	}
	img, err := r.Image()
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != "/usr/local/bin/tiny" || cf.Config.User != "65532:65532" ||
		!cf.Created.Time.Equal(time.Unix(0, 0)) || cf.Config.Labels[gobuild.LabelVersion] != "v1" {
		t.Errorf("image config = %+v", cf.Config)
	}
	if layers, err := img.Layers(); err != nil || len(layers) != 2 {
		t.Errorf("layers = %d, %v; want the base and the binary", len(layers), err)
	}
	if _, err := r.Index(); err != nil {
		t.Errorf("index: %v", err)
	}

	again, err := BuildGo(ctx, s, mod, o)
	if err != nil || !again.Cached || again.Key != r.Key {
		t.Errorf("second build = %+v, %v; want the cached entry", again, err)
	}

	if err := os.WriteFile(filepath.Join(mod, "cmd/tiny/main.go"), []byte("package main\n\nfunc main() { println(\"changed\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err := BuildGo(ctx, s, mod, o)
	if err != nil || changed.Cached || changed.Key == r.Key {
		t.Errorf("build after a source change = %+v, %v; want a new build under a new key", changed, err)
	}

	if err := os.WriteFile(changed.Tarball, []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := BuildGo(ctx, s, mod, o)
	if err != nil || rebuilt.Cached || rebuilt.Key != changed.Key {
		t.Fatalf("build over a damaged entry = %+v, %v; want a rebuild", rebuilt, err)
	}
	if _, err := rebuilt.Image(); err != nil {
		t.Errorf("rebuilt image: %v", err)
	}

	if _, err := BuildGo(ctx, GoSpec{Repository: "nuv.dev/tiny", Tag: "v1", Main: "./cmd/none"}, mod, o); err == nil ||
		!strings.Contains(err.Error(), "main package ./cmd/none not found") {
		t.Errorf("missing main package: %v", err)
	}
}

// TestControllerKeyFollowsItsSources: the whisk-controller's key covers the API package.
func TestControllerKeyFollowsItsSources(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	k1, err := GoKey(context.Background(), Controller(), root, "amd64")
	if err != nil {
		t.Fatal(err)
	}
	k2, err := GoKey(context.Background(), Controller(), root, "arm64")
	if err != nil {
		t.Fatal(err)
	}
	if k1 == k2 || len(k1) != 20 {
		t.Errorf("keys %s (amd64) and %s (arm64)", k1, k2)
	}
}

package dockerfile

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/nuv-dev/nuv/internal/image"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// No container daemon runs on nuv's CI machines: these tests pin the command lines each tool
// gets (golden files), not a real build.
func TestCommandsGolden(t *testing.T) {
	spec := image.Spec{
		Dir:        "/src/project",
		Dockerfile: "operator/Dockerfile",
		Platforms:  []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}},
		Version:    "0.1.0-dev.26113007",
		Revision:   "0123456789abcdef0123456789abcdef01234567",
		Source:     "https://github.com/nuv-dev/nuv",
		Epoch:      1767225600,
	}
	for _, tool := range Tools {
		t.Run(tool, func(t *testing.T) {
			cmds, err := Commands(tool, spec, "/tmp/out/image.tar")
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, c := range cmds {
				b.WriteString(strings.Join(c, " ") + "\n")
			}
			golden := filepath.Join("testdata", tool+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update once)", err)
			}
			if b.String() != string(want) {
				t.Errorf("%s commands changed:\n got:\n%s\nwant:\n%s", tool, b.String(), want)
			}
		})
	}
}

func TestNewRejectsUnknownOrMissingTool(t *testing.T) {
	if _, err := New("kaniko"); err == nil || !strings.Contains(err.Error(), "docker, podman, buildah") {
		t.Errorf("unknown tool: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := New("podman"); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("missing tool: %v", err)
	}
	if _, err := Commands("kaniko", image.Spec{}, "x"); err == nil {
		t.Error("Commands accepted an unknown tool")
	}
}

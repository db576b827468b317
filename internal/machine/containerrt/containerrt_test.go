package containerrt

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDetectNone: with no runtime on PATH the error names what was looked for and how to
// install one.
func TestDetectNone(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"nothing on PATH", nil, []string{"looked for docker, nerdctl, podman on PATH", "apt-get install docker.io"}},
		{"forced podman", map[string]string{"KIND_EXPERIMENTAL_PROVIDER": "podman"}, []string{"looked for podman (KIND_EXPERIMENTAL_PROVIDER=podman)", "apt-get install docker.io"}},
		{"unknown provider", map[string]string{"KIND_EXPERIMENTAL_PROVIDER": "lxc"}, []string{`KIND_EXPERIMENTAL_PROVIDER="lxc" is not one of docker, nerdctl, podman`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Detect(context.Background(), func(k string) string { return tc.env[k] })
			if !errors.Is(err, ErrNoRuntime) {
				t.Fatalf("want ErrNoRuntime, got %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestDetectDaemonDown: the real docker client pointed (DOCKER_HOST) at a socket where no
// daemon listens is found but refused, with the endpoint named.
func TestDetectDaemonDown(t *testing.T) {
	docker, err := lookDocker()
	if err != nil {
		t.Fatalf("the docker client is needed (hack/test.sh installs docker.io): %v", err)
	}
	dir := t.TempDir()
	if err := os.Symlink(docker, filepath.Join(dir, "docker")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	host := "unix://" + filepath.Join(dir, "nothing.sock")
	// docker runs with nuv's environment, as the kind library runs it.
	t.Setenv("DOCKER_HOST", host)
	_, err = Detect(context.Background(), os.Getenv)
	if !errors.Is(err, ErrNoRuntime) {
		t.Fatalf("want ErrNoRuntime, got %v", err)
	}
	for _, w := range []string{"docker (" + filepath.Join(dir, "docker") + ") is installed but its daemon does not answer at DOCKER_HOST=" + host, "point DOCKER_HOST at a running daemon"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}

func lookDocker() (string, error) { return exec.LookPath("docker") }

// TestRuntimeFormats: the template expressions and time layouts differ between docker and podman.
func TestRuntimeFormats(t *testing.T) {
	for _, tc := range []struct{ rt, want string }{
		{"docker", `{{.Label "io.x-k8s.kind.role"}}`},
		{"nerdctl", `{{.Label "io.x-k8s.kind.role"}}`},
		{"podman", `{{index .Labels "io.x-k8s.kind.role"}}`},
	} {
		if got := (Runtime{Name: tc.rt}).PsLabel("io.x-k8s.kind.role"); got != tc.want {
			t.Errorf("%s: PsLabel = %s, want %s", tc.rt, got, tc.want)
		}
	}
	want := time.Date(2026, 11, 30, 20, 28, 39, 287329212, time.UTC)
	for _, s := range []string{
		"2026-11-30T20:28:39.287329212Z",          // docker
		"2026-11-30 20:28:39.287329212 +0000 UTC", // podman
	} {
		if got, ok := ParseCreated(s + "\n"); !ok || !got.Equal(want) {
			t.Errorf("ParseCreated(%q) = %v %v", s, got, ok)
		}
	}
	if _, ok := ParseCreated("yesterday"); ok {
		t.Error("ParseCreated accepted \"yesterday\"")
	}
}

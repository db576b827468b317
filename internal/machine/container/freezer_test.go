package container

import (
	"os"
	"path/filepath"
	"testing"
)

// TestThawTree thaws the frozen freezer states of a tree and leaves the others.
func TestThawTree(t *testing.T) {
	root := t.TempDir()
	for p, st := range map[string]string{"a": "FROZEN\n", "a/b": "THAWED\n", "a/b/c": "FROZEN\n", "d": "FREEZING\n"} {
		dir := filepath.Join(root, p)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "freezer.state"), []byte(st), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n := thawTree(root); n != 2 {
		t.Errorf("thawed %d, want 2", n)
	}
	for p, want := range map[string]string{"a": "THAWED", "a/b/c": "THAWED", "d": "FREEZING\n"} {
		b, _ := os.ReadFile(filepath.Join(root, p, "freezer.state"))
		if string(b) != want {
			t.Errorf("%s: %q, want %q", p, b, want)
		}
	}
	f := filepath.Join(root, "cgroup")
	os.WriteFile(f, []byte("12:pids:/docker/x\n6:freezer:/docker/abc/kubelet.slice\n1:name=systemd:/docker/abc\n"), 0o644)
	if p, ok := freezerPath(f); !ok || p != "/docker/abc/kubelet.slice" {
		t.Errorf("freezerPath = %q %v", p, ok)
	}
}

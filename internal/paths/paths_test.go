package paths

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHome(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"NUV_HOME wins", map[string]string{"NUV_HOME": "/x/nuv", "HOME": "/home/u"}, "/x/nuv"},
		{"default under HOME", map[string]string{"HOME": "/home/u"}, "/home/u/.nuv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Home(func(k string) string { return tt.env[k] })
			if err != nil || got != tt.want {
				t.Fatalf("Home = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestEnsureHomeUnwritable(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o600)
	_, err := EnsureHome(func(k string) string {
		if k == "NUV_HOME" {
			return filepath.Join(f, "nuv")
		}
		return ""
	})
	if err == nil || !contains(err.Error(), f) {
		t.Fatalf("error %v does not name the unwritable home", err)
	}
}

func TestProject(t *testing.T) {
	root := t.TempDir()
	withClusters := filepath.Join(root, "a")
	withTaskfile := filepath.Join(root, "b")
	nested := filepath.Join(withClusters, "x", "y")
	os.MkdirAll(filepath.Join(withClusters, "clusters"), 0o755)
	os.MkdirAll(nested, 0o755)
	os.MkdirAll(withTaskfile, 0o755)
	os.WriteFile(filepath.Join(withTaskfile, "Taskfile.yml"), []byte("version: '3'\n"), 0o644)
	plain := filepath.Join(root, "c")
	os.MkdirAll(plain, 0o755)
	tests := []struct {
		name, dir, env, want string
	}{
		{"clusters dir marks the root", nested, "", withClusters},
		{"Taskfile marks the root", withTaskfile, "", withTaskfile},
		{"NUV_PROJECT wins", nested, plain, plain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Project(func(k string) string {
				if k == "NUV_PROJECT" {
					return tt.env
				}
				return ""
			}, tt.dir)
			if got != tt.want {
				t.Fatalf("Project = %q, want %q", got, tt.want)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

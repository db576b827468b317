package rendercache

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestKey: the key follows every input of the render (each file's content and path under
// operator/config, MY_OPERATOR_IMAGE, TAG, the cluster's build-and-load reference) and nothing
// else (where the directory is).
func TestKey(t *testing.T) {
	newConfig := func(t *testing.T) (project, cfg string) {
		project = t.TempDir()
		cfg = filepath.Join(project, "operator", "config")
		write(t, filepath.Join(cfg, "default", "kustomization.yaml"), "resources: [../manager]\nimages: [{name: op}]\n")
		write(t, filepath.Join(cfg, "manager", "manager.yaml"), "kind: Deployment\n")
		return project, cfg
	}
	none := func(string) string { return "" }
	project, cfg := newConfig(t)
	base, err := Key(cfg, project, "dev", none)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := Key(cfg, project, "dev", none); again != base {
		t.Fatalf("the key is not stable: %s then %s", base, again)
	}
	otherProject, otherCfg := newConfig(t)
	if k, _ := Key(otherCfg, otherProject, "dev", none); k != base {
		t.Errorf("the same content elsewhere has another key: %s, want %s", k, base)
	}
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, project, cfg string) (getenv func(string) string)
	}{
		{"a file's content", func(t *testing.T, _, cfg string) func(string) string {
			write(t, filepath.Join(cfg, "manager", "manager.yaml"), "kind: Deployment\n# edited\n")
			return none
		}},
		{"a new file", func(t *testing.T, _, cfg string) func(string) string {
			write(t, filepath.Join(cfg, "manager", "extra.yaml"), "")
			return none
		}},
		{"a file renamed", func(t *testing.T, _, cfg string) func(string) string {
			if err := os.Rename(filepath.Join(cfg, "manager", "manager.yaml"), filepath.Join(cfg, "manager", "m.yaml")); err != nil {
				t.Fatal(err)
			}
			return none
		}},
		{"MY_OPERATOR_IMAGE", func(*testing.T, string, string) func(string) string {
			return func(k string) string { return map[string]string{"MY_OPERATOR_IMAGE": "r/op"}[k] }
		}},
		{"TAG", func(*testing.T, string, string) func(string) string {
			return func(k string) string { return map[string]string{"TAG": "v2"}[k] }
		}},
		{"the build-and-load reference", func(t *testing.T, project, _ string) func(string) string {
			write(t, ImageRefFile(project, "dev"), "localhost:5001/op:dev\n")
			return none
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			project, cfg := newConfig(t)
			getenv := tc.change(t, project, cfg)
			k, err := Key(cfg, project, "dev", getenv)
			if err != nil {
				t.Fatal(err)
			}
			if k == base {
				t.Errorf("a change of %s keeps the key %s", tc.name, k)
			}
		})
	}
	if _, err := Key(filepath.Join(t.TempDir(), "missing"), project, "dev", none); err == nil {
		t.Error("a missing operator/config has a key; want an error")
	}
}

// TestSaveLoad: a record reads back as written; a missing, corrupt, other-format or incomplete
// one is a miss.
func TestSaveLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "operator-render")
	deps := []Object{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "nuv-system", Name: "whisk-operator"}}
	if err := Save(dir, "k1", deps); err != nil {
		t.Fatal(err)
	}
	got, ok := Load(dir, "k1")
	if !ok || len(got) != 1 || got[0] != deps[0] {
		t.Fatalf("Load = %+v, %v; want %+v", got, ok, deps)
	}
	if err := Save(dir, "empty", nil); err != nil {
		t.Fatal(err)
	}
	if got, ok := Load(dir, "empty"); !ok || len(got) != 0 {
		t.Errorf("a render without Deployments: Load = %+v, %v; want none, true", got, ok)
	}
	for name, content := range map[string]string{
		"corrupt":    "{",
		"old format": `{"format":"nuv operator render 0","deployments":[]}`,
		"no list":    `{"format":"nuv operator render 1"}`,
		"no name":    `{"format":"nuv operator render 1","deployments":[{"apiVersion":"apps/v1","kind":"Deployment"}]}`,
	} {
		write(t, filepath.Join(dir, "bad.json"), content)
		if got, ok := Load(dir, "bad"); ok {
			t.Errorf("%s record: Load = %+v, true; want a miss", name, got)
		}
	}
	if _, ok := Load(dir, "missing"); ok {
		t.Error("a missing record loads")
	}
}

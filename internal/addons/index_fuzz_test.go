package addons

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary add-ons index files (and one file they may include, include.yaml) to
// Load: it must never panic, and an index it accepts is the file it was given, with every add-on
// and stack named.
func FuzzLoad(f *testing.F) {
	if seed, err := os.ReadFile(filepath.Join("..", "..", "addons", "index.yaml")); err == nil {
		f.Add(seed, []byte(""))
	}
	f.Add([]byte("apiVersion: nuv.dev/v1alpha1\nkind: Addons\nspec:\n  include: [include.yaml]\n"), []byte("kind: Addons\nspec: {}\n"))
	f.Add([]byte("spec:\n  include: [index.yaml, include.yaml]\n"), []byte("spec:\n  include: [index.yaml]\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, index, include []byte) {
		path := filepath.Join(dir, "index.yaml")
		if err := os.WriteFile(path, index, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "include.yaml"), include, 0o600); err != nil {
			t.Fatal(err)
		}
		idx, err := Load(path)
		if err != nil {
			return
		}
		if idx.File != path {
			t.Fatalf("loaded %s as %s", path, idx.File)
		}
		for _, a := range idx.Addons {
			if a.Name == "" {
				t.Fatalf("accepted an add-on without a name: %+v", a)
			}
		}
	})
}

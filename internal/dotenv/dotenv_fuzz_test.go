package dotenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary .env files to Load: it must never panic, every error names the file,
// and what it accepts is KEY=VALUE pairs with a non-empty key.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("A=1\nexport B=\"two words\"\n# comment\nC='single'\n"))
	f.Add([]byte("KEY=\"unterminated\n"))
	f.Add([]byte("X=${A}\\n\"\n=novalue\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, FileName)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		pairs, err := Load(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, p := range pairs {
			if k, _, ok := strings.Cut(p, "="); !ok || k == "" {
				t.Fatalf("entry %q is not KEY=VALUE", p)
			}
		}
	})
}

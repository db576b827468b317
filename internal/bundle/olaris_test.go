package bundle

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/docopt"
	"github.com/nuv-dev/nuv/olaris"
)

// TestEmbeddedOlarisBundle checks the bundle compiled into nuv: it extracts, every folder's
// nuvfile.yml parses, every usage text is valid docopt, and no dot-file (.env) is embedded.
func TestEmbeddedOlarisBundle(t *testing.T) {
	err := fs.WalkDir(olaris.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name := path.Base(p); p != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			t.Errorf("embedded bundle carries %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := Extract(olaris.FS(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, err := LoadRoot(dir, FromEmbedded)
	if err != nil {
		t.Fatal(err)
	}
	if root.Version == "" {
		t.Error("olaris/nuvroot.json has no version")
	}
	folders := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		f, err := ReadFolder(p, p != dir)
		if err != nil {
			if p != dir && strings.Contains(err.Error(), "has no "+NuvfileName) {
				return nil // a plain data folder (templates, scripts) inside the bundle
			}
			return err
		}
		folders++
		if f.Usage != "" {
			_, err := docopt.Parse(f.Usage, []string{})
			var ue *docopt.UsageError
			if err != nil && !errors.As(err, &ue) {
				t.Errorf("%s: %v", f.UsageFile, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if folders < 2 {
		t.Errorf("embedded bundle has %d folders with a nuvfile", folders)
	}
}

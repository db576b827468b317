package fsutil

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Untar extracts a tar stream of directories, regular files and symbolic links under dir. Regular
// files keep their permission bits (and are always readable and writable by their owner); other
// entry types (devices, fifos, hard links) are skipped. An entry that would land outside dir is an
// error, and so is one whose path goes through a symbolic link the archive itself made (a link to
// /etc followed by link/passwd would write outside dir). Nothing is cleaned up on error: extract
// into a scratch directory and publish it (PublishDir) once Untar succeeds.
func Untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	links := map[string]bool{} // the symbolic links extracted, by their path under dir
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("archive entry %q leaves the target directory", h.Name)
		}
		for parent := filepath.Dir(rel); parent != "." && parent != string(filepath.Separator); parent = filepath.Dir(parent) {
			if links[parent] {
				return fmt.Errorf("archive entry %q goes through the symbolic link %s", h.Name, filepath.ToSlash(parent))
			}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode&0o777)|0o600)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, p); err != nil {
				return err
			}
			links[rel] = true
		}
	}
}

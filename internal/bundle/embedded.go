package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// Extract writes the bundle in fsys to cache/olaris-<content hash> and returns that directory.
// go-task needs real files, so the embedded bundle is extracted once per content: a temporary
// directory is filled and renamed into place, so concurrent nuv processes and interrupted runs never
// see a partial bundle.
func Extract(fsys fs.FS, cache string) (string, error) {
	sum, err := contentHash(fsys)
	if err != nil {
		return "", fmt.Errorf("read embedded bundle: %w", err)
	}
	dst := filepath.Join(cache, "olaris-"+sum[:16])
	if isDir(dst) {
		return dst, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("extract the embedded bundle: %s is not writable (set NUV_HOME): %w", cache, err)
	}
	err = fsutil.PublishDir(dst, 0o755, func(tmp string) error { return copyFS(fsys, tmp) }, isDir)
	if err != nil {
		return "", fmt.Errorf("extract the embedded bundle into %s: %w", cache, err)
	}
	return dst, nil
}

func contentHash(fsys fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func copyFS(fsys fs.FS, dst string) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(p))
		if d.IsDir() {
			if p == "." {
				return nil
			}
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return errors.New(path.Join(p) + ": not a regular file")
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if path.Ext(p) == ".sh" {
			mode = 0o755
		}
		return os.WriteFile(target, data, mode)
	})
}

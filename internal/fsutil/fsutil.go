// Package fsutil holds the file operations nuv uses for state it must never leave half-written:
// atomic writes (temporary file in the same directory, fsync, rename, fsync of the directory) with
// an explicit mode, and directories published whole (built beside their place, then renamed into
// it). The directory is synced after every rename so that the new name survives a host crash, not
// only a process kill.
package fsutil

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes data to path so that readers see either the old content or the new one,
// never a mix: it writes a temporary file beside path with the given mode, syncs it and renames it
// over path, then syncs the directory so the rename itself is durable. Parent directories are created with mode 0755 (0700 when mode has no group/other bits).
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	dirMode := os.FileMode(0o755)
	if mode&0o077 == 0 {
		dirMode = 0o700
	}
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// syncDir makes the entries of dir (a rename into it, a removal) durable; a variable so tests can
// observe when it runs.
var syncDir = SyncDir

// SyncDir fsyncs a directory, making a rename, creation or removal of one of its entries durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// PublishDir builds a directory with fill and renames it into place as dst, so that readers see
// either no dst or a complete one, never a partial directory. fill gets a new temporary directory
// beside dst (in dst's parent, which must exist) with the given mode; it is removed if anything
// fails. When the rename fails because dst exists, a dst that valid accepts wins (another process
// published it first: the race is lost harmlessly); any other dst is stale and is replaced.
func PublishDir(dst string, mode os.FileMode, fill func(tmp string) error, valid func(dir string) bool) error {
	parent := filepath.Dir(dst)
	tmp, err := os.MkdirTemp(parent, ".tmp-"+filepath.Base(dst)+"-*")
	if err != nil {
		return fmt.Errorf("publish %s: %w", dst, err)
	}
	defer os.RemoveAll(tmp) // a no-op after a successful rename
	if err := os.Chmod(tmp, mode); err != nil {
		return fmt.Errorf("publish %s: %w", dst, err)
	}
	if err := fill(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		if valid(dst) {
			return nil
		}
		if rmErr := os.RemoveAll(dst); rmErr != nil {
			return fmt.Errorf("replace stale %s: %w", dst, rmErr)
		}
		if err := os.Rename(tmp, dst); err != nil && !valid(dst) {
			return fmt.Errorf("publish %s: %w", dst, err)
		}
	}
	if err := syncDir(parent); err != nil {
		return fmt.Errorf("publish %s: %w", dst, err)
	}
	return nil
}

// EachFile calls fn for every regular file under src (or for src itself when it is a file), with
// its path relative to src ("." for src itself).
func EachFile(src string, fn func(path, rel string) error) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		return fn(p, rel)
	})
}

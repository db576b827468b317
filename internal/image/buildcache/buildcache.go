// Package buildcache is the content-addressed cache of nuv's image builders: the kind node image
// and its parts (package nodeimage, under CacheDir/nodeimage) and the reference workload's images
// (package debimage, under CacheDir/debimage).
//
// A builder derives a key from every input of a part (Key) and keeps the part in an entry, the
// directory <root>/<key>. Publish fills a new entry in a temporary directory beside it and renames
// it into place, with a manifest (ManifestFile) that names the key, optionally the image reference,
// and each file with its SHA-256. Valid and Lookup accept an entry only when its manifest names
// the key and every file still has its recorded hash: an entry left by a crash, a disk error or a
// hand edit is damaged, and the builder makes it again. Lock keeps one build at a time on a
// machine, so a second nuv waits and then finds the entry made. Stages times a build's steps and
// says, for each, whether it was done or came from the cache. Prune removes older entries.
//
// The keys and the layout are what a warm cache is made of: changing Key, the manifest's fields
// or an entry's path makes every cached image be built again.
package buildcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/fsutil"
)

// Key hashes parts, each with its length on its own line (("ab", "c") and ("a", "bc") differ): the
// first 20 hex digits of their SHA-256.
func Key(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// ShortKey is the part of a key shown in image tags and logs: its first 12 digits.
func ShortKey(k string) string {
	if len(k) > 12 {
		return k[:12]
	}
	return strings.TrimSpace(k)
}

// FileSHA256 is the hex SHA-256 of the file at p.
func FileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ManifestFile lists, in an entry, each file the entry holds and its SHA-256.
const ManifestFile = "nuv-cache.json"

// Manifest is the content of an entry's ManifestFile.
type Manifest struct {
	Key string `json:"key"`
	// Ref is the image reference the entry is a build of ("" for parts of an image).
	Ref     string            `json:"ref,omitempty"`
	Files   map[string]string `json:"files"` // name -> sha256
	Created time.Time         `json:"created"`
}

// ReadManifest reads the manifest of the entry dir.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("read %s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return m, nil
}

// WriteManifest writes into dir the manifest of key and ref listing files (names relative to dir)
// with their SHA-256.
func WriteManifest(dir, key, ref string, files ...string) error {
	m := Manifest{Key: key, Ref: ref, Files: map[string]string{}, Created: time.Now().UTC()}
	sort.Strings(files)
	for _, f := range files {
		sum, err := FileSHA256(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		m.Files[f] = sum
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ManifestFile), b, 0o644)
}

// Valid says whether dir is a complete entry of key: its manifest names key and every file it
// lists has the recorded SHA-256.
func Valid(dir, key string) bool {
	m, err := ReadManifest(dir)
	if err != nil || m.Key != key || len(m.Files) == 0 {
		return false
	}
	for name, want := range m.Files {
		got, err := FileSHA256(filepath.Join(dir, name))
		if err != nil || got != want {
			return false
		}
	}
	return true
}

// Lookup returns the entry dir of key under root and whether it is valid; damaged says an entry
// exists but is not valid (the caller says it builds it again).
func Lookup(root, key string) (dir string, ok bool, damaged bool) {
	dir = filepath.Join(root, key)
	if _, err := os.Stat(dir); err != nil {
		return dir, false, false
	}
	if Valid(dir, key) {
		return dir, true, false
	}
	return dir, false, true
}

// Publish makes the entry of key under root: fill writes the entry's files into the directory it
// gets and returns their names; the entry is renamed into place with its manifest (naming ref) in
// one step. A damaged entry of key is removed first; an entry another nuv published meanwhile is
// kept. Publish returns the entry's directory.
func Publish(root, key, ref string, fill func(tmp string) ([]string, error)) (string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(root, key)
	if _, err := os.Stat(dst); err == nil && !Valid(dst, key) {
		if err := os.RemoveAll(dst); err != nil {
			return "", fmt.Errorf("remove corrupt cache entry %s: %w", dst, err)
		}
	}
	err := fsutil.PublishDir(dst, 0o755, func(tmp string) error {
		files, err := fill(tmp)
		if err != nil {
			return err
		}
		return WriteManifest(tmp, key, ref, files...)
	}, func(dir string) bool { return Valid(dir, key) })
	return dst, err
}

// LockFile is the lock, in a builder's cache directory, that one build at a time holds.
const LockFile = "build.lock"

// Lock takes dir's LockFile, waiting while another nuv holds it; waiting (if not nil) is called
// with the lock's path before the wait. The returned function releases it.
func Lock(ctx context.Context, dir string, waiting func(lock string)) (func(), error) {
	lock := filepath.Join(dir, LockFile)
	return fsutil.Lock(ctx, lock, func() {
		if waiting != nil {
			waiting(lock)
		}
	})
}

// Prune removes the entries under root that match (nil: every entry), but for the keep most
// recently modified, and returns them. Directories whose names start with a dot (a publish in
// progress) are left alone.
func Prune(root string, keep int, match func(dir string) bool) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	type aged struct {
		dir string
		mod time.Time
	}
	var all []aged
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if match != nil && !match(dir) {
			continue
		}
		if info, err := e.Info(); err == nil {
			all = append(all, aged{dir, info.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod.After(all[j].mod) })
	var removed []string
	for i := max(keep, 0); i < len(all); i++ {
		if os.RemoveAll(all[i].dir) == nil {
			removed = append(removed, all[i].dir)
		}
	}
	return removed
}

// Stage is one step of a build and its duration.
type Stage struct {
	Name     string        `json:"name"`
	Duration time.Duration `json:"duration"`
	Cached   bool          `json:"cached,omitempty"`
}

// Stages runs a build's steps, logging each as "<Prefix>: <name> ..." and then "<Prefix>: <name>:
// done in <time>" (or "cached in"), and records them in List.
type Stages struct {
	Log    cli.Logger
	Prefix string
	List   []Stage
}

// Run runs fn as the named stage; fn says whether its result came from the cache. An error is
// returned as "<Prefix>: <name>: <error>".
func (s *Stages) Run(name string, fn func() (cached bool, err error)) error {
	start := time.Now()
	s.Log.Infof("%s: %s ...", s.Prefix, name)
	cached, err := fn()
	d := time.Since(start)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", s.Prefix, name, err)
	}
	how := "done"
	if cached {
		how = "cached"
	}
	s.Log.Infof("%s: %s: %s in %s", s.Prefix, name, how, d.Round(10*time.Millisecond))
	s.List = append(s.List, Stage{Name: name, Duration: d, Cached: cached})
	return nil
}

// Do runs fn as the named stage, which never comes from the cache (Run's fn saying false).
func (s *Stages) Do(name string, fn func() error) error {
	return s.Run(name, func() (bool, error) { return false, fn() })
}

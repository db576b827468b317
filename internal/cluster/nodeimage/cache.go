package nodeimage

import (
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

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// manifestFile lists, in a cache entry, each file the entry holds and its SHA-256: an entry whose
// files do not match (a crash mid-write, a disk error, a hand edit) is rebuilt, never used.
const manifestFile = "nuv-cache.json"

type cacheManifest struct {
	Key     string            `json:"key"`
	Files   map[string]string `json:"files"` // name -> sha256
	Created time.Time         `json:"created"`
}

// keyOf hashes its parts, each on its own line: a cache key.
func keyOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// entryValid says whether dir is a complete cache entry for key: its manifest names key and every
// file it lists has the recorded SHA-256.
func entryValid(dir, key string) bool {
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return false
	}
	var m cacheManifest
	if json.Unmarshal(b, &m) != nil || m.Key != key || len(m.Files) == 0 {
		return false
	}
	for name, want := range m.Files {
		got, err := fileSHA256(filepath.Join(dir, name))
		if err != nil || got != want {
			return false
		}
	}
	return true
}

// cached returns the entry dir of key under root when it is valid; otherwise, if one exists it is
// corrupt, and the reason is returned so the caller can say it rebuilds.
func cached(root, key string) (dir string, ok bool, corrupt bool) {
	dir = filepath.Join(root, key)
	if _, err := os.Stat(dir); err != nil {
		return dir, false, false
	}
	if entryValid(dir, key) {
		return dir, true, false
	}
	return dir, false, true
}

// publishEntry fills a new entry for key under root with fill (which writes the files named in
// its return value into the directory it gets) and publishes it atomically with its manifest.
func publishEntry(root, key string, fill func(tmp string) ([]string, error)) (string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(root, key)
	if _, err := os.Stat(dst); err == nil && !entryValid(dst, key) {
		if err := os.RemoveAll(dst); err != nil {
			return "", fmt.Errorf("remove corrupt cache entry %s: %w", dst, err)
		}
	}
	err := fsutil.PublishDir(dst, 0o755, func(tmp string) error {
		files, err := fill(tmp)
		if err != nil {
			return err
		}
		m := cacheManifest{Key: key, Files: map[string]string{}, Created: time.Now().UTC()}
		sort.Strings(files)
		for _, f := range files {
			sum, err := fileSHA256(filepath.Join(tmp, f))
			if err != nil {
				return err
			}
			m.Files[f] = sum
		}
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, manifestFile), b, 0o644)
	}, func(dir string) bool { return entryValid(dir, key) })
	return dst, err
}

func fileSHA256(p string) (string, error) {
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

// shortKey is the part of a key shown in image tags and logs.
func shortKey(k string) string {
	if len(k) > 12 {
		return k[:12]
	}
	return strings.TrimSpace(k)
}

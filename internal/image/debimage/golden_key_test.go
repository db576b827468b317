package debimage

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nuv-dev/nuv/internal/image/buildcache"
)

// The cache keys and the cache entries' layout are pinned: a change of either makes every warm
// cache cold (each Debian image is made again with debootstrap).
func TestKeysGolden(t *testing.T) {
	if got, want := buildcache.Key("goimage", "goimage-v1", ""), "b098cb700c6e595ca06f"; got != want {
		t.Errorf("Key = %s, want %s", got, want)
	}
	// Key hashes these parts, in this order; sourcesHash follows debimage.go by design
	s := Redis()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Key(s, bookworm, "amd64"), buildcache.Key("debimage", "debimage-v1", string(b), bookworm.Suite, bookworm.Mirror, "amd64", sourcesHash()); got != want {
		t.Errorf("Key = %s, want %s", got, want)
	}
}

// An entry written by an earlier nuv (its manifest as nuv has always written it) stays valid, and
// is known as a build of its reference.
func TestCacheEntryLayoutGolden(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "images", "k1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "image.tar"), []byte("content"), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := `{
  "key": "k1",
  "ref": "nuv.dev/a:v1",
  "files": {
    "image.tar": "ed7002b439e9ac845f22357d822bac1444730fbdb6016d3ec9432297b9ec9f73"
  },
  "created": "2026-01-02T03:04:05Z"
}`
	if err := os.WriteFile(filepath.Join(dir, "nuv-cache.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if !buildcache.Valid(dir, "k1") {
		t.Fatal("an entry of an earlier nuv is not valid")
	}
	if removed := pruneOlder(filepath.Join(root, "images"), "nuv.dev/a:v1", "k2", 1); len(removed) != 1 || removed[0] != dir {
		t.Fatalf("pruneOlder removed %v, want %s", removed, dir)
	}
}

package nodeimage

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nuv-dev/nuv/internal/image/buildcache"
)

// The cache keys and the cache entries' layout are pinned: a change of either makes every warm
// cache cold (the root file system is rebuilt with debootstrap, and so on).
func TestKeysGolden(t *testing.T) {
	if got, want := buildcache.Key("node-image", "1.36.0", ""), "381fe84a84dc3c1ace10"; got != want {
		t.Errorf("Key = %s, want %s", got, want)
	}
	d := Debian{Suite: "bookworm", Mirror: "http://deb.debian.org/debian"}
	if got, want := rootfsKey(d, "amd64"), "93cef7403d70d89813da"; got != want {
		t.Errorf("rootfsKey = %s, want %s (a deliberate change of the root file system also changes rootfsRecipe or Packages)", got, want)
	}
	if got, want := buildcache.ShortKey("0123456789abcdef0123"), "0123456789ab"; got != want {
		t.Errorf("ShortKey = %s, want %s", got, want)
	}
}

// An entry written by an earlier nuv (its manifest as nuv has always written it) stays valid.
func TestCacheEntryLayoutGolden(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "k1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "image.tar"), []byte("content"), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := `{
  "key": "k1",
  "files": {
    "image.tar": "ed7002b439e9ac845f22357d822bac1444730fbdb6016d3ec9432297b9ec9f73"
  },
  "created": "2026-01-02T03:04:05Z"
}`
	if err := os.WriteFile(filepath.Join(dir, "nuv-cache.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok, corrupt := buildcache.Lookup(root, "k1"); !ok || corrupt || got != dir {
		t.Fatalf("Lookup = %s %v %v, want %s true false", got, ok, corrupt, dir)
	}
}

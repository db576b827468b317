package companion

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"
)

func TestOwnsAndBuilds(t *testing.T) {
	p := Program{Dirs: []string{"cmd/x", "internal/a/...", "lib"}, IgnoreTests: true}
	for _, tc := range []struct {
		dir  string
		owns bool
	}{
		{"cmd/x", true}, {"cmd/x/sub", false}, {"cmd", false},
		{"internal/a", true}, {"internal/a/b/c", true}, {"internal/ab", false},
		{"lib", true}, {".", false},
	} {
		if got := p.Owns(tc.dir); got != tc.owns {
			t.Errorf("Owns(%q) = %v, want %v", tc.dir, got, tc.owns)
		}
	}
	if !(Program{Dirs: []string{"cmd/y", "..."}}).Owns("any/where") {
		t.Error(`"..." does not own every directory`)
	}
	for _, tc := range []struct {
		name   string
		builds bool
	}{
		{"lib/a.go", true}, {"lib/a_test.go", false}, {"lib/testdata/x.go", false}, {"testdata/y", false}, {"go.mod", true},
	} {
		if got := p.builds(tc.name); got != tc.builds {
			t.Errorf("builds(%q) = %v, want %v", tc.name, got, tc.builds)
		}
	}
	if !(Program{}).builds("lib/a_test.go") {
		t.Error("a program that keeps its tests left one out")
	}
}

// TestKeyIgnoresTests: with IgnoreTests an edited test or testdata file keeps the key; an edited
// source file changes it.
func TestKeyIgnoresTests(t *testing.T) {
	src := fstest.MapFS{
		"go.mod":              {Data: []byte("module m\n\ngo 1.22\n")},
		"cmd/x/main.go":       {Data: []byte("package main\n")},
		"cmd/x/main_test.go":  {Data: []byte("package main\n")},
		"cmd/x/testdata/in":   {Data: []byte("a")},
		"cmd/x/other/more.go": {Data: []byte("package other\n")},
	}
	p := Program{Sources: src, Dirs: []string{"cmd/x/..."}, IgnoreTests: true, Version: "1"}
	key := func() string {
		k, err := Key("go1", p, "mod v1\n")
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key()
	src["cmd/x/main_test.go"] = &fstest.MapFile{Data: []byte("package main\n// edited\n")}
	src["cmd/x/testdata/in"] = &fstest.MapFile{Data: []byte("b")}
	if key() != base {
		t.Error("editing a test changed the key")
	}
	src["cmd/x/other/more.go"] = &fstest.MapFile{Data: []byte("package other\n// edited\n")}
	if key() == base {
		t.Error("editing a source file kept the key")
	}
}

// TestPrune keeps the newest builds and removes the rest with the older module sets.
func TestPrune(t *testing.T) {
	cache := t.TempDir()
	b := Builder{Getenv: func(k string) string {
		if k == "NUV_CACHE_DIR" {
			return cache
		}
		return ""
	}}
	p := Program{Name: "prog"}
	now := time.Now()
	for i, key := range []string{"k0", "k1", "k2", "k3"} {
		bin := filepath.Join(cache, "prog", key, "prog")
		mods := filepath.Join(cache, "prog", "modules", key)
		for _, f := range []string{bin, mods} {
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte("x"), 0o755); err != nil {
				t.Fatal(err)
			}
			when := now.Add(time.Duration(i) * time.Hour) // k3 newest
			if err := os.Chtimes(f, when, when); err != nil {
				t.Fatal(err)
			}
		}
	}
	removed, err := b.Prune(p, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 {
		t.Fatalf("removed %v, want the two oldest builds", removed)
	}
	for key, kept := range map[string]bool{"k0": false, "k1": false, "k2": true, "k3": true} {
		_, err := os.Stat(filepath.Join(cache, "prog", key, "prog"))
		if (err == nil) != kept {
			t.Errorf("build %s: kept %v, want %v", key, err == nil, kept)
		}
		_, err = os.Stat(filepath.Join(cache, "prog", "modules", key))
		if (err == nil) != kept {
			t.Errorf("module set %s: kept %v, want %v", key, err == nil, kept)
		}
	}
}

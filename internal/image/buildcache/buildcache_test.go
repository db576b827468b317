package buildcache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
)

// The keys are pinned: a change makes every warm cache of the node image and the workload images
// cold.
func TestKeyGolden(t *testing.T) {
	for _, tc := range []struct {
		parts []string
		want  string
	}{
		{[]string{"node-image", "1.36.0", ""}, "381fe84a84dc3c1ace10"},
		{[]string{"goimage", "goimage-v1", ""}, "b098cb700c6e595ca06f"},
	} {
		if got := Key(tc.parts...); got != tc.want {
			t.Errorf("Key(%q) = %s, want %s", tc.parts, got, tc.want)
		}
	}
	if Key("ab", "c") == Key("a", "bc") {
		t.Fatal("Key runs parts together")
	}
	if got := ShortKey("0123456789abcdef0123"); got != "0123456789ab" {
		t.Errorf("ShortKey = %s", got)
	}
}

func TestPublishLookup(t *testing.T) {
	root := t.TempDir()
	fill := func(tmp string) ([]string, error) {
		return []string{"a"}, os.WriteFile(filepath.Join(tmp, "a"), []byte("content"), 0o644)
	}
	dir, err := Publish(root, "k1", "nuv.dev/a:v1", fill)
	if err != nil || dir != filepath.Join(root, "k1") {
		t.Fatalf("Publish = %s, %v", dir, err)
	}
	if _, ok, damaged := Lookup(root, "k1"); !ok || damaged {
		t.Fatal("a published entry is not valid")
	}
	if m, err := ReadManifest(dir); err != nil || m.Key != "k1" || m.Ref != "nuv.dev/a:v1" || len(m.Files) != 1 {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	if _, ok, damaged := Lookup(root, "k2"); ok || damaged {
		t.Fatal("a missing entry is valid or damaged")
	}
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("contenT"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, damaged := Lookup(root, "k1"); ok || !damaged {
		t.Fatal("a damaged entry is used")
	}
	// a failed fill publishes nothing and leaves no temporary directory
	boom := errors.New("boom")
	if _, err := Publish(root, "k3", "", func(string) ([]string, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("Publish of a failed fill = %v", err)
	}
	left, _ := os.ReadDir(root)
	if len(left) != 1 || left[0].Name() != "k1" {
		t.Fatalf("left %v", left)
	}
	// publishing a damaged entry again replaces it
	if _, err := Publish(root, "k1", "", fill); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := Lookup(root, "k1"); !ok {
		t.Fatal("a republished entry is not valid")
	}
}

func TestPrune(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	for i, k := range []string{"a", "b", "c", "d", "e"} {
		d := filepath.Join(root, k)
		os.MkdirAll(d, 0o755)
		os.Chtimes(d, now, now.Add(time.Duration(i)*time.Minute)) // e is the newest
	}
	os.MkdirAll(filepath.Join(root, ".tmp-f"), 0o755) // a build in progress is left alone
	removed := Prune(root, 3, nil)
	if len(removed) != 2 || filepath.Base(removed[0]) != "b" || filepath.Base(removed[1]) != "a" {
		t.Fatalf("removed %v, want b and a", removed)
	}
	left, _ := os.ReadDir(root)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != ".tmp-f,c,d,e" {
		t.Fatalf("left %v", names)
	}
	// only matching entries count, and a negative keep keeps none of them
	removed = Prune(root, -1, func(dir string) bool { return filepath.Base(dir) != "e" })
	if len(removed) != 2 || filepath.Base(removed[0]) != "d" || filepath.Base(removed[1]) != "c" {
		t.Fatalf("removed %v, want d and c", removed)
	}
}

// recordLog keeps what is logged, without the durations (" in 10ms").
type recordLog struct{ lines []string }

func (l *recordLog) Infof(format string, a ...any) {
	line, _, _ := strings.Cut(fmt.Sprintf(format, a...), " in ")
	l.lines = append(l.lines, line)
}
func (l *recordLog) Warnf(format string, a ...any) { l.Infof(format, a...) }
func (l *recordLog) V(level int) cli.InfoLogger    { return cli.Quiet().V(level) }

func TestStages(t *testing.T) {
	log := &recordLog{}
	s := Stages{Log: log, Prefix: "image nuv.dev/a:v1"}
	if err := s.Run("one", func() (bool, error) { return false, nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Run("two", func() (bool, error) { return true, nil }); err != nil {
		t.Fatal(err)
	}
	err := s.Run("three", func() (bool, error) { return false, errors.New("boom") })
	if err == nil || err.Error() != "image nuv.dev/a:v1: three: boom" {
		t.Fatalf("error %v", err)
	}
	want := []string{"image nuv.dev/a:v1: one ...", "image nuv.dev/a:v1: one: done", "image nuv.dev/a:v1: two ...", "image nuv.dev/a:v1: two: cached", "image nuv.dev/a:v1: three ..."}
	if strings.Join(log.lines, "|") != strings.Join(want, "|") {
		t.Fatalf("logged %q, want %q", log.lines, want)
	}
	if len(s.List) != 2 || s.List[0].Name != "one" || s.List[0].Cached || !s.List[1].Cached {
		t.Fatalf("stages %+v", s.List)
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err != nil {
		t.Fatal(err)
	}
	unlock()
}

// Entries written by an earlier nuv (their manifests as nuv has always written them: a part of the
// node image without a reference, a workload image with one) stay valid, and a workload image is
// known as a build of its reference.
func TestEntryLayoutGolden(t *testing.T) {
	root := t.TempDir()
	for key, ref := range map[string]string{"k1": "", "k2": `  "ref": "nuv.dev/a:v1",` + "\n"} {
		dir := filepath.Join(root, key)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "image.tar"), []byte("content"), 0o644); err != nil {
			t.Fatal(err)
		}
		manifest := "{\n  \"key\": \"" + key + "\",\n" + ref + `  "files": {
    "image.tar": "ed7002b439e9ac845f22357d822bac1444730fbdb6016d3ec9432297b9ec9f73"
  },
  "created": "2026-01-02T03:04:05Z"
}`
		if err := os.WriteFile(filepath.Join(dir, "nuv-cache.json"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, ok, damaged := Lookup(root, key); !ok || damaged || got != dir {
			t.Fatalf("Lookup = %s %v %v, want %s true false", got, ok, damaged, dir)
		}
	}
	if m, err := ReadManifest(filepath.Join(root, "k2")); err != nil || m.Ref != "nuv.dev/a:v1" {
		t.Fatalf("ReadManifest = %+v, %v", m, err)
	}
}

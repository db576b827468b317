package companion

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCheckedRecord: a passed check is remembered per pair of programs, and any change to either
// (rewritten in place, replaced, moved) or to the note asks for the check again.
func TestCheckedRecord(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("program "+p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rec := CheckedRecord(cache, "v1", a, b)
	if rec == "" || IsFile(rec) {
		t.Fatalf("a fresh pair: record %q exists %v", rec, IsFile(rec))
	}
	KeepRecord(rec)
	if again := CheckedRecord(cache, "v1", a, b); again != rec || !IsFile(again) {
		t.Fatalf("the same pair: record %q (first %q) exists %v", again, rec, IsFile(again))
	}
	if other := CheckedRecord(cache, "v2", a, b); other == rec {
		t.Errorf("another note gives the same record")
	}
	if other := CheckedRecord(cache, "v1", b, a); other == rec {
		t.Errorf("the pair the other way round gives the same record")
	}
	if err := os.WriteFile(b, []byte("another build, longer"), 0o755); err != nil {
		t.Fatal(err)
	}
	if other := CheckedRecord(cache, "v1", a, b); other == rec {
		t.Errorf("a program rewritten in place gives the same record")
	}
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	if other := CheckedRecord(cache, "v1", a, b); other != "" {
		t.Errorf("a missing program gives record %q, want none", other)
	}
}

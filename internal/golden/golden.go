// Package golden compares a test's output with a golden file and, when the test runs with its
// package's -update flag, writes the output as the new golden file first. The output forms and
// help texts of nuv's commands are pinned this way.
package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// Check reports (t.Errorf) whether got differs from the file at path and returns whether they
// match; with update it writes got to path first (creating its directory).
func Check(t testing.TB, path, got string, update bool) bool {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s--- want\n%s", path, got, want)
		return false
	}
	return true
}

package kind

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCapBounding reads the bounding set the way DetectHost does.
func TestCapBounding(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		status string
		noRes  bool
		ok     bool
	}{
		{"Name:\tx\nCapBnd:\t000001fffeffffff\n", true, true},
		{"Name:\tx\nCapBnd:\t000001ffffffffff\n", false, true},
		{"Name:\tx\n", false, false},
	} {
		f := filepath.Join(dir, "status")
		if err := os.WriteFile(f, []byte(tc.status), 0o644); err != nil {
			t.Fatal(err)
		}
		bnd, ok := capBounding(f)
		if ok != tc.ok || (ok && (bnd&(1<<capSysResource) == 0) != tc.noRes) {
			t.Errorf("%q: got %x %v", tc.status, bnd, ok)
		}
	}
}

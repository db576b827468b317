package quickread

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestStoreDir(t *testing.T) {
	for _, tc := range []struct {
		location, dir string
		ok            bool
	}{
		{"", "/h/state", true},
		{"dir:/srv/nuv-state", "/srv/nuv-state", true},
		{"dir:rel", "rel", true},
		{"/abs/path", "/abs/path", true},
		{"/abs/with:colon", "/abs/with:colon", true},
		{"relative", "relative", true},
		{"kube:nuv@/k.yaml", "", false},
		{"kube:", "", false},
		{"s3:bucket", "", false},
	} {
		dir, ok := StoreDir(tc.location, "/h")
		if dir != tc.dir || ok != tc.ok {
			t.Errorf("StoreDir(%q) = %q, %v; want %q, %v", tc.location, dir, ok, tc.dir, tc.ok)
		}
	}
}

// TestRecords: records decode as the directory store decodes them, the others are left out.
func TestRecords(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"a":        `{"name":"a","provider":"local","phase":"running"}`,
		"trailing": `{"name":"trailing","provider":"eks"} and more`, // the first JSON value counts
		"b":        `{"name":"other","provider":"local"}`,
		"c":        `{"name":"c"}`,
		"d":        `{"name":"d","provider":"eks","generation":"one"}`,
		"e":        `{`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, r := range Records(dir) {
		got = append(got, r.Name+"/"+r.Provider)
	}
	if want := []string{"a/local", "trailing/eks"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Records = %q, want %q", got, want)
	}
	if LoadRecord(dir, "missing") != nil || LoadRecord(dir, "b") != nil {
		t.Error("LoadRecord returned a record for a missing or misnamed file")
	}
	if r := LoadRecord(dir, "a"); r == nil || r.Phase != "running" {
		t.Errorf("LoadRecord(a) = %+v", r)
	}
}

func TestKindMarked(t *testing.T) {
	home := t.TempDir()
	if KindMarked(home) {
		t.Error("KindMarked on an empty home")
	}
	if err := os.MkdirAll(filepath.Join(home, "kind", "k"), 0o700); err != nil {
		t.Fatal(err)
	}
	if KindMarked(home) {
		t.Error("KindMarked with a kind directory but no mark")
	}
	if err := os.WriteFile(filepath.Join(home, "kind", "k", "control-plane.id"), []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !KindMarked(home) {
		t.Error("KindMarked misses a mark")
	}
}

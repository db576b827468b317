package report

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// FuzzMerge feeds arbitrary report.json files to Merge, as `nuv report merge` reads them from CI
// artifacts: it must never panic; a report it cannot use is skipped with a reason, never
// dropped, and nothing is written outside --out.
func FuzzMerge(f *testing.F) {
	if seed, err := os.ReadFile(filepath.Join("testdata", "report.json")); err == nil {
		f.Add(seed)
	}
	f.Add([]byte(`{"schema":2,"target":"itest","results":[{"cluster":"a","status":"passed","log":"../../etc/passwd"}]}`))
	f.Add([]byte(`{"schema":99,"nuv":"9.9"}`))
	f.Add([]byte(`{"schema":1,"target":"t","results":[{"cluster":"c","status":"failed","artifacts":"/abs","platform":{"nodes":0}}]}`))
	root := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, data []byte) {
		n++
		run := filepath.Join(root, strconv.Itoa(n))
		in, out := filepath.Join(run, "in"), filepath.Join(run, "out")
		if err := os.MkdirAll(filepath.Join(in, "logs"), 0o700); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(run)
		if err := os.WriteFile(filepath.Join(in, JSONFile), data, 0o600); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		r, err := Merge(MergeOptions{Dirs: []string{in}, Out: out, Nuv: "0.0.0-fuzz", Now: func() time.Time { return now }})
		if err == nil {
			if r == nil {
				t.Fatal("no error and no report")
			}
			if len(r.Results) == 0 && len(r.Skipped) == 0 {
				t.Fatal("the one report directory was neither merged nor skipped")
			}
			for _, res := range r.Results {
				if res.Cluster == "" || res.Status == "" {
					t.Fatalf("merged a cell without cluster or status: %+v", res)
				}
			}
		}
		ents, err := os.ReadDir(run)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Name() != "in" && e.Name() != "out" {
				t.Fatalf("merge wrote %s outside --out", e.Name())
			}
		}
	})
}

package testsummary

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/golden"
)

func TestReadStages(t *testing.T) {
	f, err := os.Open("testdata/stages.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ReadStages(f, "stages.tsv")
	if err != nil {
		t.Fatal(err)
	}
	want := []Stage{
		{Name: "build nuv", WallSeconds: 118.204, UserSeconds: 200.1, SysSeconds: 20.4, CPUSeconds: 220.5, OK: true},
		{Name: "full program", WallSeconds: 428, UserSeconds: 760, SysSeconds: 41, CPUSeconds: 801, OK: true, Cache: "built"},
		{Name: "kind node image", WallSeconds: 2.1, UserSeconds: 0.9, SysSeconds: 0.3, CPUSeconds: 1.2, OK: true, Cache: "cached"},
		{Name: "workload images", WallSeconds: 12.5, UserSeconds: 8, SysSeconds: 1, CPUSeconds: 9, OK: false},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d stages %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("stage %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestReadStagesBadInput(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"few fields", "vet\t1\t2\n", "stages.tsv:1: want 6 tab-separated fields"},
		{"bad wall", "vet\tlong\t1\t1\t0\t\n", `stages.tsv:1: wall seconds "long" is not a non-negative number`},
		{"negative sys", "ok\t1\t1\t1\t0\t\nvet\t1\t1\t-1\t0\t\n", `stages.tsv:2: sys seconds "-1"`},
		{"bad exit", "vet\t1\t1\t1\tno\t\n", `stages.tsv:1: exit status "no" is not a number`},
		{"bad cache", "vet\t1\t1\t1\t0\tmaybe\n", `stages.tsv:1: cache "maybe"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadStages(strings.NewReader(tc.in), "stages.tsv")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadStages(%q) = %v, want an error containing %q", tc.in, err, tc.want)
			}
		})
	}
}

// The report of a run with its setup stages: they come before the closing line, and each
// package's tests are counted.
func TestRunWithStages(t *testing.T) {
	f, err := os.Open("testdata/stages.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stages, err := ReadStages(f, "stages.tsv")
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open("testdata/run.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out bytes.Buffer
	s, err := Report{Stages: stages}.Run(in, &out)
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Counts["example.com/fixture"]; c != (Counts{Passed: 3, Failed: 1, Skipped: 3}) {
		t.Errorf("counts of example.com/fixture: %+v, want 3 passed, 1 failed, 3 skipped", c)
	}
	golden.Check(t, filepath.Join("testdata", "run-stages.golden"), out.String(), *update)
}

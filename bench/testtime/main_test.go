package main

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The two budgets are a cold run before the setup stages ran at once and one after (hand-made in
// the form hack/testbudget writes): stages and packages that came and went, tests that changed.
func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"diff", []string{"testdata/before.json", "testdata/after.json"}},
		{"diff-all", []string{"-min", "0", "testdata/before.json", "testdata/after.json"}},
		{"same", []string{"testdata/after.json", "testdata/after.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			if err := run(tc.args, &out); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.name+".golden"), out.String(), *update)
		})
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"one file", []string{"testdata/after.json"}, "want two budget files, got 1"},
		{"missing file", []string{"testdata/after.json", "testdata/nope.json"}, "testdata/nope.json"},
		{"not a budget", []string{"testdata/after.json", "testdata/diff.golden"}, "budget testdata/diff.golden is not a test budget"},
		{"no start", []string{"testdata/nostart.json", "testdata/after.json"}, "budget testdata/nostart.json has no start time"},
		{"negative min", []string{"-min", "-1", "testdata/after.json", "testdata/after.json"}, "-min -1"},
		{"bad flag", []string{"-x", "testdata/after.json", "testdata/after.json"}, "usage: testtime"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			err := run(tc.args, &out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run(%q) = %v, want an error containing %q", tc.args, err, tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q on an error", out.String())
			}
		})
	}
}

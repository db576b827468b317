package testsummary

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The inputs are real `go test -json` streams of the modules under testdata/fixture (regenerate
// them with `cd testdata/fixture && go test -json -short -count=1 . > ../run.json` and
// `go test -json -count=1 ./mainfails > ../mainfails.json`).
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		input                   string
		passed, failed, skipped int
		ok                      bool
	}{
		{"run.json", 3, 1, 3, false},
		{"mainfails.json", 1, 1, 0, false},
	} {
		t.Run(tc.input, func(t *testing.T) {
			in, err := os.Open(filepath.Join("testdata", tc.input))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var out bytes.Buffer
			s, err := Run(in, &out)
			if err != nil {
				t.Fatal(err)
			}
			failed := s.Failed + len(s.FailedPackages)
			if s.Passed != tc.passed || failed != tc.failed || s.Skipped != tc.skipped || s.OK() != tc.ok {
				t.Errorf("summary %+v (ok=%v), want %d passed, %d failed, %d skipped, ok=%v", s, s.OK(), tc.passed, tc.failed, tc.skipped, tc.ok)
			}
			golden := filepath.Join("testdata", tc.input+".golden")
			if *update {
				os.WriteFile(golden, out.Bytes(), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("report differs from %s:\n%s", golden, out.String())
			}
		})
	}
}

// TestRunPassesOtherLines keeps go's own messages (not JSON) and a stream cut mid-test visible.
func TestRunPassesOtherLines(t *testing.T) {
	in := `go: downloading example.com/x v1.0.0
{"Action":"run","Package":"p","Test":"TestHeld"}
{"Action":"output","Package":"p","Test":"TestHeld","Output":"=== RUN   TestHeld\n"}
{"Action":"output","Package":"p","Test":"TestHeld","Output":"    held_test.go:9: cluster t-1 created\n"}
`
	var out bytes.Buffer
	s, err := Run(bytes.NewBufferString(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	want := "go: downloading example.com/x v1.0.0\n--- UNFINISHED: p TestHeld\n=== RUN   TestHeld\n    held_test.go:9: cluster t-1 created\n\n0 passed, 0 failed, 0 skipped\n"
	if out.String() != want {
		t.Errorf("report:\n%q\nwant\n%q", out.String(), want)
	}
	if s.Passed+s.Failed+s.Skipped != 0 {
		t.Errorf("counts %+v, want none", s)
	}
}

// A package without test files is reported by go test as a package-level skip: it is not a
// skipped test and must not show in the skip list.
func TestPackageWithoutTestsIsNoSkip(t *testing.T) {
	in := `{"Action":"start","Package":"example.com/a"}
{"Action":"output","Package":"example.com/a","Output":"?   \texample.com/a\t[no test files]\n"}
{"Action":"skip","Package":"example.com/a","Elapsed":0}
{"Action":"run","Package":"example.com/b","Test":"TestX"}
{"Action":"pass","Package":"example.com/b","Test":"TestX","Elapsed":0}
{"Action":"pass","Package":"example.com/b","Elapsed":0.1}
`
	var out strings.Builder
	s, err := Run(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Skipped != 0 || len(s.Skips) != 0 || s.Line() != "1 passed, 0 failed, 0 skipped" {
		t.Fatalf("summary %+v, line %q", s, s.Line())
	}
}

// Package testsummary turns the event stream of `go test -json` into what nuv's test command
// (hack/test.sh) prints: each package's result line, the full output of every failed test, every
// skipped test with its reason, the slowest tests and packages (where a run's time goes), the test command's
// stages with their wall and CPU time (ReadStages), and a closing "N passed,
// N failed, N skipped" line. A skip is never silent: outside -short the list says which test ended
// early and why.
package testsummary

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
	Elapsed    float64 // seconds, on a test's pass, fail or skip
}

// Slowest is how many of the slowest top-level tests, and of the slowest packages, the report names.
const Slowest = 25

// Timing is how long one top-level test took.
type Timing struct {
	Package, Test string
	Seconds       float64
}

// Skip is one skipped test and the reason it gave.
type Skip struct {
	Package, Test, Reason string
}

// Summary counts the tests of a run.
type Summary struct {
	Passed, Failed, Skipped int
	// FailedPackages are packages that failed without a failing test (build errors, a test binary
	// that panicked or timed out outside a test, TestMain failures).
	FailedPackages []string
	Skips          []Skip
	// Timings are the top-level tests that passed or failed, slowest first.
	Timings []Timing
	// Packages are the packages whose test binary ran to its end, each with its binary's wall
	// time (Test empty), slowest first: hack/test.sh starts the slowest first.
	Packages []Timing
	// Counts are each package's passed, failed and skipped tests (subtests included).
	Counts map[string]Counts
}

// Counts are the tests of one package that passed, failed and were skipped.
type Counts struct{ Passed, Failed, Skipped int }

// OK reports whether the run had no failure.
func (s Summary) OK() bool { return s.Failed == 0 && len(s.FailedPackages) == 0 }

// Line is the closing line: "N passed, N failed, N skipped", where a package that failed without a
// failing test counts as one failure.
func (s Summary) Line() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", s.Passed, s.Failed+len(s.FailedPackages), s.Skipped)
}

type key struct{ pkg, test string }

// Run reads the events of `go test -json` from r, writes the report to w as the run goes (package
// lines and failures as they happen, the skips and the closing line at the end) and returns the
// counts. Lines of r that are not JSON (go's own messages) are copied through.
func Run(r io.Reader, w io.Writer) (Summary, error) { return Report{}.Run(r, w) }

// Report is what a report shows besides the tests.
type Report struct {
	// Stages are the test command's setup stages, listed before the closing line.
	Stages []Stage
}

// Run is the package's Run with the stages of rp in the report.
func (rp Report) Run(r io.Reader, w io.Writer) (Summary, error) {
	s := Summary{Counts: map[string]Counts{}}
	out := map[key][]string{}      // output of running tests, dropped when they pass
	pkgFailed := map[string]bool{} // packages with a failing test
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		k := key{e.Package, e.Test}
		switch {
		case e.Action == "build-output":
			io.WriteString(w, e.Output)
		case e.Test == "" && e.Action == "output":
			// package-level output: the ok/FAIL line, panics and timeouts outside a test; the bare
			// PASS/FAIL that precede the result line add nothing
			if t := strings.TrimSpace(e.Output); t != "PASS" && t != "FAIL" {
				io.WriteString(w, e.Output)
			}
		case e.Test == "" && e.Action == "pass":
			// a package's tests all passed: counted test by test
			s.Packages = append(s.Packages, Timing{Package: e.Package, Seconds: e.Elapsed})
		case e.Test == "" && e.Action == "skip":
			// a package without test files ("[no test files]"): nothing was skipped
		case e.Test == "" && e.Action == "fail":
			s.Packages = append(s.Packages, Timing{Package: e.Package, Seconds: e.Elapsed})
			if !pkgFailed[e.Package] {
				s.FailedPackages = append(s.FailedPackages, e.Package)
			}
		case e.Action == "output":
			out[k] = append(out[k], e.Output)
		case e.Action == "pass":
			s.Passed++
			s.count(e.Package, func(c *Counts) { c.Passed++ })
			s.timed(e)
			delete(out, k)
		case e.Action == "fail":
			s.Failed++
			s.count(e.Package, func(c *Counts) { c.Failed++ })
			s.timed(e)
			pkgFailed[e.Package] = true
			io.WriteString(w, strings.Join(out[k], ""))
			delete(out, k)
		case e.Action == "skip":
			s.Skipped++
			s.count(e.Package, func(c *Counts) { c.Skipped++ })
			s.Skips = append(s.Skips, Skip{Package: e.Package, Test: e.Test, Reason: reason(out[k])})
			delete(out, k)
		}
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("read go test -json: %w", err)
	}
	// tests still running when the stream ended (a killed binary): their output is the evidence
	var unfinished []key
	for k := range out {
		unfinished = append(unfinished, k)
	}
	sort.Slice(unfinished, func(i, j int) bool {
		return unfinished[i].pkg+" "+unfinished[i].test < unfinished[j].pkg+" "+unfinished[j].test
	})
	for _, k := range unfinished {
		fmt.Fprintf(w, "--- UNFINISHED: %s %s\n%s", k.pkg, k.test, strings.Join(out[k], ""))
	}
	if len(s.Skips) > 0 {
		fmt.Fprintf(w, "\nskipped tests (%d):\n", len(s.Skips))
		for _, sk := range s.Skips {
			fmt.Fprintf(w, "  %s %s: %s\n", sk.Package, sk.Test, sk.Reason)
		}
	}
	sort.SliceStable(s.Timings, func(i, j int) bool { return s.Timings[i].Seconds > s.Timings[j].Seconds })
	if n := min(Slowest, len(s.Timings)); n > 0 {
		fmt.Fprintf(w, "\nslowest tests (%d of %d):\n", n, len(s.Timings))
		for _, t := range s.Timings[:n] {
			fmt.Fprintf(w, "  %7.1fs  %s %s\n", t.Seconds, t.Package, t.Test)
		}
	}
	sort.SliceStable(s.Packages, func(i, j int) bool { return s.Packages[i].Seconds > s.Packages[j].Seconds })
	if n := min(Slowest, len(s.Packages)); n > 0 {
		fmt.Fprintf(w, "\nslowest packages (%d of %d; a binary's wall time, packages run -p at a time):\n", n, len(s.Packages))
		for _, t := range s.Packages[:n] {
			fmt.Fprintf(w, "  %7.1fs  %s\n", t.Seconds, t.Package)
		}
	}
	writeStages(w, rp.Stages)
	if len(s.FailedPackages) > 0 {
		fmt.Fprintf(w, "\npackages that failed outside their tests: %s\n", strings.Join(s.FailedPackages, ", "))
	}
	fmt.Fprintf(w, "\n%s\n", s.Line())
	return s, nil
}

func (s *Summary) count(pkg string, add func(*Counts)) {
	c := s.Counts[pkg]
	add(&c)
	s.Counts[pkg] = c
}

// timed keeps a top-level test's duration (a subtest's time is inside its parent's).
func (s *Summary) timed(e event) {
	if !strings.Contains(e.Test, "/") {
		s.Timings = append(s.Timings, Timing{Package: e.Package, Test: e.Test, Seconds: e.Elapsed})
	}
}

// reason extracts a skip's message from a test's output: the lines other than go test's own
// "=== RUN", "--- SKIP" and the like, with the file:line prefix t.Skip adds.
func reason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

// Package testbudget is the bill of one run of nuv's test command (hack/test.sh): each setup
// stage's wall and CPU time and whether it built or found its cache, each package's test binary
// wall time and what its tests gave, the totals, the machine and the commit. hack/test.sh records
// its stages in a stage file as they end (one tab-separated line each, see
// testsummary.ReadStages), and at its
// end writes _test-artifacts/budget.json from that file and go test's event stream
// (hack/testbudget); `go run ./bench/testtime A B` prints the differences between two of them.
package testbudget

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/testsummary"
)

// Budget is the bill of one run.
type Budget struct {
	// Commit is the checkout's commit (with "-dirty" when it had changes), "" when unknown.
	Commit string `json:"commit"`
	// Started is when the run started.
	Started time.Time `json:"started"`
	Machine Machine   `json:"machine"`
	// WallSeconds is the run's wall time from its start to the budget's writing.
	WallSeconds float64 `json:"wall_seconds"`
	// Stages are the run's stages in the order they ended (setup stages, then the tests).
	Stages []testsummary.Stage `json:"stages"`
	// Packages are the test binaries that ran to their end or failed, by name.
	Packages []Package `json:"packages"`
	// Tests counts every test and subtest of the run.
	Tests Counts `json:"tests"`
}

// Machine is where the run ran.
type Machine struct {
	CPUs int `json:"cpus"`
	// LoadAtStart is the load average (1, 5 and 15 minutes) when the run started: a busy machine
	// makes every figure of the run larger.
	LoadAtStart [3]float64 `json:"load_at_start"`
}

// Counts are tests that passed, failed and were skipped.
type Counts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// Package is one package's test binary.
type Package struct {
	Name        string  `json:"name"`
	WallSeconds float64 `json:"wall_seconds"`
	OK          bool    `json:"ok"`
	Counts
}

// FromSummary returns the packages and test counts of a run's summary (internal/testsummary),
// packages sorted by name.
func FromSummary(s testsummary.Summary) ([]Package, Counts) {
	failed := map[string]bool{}
	for _, p := range s.FailedPackages {
		failed[p] = true
	}
	var pkgs []Package
	for _, t := range s.Packages {
		c := s.Counts[t.Package]
		pkgs = append(pkgs, Package{Name: t.Package, WallSeconds: t.Seconds, OK: c.Failed == 0 && !failed[t.Package],
			Counts: Counts{Passed: c.Passed, Failed: c.Failed, Skipped: c.Skipped}})
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Name < pkgs[j].Name })
	return pkgs, Counts{Passed: s.Passed, Failed: s.Failed + len(s.FailedPackages), Skipped: s.Skipped}
}

// Write writes b to path as indented JSON, atomically.
func Write(path string, b Budget) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the budget: %w", err)
	}
	if err := fsutil.WriteFileAtomic(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write the budget: %w", err)
	}
	return nil
}

// Read reads a budget file written by Write.
func Read(path string) (Budget, error) {
	var b Budget
	data, err := os.ReadFile(path)
	if err != nil {
		return b, fmt.Errorf("read budget: %w", err)
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return b, fmt.Errorf("budget %s is not a test budget (hack/test.sh writes _test-artifacts/budget.json): %w", path, err)
	}
	if b.Started.IsZero() {
		return b, fmt.Errorf("budget %s has no start time: not a test budget (hack/test.sh writes _test-artifacts/budget.json)", path)
	}
	return b, nil
}

// SetupCPU is the CPU time of every stage but the tests.
func (b Budget) SetupCPU() float64 {
	var s float64
	for _, st := range b.Stages {
		if st.Name != testsummary.TestsStage {
			s += st.CPUSeconds
		}
	}
	return s
}

// Input is what a budget is made from.
type Input struct {
	Started time.Time
	Commit  string
	CPUs    int
	Load    [3]float64
	// StageFile is the stage file (testsummary.ReadStages); "" or a missing file: no stages.
	StageFile string
	// EventFile is go test -json's event stream; "" or a missing file: no packages (the run
	// ended before its tests).
	EventFile string
}

// Make reads in's files and returns the budget of a run that ends at now.
func Make(in Input, now time.Time) (Budget, error) {
	b := Budget{Commit: in.Commit, Started: in.Started.UTC(), Machine: Machine{CPUs: in.CPUs, LoadAtStart: in.Load},
		WallSeconds: float64(now.Sub(in.Started).Milliseconds()) / 1000, Stages: []testsummary.Stage{}, Packages: []Package{}}
	if in.StageFile != "" {
		f, err := os.Open(in.StageFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return b, fmt.Errorf("read the stages: %w", err)
		default:
			defer f.Close()
			if b.Stages, err = testsummary.ReadStages(f, in.StageFile); err != nil {
				return b, err
			}
		}
	}
	if in.EventFile != "" {
		f, err := os.Open(in.EventFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return b, fmt.Errorf("read go test's events: %w", err)
		default:
			defer f.Close()
			s, err := testsummary.Run(f, io.Discard)
			if err != nil {
				return b, fmt.Errorf("%s: %w", in.EventFile, err)
			}
			b.Packages, b.Tests = FromSummary(s)
		}
	}
	return b, nil
}

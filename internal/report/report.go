// Package report holds the result of one `nuv all-kubes` run (a target run once per cluster) and
// writes it in the forms its readers want: report.json for tools, junit.xml for CI (a testsuite per
// cluster, cluster type and server version as properties), index.html (a static matrix coloured by
// status, linking to per-cluster logs and failure artifacts) and the table printed at the end.
package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// Status is the outcome of a target on one cluster (or of one step within it).
type Status string

// The statuses a cell of the matrix can have.
const (
	Passed      Status = "passed"
	Failed      Status = "failed"
	Unreachable Status = "unreachable" // the bounded connect probe failed: the target never ran
	TimedOut    Status = "timeout"     // the run exceeded --timeout and was ended
	Cancelled   Status = "cancelled"   // Ctrl-C ended the run (partial report)
	Skipped     Status = "skipped"     // not run (e.g. the step never started)
	Running     Status = "running"     // only in live progress, never in a final report
)

// OK tells whether the status counts as success.
func (s Status) OK() bool { return s == Passed || s == Skipped }

// Step is one named part of a target's run on a cluster, as reported by the child (an itest test,
// a dtest phase).
type Step struct {
	Name    string  `json:"name"`
	Status  Status  `json:"status"`
	Seconds float64 `json:"seconds"`
	Message string  `json:"message,omitempty"`
}

// Result is the target's outcome on one cluster.
type Result struct {
	Cluster       string    `json:"cluster"`
	Type          string    `json:"type"`
	ServerVersion string    `json:"serverVersion,omitempty"`
	Server        string    `json:"server,omitempty"`
	Status        Status    `json:"status"`
	ExitCode      int       `json:"exitCode"`
	Attempts      int       `json:"attempts"`
	Started       time.Time `json:"started"`
	Seconds       float64   `json:"seconds"`
	FailingStep   string    `json:"failingStep,omitempty"`
	Message       string    `json:"message,omitempty"`
	Steps         []Step    `json:"steps,omitempty"`
	// Log and Artifacts are paths relative to the report directory.
	Log       string `json:"log,omitempty"`
	Artifacts string `json:"artifacts,omitempty"`
}

// Report is one all-kubes run.
type Report struct {
	Target  string    `json:"target"`
	Args    []string  `json:"args,omitempty"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	// Partial is true when the run was interrupted: some clusters are cancelled.
	Partial bool     `json:"partial"`
	Results []Result `json:"results"`
}

// Failed tells whether any cluster did not pass; it decides all-kubes' exit code.
func (r *Report) Failed() bool {
	for _, res := range r.Results {
		if !res.Status.OK() {
			return true
		}
	}
	return r.Partial
}

// Counts returns how many results have each status.
func (r *Report) Counts() map[Status]int {
	m := map[Status]int{}
	for _, res := range r.Results {
		m[res.Status]++
	}
	return m
}

// Sort orders the results by cluster name so every output is deterministic.
func (r *Report) Sort() {
	sort.SliceStable(r.Results, func(i, j int) bool { return r.Results[i].Cluster < r.Results[j].Cluster })
}

// File names inside a report directory.
const (
	JSONFile  = "report.json"
	JUnitFile = "junit.xml"
	HTMLFile  = "index.html"
)

// WriteDir writes report.json, junit.xml and index.html into dir (created 0700 if missing), each
// atomically and 0600: a report quotes test output, which may hold what a user would not publish.
func WriteDir(dir string, r *Report) error {
	r.Sort()
	writers := []struct {
		name string
		fn   func(io.Writer, *Report) error
	}{{JSONFile, WriteJSON}, {JUnitFile, WriteJUnit}, {HTMLFile, WriteHTML}}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("report directory %s: %w", dir, err)
	}
	for _, w := range writers {
		var buf bufWriter
		if err := w.fn(&buf, r); err != nil {
			return fmt.Errorf("render %s: %w", w.name, err)
		}
		if err := fsutil.WriteFileAtomic(filepath.Join(dir, w.name), buf.b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

type bufWriter struct{ b []byte }

func (w *bufWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

func seconds(d time.Duration) float64 {
	return float64(d.Round(10*time.Millisecond)) / float64(time.Second)
}

// Seconds converts a duration to the rounded seconds the report stores.
func Seconds(d time.Duration) float64 { return seconds(d) }

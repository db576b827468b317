// Package report holds the result of one `nuv all-kubes` run (a target run once per cluster) and
// writes it in the forms its readers want: report.json for tools, junit.xml for CI (a testsuite per
// cluster, cluster type and server version as properties), index.html (a static matrix coloured by
// status, linking to per-cluster logs and failure artifacts) and the table printed at the end.
package report

import (
	"encoding/json"
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

// Result is the target's outcome on one cluster: one cell of the matrix.
type Result struct {
	Cluster string `json:"cluster"`
	// Target is the cell's target; empty means the report's Target (reports of one run).
	Target string `json:"target,omitempty"`
	// Path is how the deployment reached the version under test (PathInstall, PathUpgrade); empty
	// in a report without the upgrade axis (every cell an install).
	Path          string `json:"path,omitempty"`
	Type          string `json:"type"`
	ServerVersion string `json:"serverVersion,omitempty"`
	Server        string `json:"server,omitempty"`
	// What the cell ran on, as found out at run time (see Platform).
	Platform    *Platform `json:"platform,omitempty"`
	Status      Status    `json:"status"`
	ExitCode    int       `json:"exitCode"`
	Attempts    int       `json:"attempts"`
	Started     time.Time `json:"started"`
	Seconds     float64   `json:"seconds"`
	FailingStep string    `json:"failingStep,omitempty"`
	Message     string    `json:"message,omitempty"`
	Steps       []Step    `json:"steps,omitempty"`
	// Log and Artifacts are paths relative to the report directory.
	Log       string `json:"log,omitempty"`
	Artifacts string `json:"artifacts,omitempty"`
	// Upgrade is what the upgrade path did and found (cells of PathUpgrade).
	Upgrade *Upgrade `json:"upgrade,omitempty"`
	// Provenance says which run produced the cell (always set by all-kubes and by merge).
	Provenance *Provenance `json:"provenance,omitempty"`
	// Superseded lists the other runs that had the same cell when reports were merged: the newest
	// run's cell is kept and the older ones are named here, so a duplicate is never silent.
	Superseded []Provenance `json:"superseded,omitempty"`
}

// Platform is the truthful description of the cluster a cell ran on.
type Platform struct {
	// Provider made the cluster: "local" (nuv's own, nodes labelled nuv.dev/provider=local) or
	// another nuv provider named by that label, or "kubeconfig" (an existing cluster nuv did not make).
	// For a cluster a nuv cloud emulator made it is the cloud's provider (eks, aks, gke), as the user
	// created it, even though its nodes are a local cluster's.
	Provider string `json:"provider"`
	// Flavor is the --flavor of a local cluster (its nodes imitate that distribution), if any.
	Flavor string `json:"flavor,omitempty"`
	// Emulated names the nuv cloud emulator that made the cluster (aws, azure or gcp: an emulated
	// EKS, AKS or GKE cluster, whose nodes carry nuv.dev/emulated); empty for a real cloud cluster or
	// a plain one.
	Emulated string `json:"emulated,omitempty"`
	// Bootstrap is what bootstrapped a self-managed cluster nuv made on machines (kubeadm: its
	// nodes carry nuv.dev/bootstrap; Provider is the machines' cloud, aws); empty for the others.
	Bootstrap string `json:"bootstrap,omitempty"`
	// DetectedBy says how Type was found: "override" (clusters/<name>.type or detect.force),
	// "providerID" or "label" (the node markers of a distribution), or "none" (no marker: generic).
	DetectedBy string `json:"detectedBy"`
	// Evidence is the marker that decided it (a label key, a providerID scheme, the override file).
	Evidence string `json:"evidence,omitempty"`
	// Nodes counts the cluster's nodes; Simulated how many of them are kwok nodes (no kubelet).
	Nodes     int `json:"nodes"`
	Simulated int `json:"simulated"`
}

// The marks NodeKind gives a platform's nodes.
const (
	NodesSimulated = "simulated" // every node is a kwok node (no kubelet)
	NodesReal      = "real"      // no node is a kwok node
	NodesMixed     = "mixed"     // some are
	NodesEmpty     = "empty"     // the cluster has no node at all: nothing can have run on it
)

// NodeKind is "empty" when the cluster has no node, "simulated" when every node is a kwok node,
// "real" when none is, else "mixed"; "" for an unknown platform.
func (p *Platform) NodeKind() string {
	switch {
	case p == nil:
		return ""
	case p.Nodes <= 0:
		return NodesEmpty
	case p.Simulated == p.Nodes:
		return NodesSimulated
	case p.Simulated == 0:
		return NodesReal
	}
	return NodesMixed
}

// MarshalJSON writes the platform with its node mark ("nodeKind"), so readers of report.json need
// not derive it (and cannot mistake an empty cluster for a real one).
func (p Platform) MarshalJSON() ([]byte, error) {
	type plain Platform
	return json.Marshal(struct {
		plain
		NodeKind string `json:"nodeKind"`
	}{plain(p), p.NodeKind()})
}

// Label is the one-line description of the platform used by the table and the HTML page, e.g.
// "local/eks, 3 simulated nodes".
func (p *Platform) Label() string {
	if p == nil {
		return "?"
	}
	if p.NodeKind() == NodesEmpty {
		return p.Source() + ", no nodes"
	}
	return fmt.Sprintf("%s, %d %s node%s", p.Source(), p.Nodes, p.NodeKind(), plural(p.Nodes))
}

// Source says who made the cluster: the provider, its flavor, and the emulator when one made it
// ("gke emulated by gcp", "local/eks", "kubeconfig"); a self-managed cluster says so with its
// bootstrap and the machines' cloud ("self-managed (kubeadm) on aws", "self-managed (kubeadm),
// emulated by aws").
func (p *Platform) Source() string {
	if p.Bootstrap != "" {
		if p.Emulated != "" {
			return "self-managed (" + p.Bootstrap + "), emulated by " + p.Emulated
		}
		return "self-managed (" + p.Bootstrap + ") on " + p.Provider
	}
	prov := p.Provider
	if p.Flavor != "" {
		prov += "/" + p.Flavor
	}
	if p.Emulated != "" {
		prov += " emulated by " + p.Emulated
	}
	return prov
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Provenance identifies the run (one machine, one nuv, one commit) that produced a cell.
type Provenance struct {
	// Run names the run: the report directory's name, plus the CI job when there is one.
	Run     string `json:"run"`
	Machine string `json:"machine"`
	Nuv     string `json:"nuv"`
	Commit  string `json:"commit,omitempty"`
	// CIJob is the CI job that ran it (GITHUB_* or CI_JOB_URL), if any.
	CIJob   string    `json:"ciJob,omitempty"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// Retries is how many times the cell was run again after a failure (attempts - 1).
	Retries int `json:"retries"`
	// Dir is the report directory the cell was merged from (merged reports only).
	Dir string `json:"dir,omitempty"`
}

// TargetOf returns the cell's target (its own, else the report's).
func (r *Report) TargetOf(res Result) string {
	if res.Target != "" {
		return res.Target
	}
	return r.Target
}

// Flaky tells whether a cell passed only after a retry.
func (res Result) Flaky() bool { return res.Status == Passed && res.Attempts > 1 }

// Schema is the version of report.json this nuv writes. Version 1 (no "schema" field) had no
// platform, provenance or per-cell target; it is still read and merged. A report with a higher
// schema is refused by merge, naming both versions.
const Schema = 2

// Report is one all-kubes run, or the merge of many.
type Report struct {
	Schema int `json:"schema"`
	// Nuv is the version of nuv that wrote the report.
	Nuv string `json:"nuv,omitempty"`
	// Target is the run's target; a merged report of several targets joins them with ", ".
	Target string   `json:"target"`
	Args   []string `json:"args,omitempty"`
	// UpgradeFrom is the --upgrade-from of the run (the version the upgrade cells started from).
	UpgradeFrom string    `json:"upgradeFrom,omitempty"`
	Started     time.Time `json:"started"`
	Seconds     float64   `json:"seconds"`
	// Partial is true when the run was interrupted: some clusters are cancelled.
	Partial bool     `json:"partial"`
	Results []Result `json:"results"`
	// Provenance is the run's (one run); merged reports carry it per cell instead.
	Provenance *Provenance `json:"provenance,omitempty"`
	// Merged lists the report directories a merged report was made from; Skipped those it could
	// not use, each with the reason.
	Merged  []string     `json:"merged,omitempty"`
	Skipped []SkippedDir `json:"skipped,omitempty"`
}

// SkippedDir is a report directory merge could not use.
type SkippedDir struct {
	Dir    string `json:"dir"`
	Reason string `json:"reason"`
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

// Targets lists the distinct targets of the cells in first-seen order.
func (r *Report) Targets() []string {
	var out []string
	seen := map[string]bool{}
	for _, res := range r.Results {
		if t := r.TargetOf(res); !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) == 0 && r.Target != "" {
		out = []string{r.Target}
	}
	return out
}

// Counts returns how many results have each status.
func (r *Report) Counts() map[Status]int {
	m := map[Status]int{}
	for _, res := range r.Results {
		m[res.Status]++
	}
	return m
}

// Sort orders the results by cluster name, then target, then path (install before upgrade) so
// every output is deterministic.
func (r *Report) Sort() {
	sort.SliceStable(r.Results, func(i, j int) bool {
		a, b := r.Results[i], r.Results[j]
		if a.Cluster != b.Cluster {
			return a.Cluster < b.Cluster
		}
		if ta, tb := r.TargetOf(a), r.TargetOf(b); ta != tb {
			return ta < tb
		}
		return PathOf(a) < PathOf(b)
	})
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
	r.Schema = Schema
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

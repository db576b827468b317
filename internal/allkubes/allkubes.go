// Package allkubes runs one target once per cluster of the project's clusters/ directory, in
// parallel, each run a child nuv process with its own KUBECONFIG, KUBE, NUV_CLUSTER and scratch
// space, and collects one matrix report (internal/report) under <project>/_reports/<timestamp>/.
//
// Every cluster first gets a bounded connect probe (all probes at once): a cluster that does not
// answer is marked unreachable and never takes a run slot, so it does not delay the others.
// Output is streamed with a per-cluster prefix (or grouped per cluster), a live progress line is
// drawn on a terminal, failed runs can be retried, each attempt is bounded by a timeout, and a
// cancelled context (Ctrl-C) ends every child's process group and still writes a partial report.
//
// A target is resolved by Resolve: a nuv built-in command (dtest, itest, operator, ...) or a word
// starting with "-" (a tool) runs as `nuv <target> [args]`; anything else, or any target with
// --task, is a task of the project's Taskfile: `nuv -task <target> [args]`.
//
// Each child gets KUBECONFIG (the cluster's kubeconfig), KUBE (its type), NUV_CLUSTER (its name,
// which wins over the project's selection), NUV_PROJECT, NUV_HOME, TMPDIR inside a private scratch
// directory, and the report.Env* files through which test verbs report steps, the failing step,
// touched objects and failure artifacts.
package allkubes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/dotenv"
	"github.com/nuv-dev/nuv/internal/report"
	"github.com/nuv-dev/nuv/internal/secrets"
)

// Cluster is one kubeconfig of the inventory.
type Cluster struct {
	Name       string
	Kubeconfig string
	Server     string
	// Type is a type known without the network (override file); empty: detect it.
	Type string
	// TypeSource says where Type came from (the override file, DETECT_FORCE, ...).
	TypeSource string
	// Err marks an invalid kubeconfig: the cluster is reported failed without running.
	Err error
}

// Inventory is how all-kubes learns the clusters and their types (internal/kube in nuv; a stand-in
// in unit tests).
type Inventory interface {
	// List returns every clusters/*.kubeconfig of the project, sorted by name.
	List(project string) ([]Cluster, error)
	// RESTConfig builds a client configuration for a kubeconfig.
	RESTConfig(path string) (*rest.Config, error)
	// Nodes lists the cluster's nodes (the type, provider and simulated nodes are read from them).
	Nodes(ctx context.Context, cfg *rest.Config) ([]corev1.Node, error)
}

// Options configure one all-kubes run.
type Options struct {
	Project string
	// Exe is the nuv binary each child runs.
	Exe string
	// Command is the child's argument list after Exe (the resolved target and its arguments).
	Command []string
	// Target names the target in reports.
	Target string
	Args   []string

	Only, Exclude []string
	// Parallel bounds concurrent runs; 0 runs every cluster at once.
	Parallel int
	// AutoParallel picks the bounds from the machine and the clusters' kinds (see autoSlots).
	AutoParallel bool
	// Timeout bounds each attempt; 0 means none.
	Timeout time.Duration
	// Retries is how many times a failed (or timed-out) run is tried again.
	Retries int
	// ProbeTimeout bounds the connect probe of each cluster (default 5s).
	ProbeTimeout time.Duration
	// Group prints each cluster's output as one block when it ends instead of prefixed lines.
	Group bool
	// Progress draws a live progress line (only meaningful on a terminal).
	Progress bool
	// ReportsDir is where the timestamped report directory goes (default <project>/_reports).
	ReportsDir string
	// UpgradeFrom adds the upgrade axis: each cluster runs the target twice, one after the other,
	// as an install cell and as an upgrade cell whose child gets upgrade.EnvFrom=UpgradeFrom (a
	// git ref of the project or an operator image; dtest then installs that version first).
	UpgradeFrom string

	Out     io.Writer
	Log     cli.Logger
	Environ []string // the children's base environment (default os.Environ())
	Home    string   // NUV_HOME passed to children so they agree on cluster state
	// Nuv is the version recorded in the report (default: asked from Exe with -version).
	Nuv string
	Inv Inventory
	Now func() time.Time
	// Masker hides secret values in everything the report holds (logs, messages, artifacts);
	// default: the secret-looking variables of Environ and of the project's .env.
	Masker *secrets.Masker
}

// Result of Run: the report and the directory it was written to.
type Result struct {
	Report *report.Report
	Dir    string
}

// ErrInterrupted is returned (wrapped) when the context was cancelled during the run.
var ErrInterrupted = errors.New("interrupted")

// Run runs the target on every selected cluster and writes the report. The error is non-nil when
// any cluster did not pass (the report is still written and returned).
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	clusters, err := o.Inv.List(o.Project)
	if err != nil {
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	clusters, err = filter(clusters, o.Only, o.Exclude)
	if err != nil {
		return nil, err
	}
	if len(clusters) == 0 {
		return nil, fmt.Errorf("no clusters in %s (create one with `nuv cluster create local` or copy a kubeconfig there)", filepath.Join(o.Project, "clusters"))
	}
	dir, err := newReportDir(o.ReportsDir, o.Now())
	if err != nil {
		return nil, err
	}
	started := o.Now()
	prov := o.runProvenance(dir)
	prov.Started = started
	rep := &report.Report{Schema: report.Schema, Nuv: o.Nuv, Target: o.Target, Args: o.Args, Started: started, UpgradeFrom: o.UpgradeFrom}
	var labels []string
	for _, c := range clusters {
		for _, cl := range o.cellsOf(c) {
			labels = append(labels, cl.label)
		}
	}
	ui := newUI(o.Out, o.Group, o.Progress, labels)
	defer ui.stop()

	perCluster := make([][]report.Result, len(clusters))
	sem := newSlots(&o, clusters)
	if sem.why != "" {
		fmt.Fprintf(o.Out, "all-kubes: %s\n", sem.why)
	}
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			perCluster[i] = o.runCluster(ctx, c, dir, sem, ui)
		}()
	}
	wg.Wait()
	ui.stop()
	var results []report.Result
	for _, rs := range perCluster {
		results = append(results, rs...)
	}

	ended := o.Now()
	for i := range results {
		p := prov
		p.Started = results[i].Started
		p.Ended = results[i].Started.Add(time.Duration(results[i].Seconds * float64(time.Second)))
		if results[i].Attempts > 1 {
			p.Retries = results[i].Attempts - 1
		}
		results[i].Provenance = &p
	}
	prov.Ended = ended
	rep.Provenance = &prov
	rep.Results = results
	rep.Seconds = report.Seconds(ended.Sub(started))
	rep.Partial = ctx.Err() != nil
	if err := report.WriteDir(dir, rep); err != nil {
		return nil, err
	}
	fmt.Fprintln(o.Out)
	if err := report.WriteTable(o.Out, rep); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Out, "report: %s\n", dir)
	res := &Result{Report: rep, Dir: dir}
	switch {
	case rep.Partial:
		return res, fmt.Errorf("all-kubes %s: %w; partial report in %s", o.Target, ErrInterrupted, dir)
	case rep.Failed():
		n := 0
		for _, r := range rep.Results {
			if !r.Status.OK() {
				n++
			}
		}
		noun := "clusters"
		if o.UpgradeFrom != "" {
			noun = "cells"
		}
		return res, fmt.Errorf("all-kubes %s: %d of %d %s did not pass; report in %s", o.Target, n, len(rep.Results), noun, dir)
	}
	return res, nil
}

func (o *Options) defaults() error {
	if o.Exe == "" || len(o.Command) == 0 {
		return fmt.Errorf("all-kubes: no target to run")
	}
	if o.Inv == nil {
		return fmt.Errorf("all-kubes: no cluster inventory")
	}
	if o.Target == "" {
		o.Target = o.Command[0]
	}
	if o.Parallel <= 0 {
		o.Parallel = 1 << 16
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = 5 * time.Second
	}
	if o.ReportsDir == "" {
		o.ReportsDir = filepath.Join(o.Project, "_reports")
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Log == nil {
		o.Log = cli.Quiet()
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Masker == nil {
		dot, err := dotenv.Dir(o.Project)
		if err != nil {
			return fmt.Errorf("all-kubes: %w", err)
		}
		o.Masker = secrets.NewMasker(append(append([]string(nil), o.Environ...), dot...))
	}
	if o.Nuv == "" {
		o.Nuv = nuvVersion(o.Exe)
	}
	return nil
}

// filter applies --only and --exclude; an unknown name is an error listing the known ones.
func filter(all []Cluster, only, exclude []string) ([]Cluster, error) {
	known := map[string]bool{}
	for _, c := range all {
		known[c.Name] = true
	}
	for _, n := range append(append([]string(nil), only...), exclude...) {
		if !known[n] {
			return nil, cli.Usagef("unknown cluster %q; clusters: %s", n, strings.Join(names(all), ", "))
		}
	}
	in := func(list []string, n string) bool {
		for _, x := range list {
			if x == n {
				return true
			}
		}
		return false
	}
	var out []Cluster
	for _, c := range all {
		if (len(only) == 0 || in(only, c.Name)) && !in(exclude, c.Name) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func names(cs []Cluster) []string {
	var n []string
	for _, c := range cs {
		n = append(n, c.Name)
	}
	return n
}

// newReportDir creates <base>/<timestamp>, adding -2, -3... when two runs start in the same second.
func newReportDir(base string, now time.Time) (string, error) {
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("reports directory %s: %w", base, err)
	}
	stamp := now.UTC().Format("20060102-150405")
	for i := 1; ; i++ {
		dir := filepath.Join(base, stamp)
		if i > 1 {
			dir = fmt.Sprintf("%s-%d", dir, i)
		}
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !os.IsExist(err) {
			return "", fmt.Errorf("report directory %s: %w", dir, err)
		}
	}
}

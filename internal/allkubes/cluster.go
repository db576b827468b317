package allkubes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/nuv-dev/nuv/internal/report"
	"github.com/nuv-dev/nuv/internal/upgrade"
)

// probe is the bounded connect check every cluster gets before its run.
type probe struct {
	cfg      *rest.Config
	typ      string
	version  string
	platform *report.Platform
}

// probeCluster asks the API server for its version within timeout and detects the cluster type.
func (o *Options) probeCluster(ctx context.Context, c Cluster) (*probe, error) {
	if c.Err != nil {
		return nil, fmt.Errorf("invalid kubeconfig %s: %w", c.Kubeconfig, c.Err)
	}
	cfg, err := o.Inv.RESTConfig(c.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", c.Kubeconfig, err)
	}
	pctx, cancel := context.WithTimeout(ctx, o.ProbeTimeout)
	defer cancel()
	pcfg := rest.CopyConfig(cfg)
	pcfg.Timeout = o.ProbeTimeout
	dc, err := discovery.NewDiscoveryClientForConfig(pcfg)
	if err != nil {
		return nil, err
	}
	p := &probe{cfg: cfg, typ: c.Type}
	type answer struct {
		v   string
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		v, err := dc.ServerVersion()
		if err != nil {
			ch <- answer{err: err}
			return
		}
		ch <- answer{v: v.GitVersion}
	}()
	select {
	case a := <-ch:
		if a.err != nil {
			return nil, fmt.Errorf("%s does not answer: %w", c.Server, a.err)
		}
		p.version = a.v
	case <-pctx.Done():
		return nil, fmt.Errorf("%s did not answer within %s", c.Server, o.ProbeTimeout)
	}
	nodes, err := o.Inv.Nodes(pctx, pcfg)
	if err != nil {
		o.Log.V(1).Infof("%s: list nodes: %v", c.Name, err)
	}
	p.typ, p.platform = describePlatform(nodes, c.Type, c.TypeSource)
	if err != nil {
		p.platform.DetectedBy, p.platform.Evidence = "none", "nodes not readable: "+err.Error()
		if c.Type != "" {
			p.platform.DetectedBy, p.platform.Evidence = "override", c.TypeSource
		}
	}
	return p, nil
}

// cell is one run on a cluster: the path it takes (PathInstall, PathUpgrade; "" in a run without
// the upgrade axis), how the UI and the log and artifact names call it.
type cell struct {
	path  string
	label string // the cluster, or "<cluster>/upgrade"
	name  string // file-name form of label: logs/<name>.log, artifacts/<name>/
}

// cellsOf lists the cells of cluster c: one, or an install and an upgrade cell with --upgrade-from.
func (o *Options) cellsOf(c Cluster) []cell {
	if o.UpgradeFrom == "" {
		return []cell{{label: c.Name, name: safe(c.Name)}}
	}
	return []cell{
		{path: report.PathInstall, label: c.Name, name: safe(c.Name)},
		{path: report.PathUpgrade, label: c.Name + "/" + report.PathUpgrade, name: safe(c.Name) + "-" + report.PathUpgrade},
	}
}

// runCluster probes one cluster, waits for a run slot and runs its cells one after the other on
// it (install, then upgrade: both use the same cluster, so never at once), each with retries and
// failure artifacts.
func (o *Options) runCluster(ctx context.Context, c Cluster, dir string, sem *slots, ui *ui) []report.Result {
	cells := o.cellsOf(c)
	results := make([]report.Result, len(cells))
	for i, cl := range cells {
		results[i] = report.Result{Cluster: c.Name, Path: cl.path, Server: c.Server, Type: c.Type, Started: o.Now(),
			Log: filepath.ToSlash(filepath.Join("logs", cl.name+".log"))}
	}
	finish := func(i int) {
		res := &results[i]
		res.Message = o.Masker.Mask(res.Message)
		res.Seconds = report.Seconds(o.Now().Sub(res.Started))
		ui.done(cells[i].label, res.Status)
	}
	// all cells end alike when the cluster cannot be run at all
	finishAll := func(st report.Status, msg string, code int) []report.Result {
		for i := range results {
			results[i].Status, results[i].Message, results[i].ExitCode = st, msg, code
			if logf, err := openLog(filepath.Join(dir, results[i].Log)); err == nil {
				fmt.Fprintf(logf, "nuv all-kubes: %s: %s\n", st, msg)
				logf.Close()
			}
			finish(i)
		}
		return results
	}

	p, err := o.probeCluster(ctx, c)
	if err != nil {
		st := report.Unreachable
		if c.Err != nil {
			st = report.Failed // the kubeconfig itself is broken: nothing to reach
		}
		if ctx.Err() != nil {
			st = report.Cancelled
		}
		ui.line(c.Name, fmt.Sprintf("%s: %v", st, err))
		return finishAll(st, err.Error(), -1)
	}
	for i := range results {
		results[i].Type, results[i].ServerVersion, results[i].Platform = p.typ, p.version, p.platform
	}

	slot := sem.remote
	if p.platform != nil && p.platform.Provider == "local" {
		slot = sem.local
	}
	select {
	case slot <- struct{}{}:
		defer func() { <-slot }()
	case <-ctx.Done():
		return finishAll(report.Cancelled, "cancelled before it started", -1)
	}
	for i, cl := range cells {
		if ctx.Err() != nil {
			results[i].Status, results[i].Message, results[i].ExitCode = report.Cancelled, "cancelled before it started", -1
			finish(i)
			continue
		}
		o.runCell(ctx, c, p, cl, dir, ui, &results[i])
		finish(i)
	}
	return results
}

// runCell runs the target for one cell of a probed cluster (with retries) and gathers failure
// artifacts, filling res.
func (o *Options) runCell(ctx context.Context, c Cluster, p *probe, cl cell, dir string, ui *ui, res *report.Result) {
	logf, err := openLog(filepath.Join(dir, res.Log))
	if err != nil {
		res.Status, res.Message = report.Failed, err.Error()
		return
	}
	defer logf.Close()
	res.Started = o.Now()
	ui.running(cl.label)

	scratch, err := os.MkdirTemp("", "nuv-all-kubes-"+cl.name+"-")
	if err != nil {
		res.Status, res.Message = report.Failed, fmt.Sprintf("scratch directory: %v", err)
		return
	}
	defer os.RemoveAll(scratch)

	for attempt := 1; attempt <= o.Retries+1; attempt++ {
		res.Attempts = attempt
		if attempt > 1 {
			fmt.Fprintf(logf, "\n=== nuv all-kubes: attempt %d of %d\n", attempt, o.Retries+1)
			ui.line(cl.label, fmt.Sprintf("retrying (attempt %d of %d)", attempt, o.Retries+1))
		}
		sc, err := newScratch(scratch, attempt)
		if err != nil {
			res.Status, res.Message = report.Failed, err.Error()
			return
		}
		run := o.runChild(ctx, c, p, cl, sc, logf, ui)
		res.Status, res.ExitCode, res.Message = run.status, run.exitCode, run.message
		cr, err := report.ReadChildResult(sc.result)
		if err != nil {
			fmt.Fprintf(logf, "nuv all-kubes: %v\n", err)
		}
		res.Steps, res.FailingStep, res.Upgrade = cr.Steps, cr.FailingStep, cr.Upgrade
		if cr.Message != "" && res.Status == report.Failed {
			res.Message = cr.Message
		}
		if res.Status == report.Failed && res.Message == "" {
			res.Message = run.lastLine
		}
		if cl.path == report.PathUpgrade && res.Upgrade == nil && res.Status == report.Passed {
			// a target that knows nothing of the upgrade path would pass as a plain install
			res.Status, res.ExitCode = report.Failed, -1
			res.Message = fmt.Sprintf("%s did not take the upgrade path from %s: it reported no upgrade (nuv dtest, or a task running it, takes $%s)",
				o.Target, o.UpgradeFrom, upgrade.EnvFrom)
			fmt.Fprintf(logf, "nuv all-kubes: %s\n", res.Message)
			break
		}
		if res.Status.OK() || res.Status == report.Cancelled || ctx.Err() != nil {
			break
		}
		if attempt == o.Retries+1 || res.Status == report.Unreachable {
			o.collect(ctx, c, p, cl.name, sc, dir, res, logf)
			break
		}
	}
	if ctx.Err() != nil && !res.Status.OK() {
		res.Status = report.Cancelled
	}
}

// scratch is one attempt's private directory layout.
type scratch struct {
	dir, tmp, result, artifacts, touched string
}

func newScratch(base string, attempt int) (scratch, error) {
	d := filepath.Join(base, fmt.Sprintf("attempt-%d", attempt))
	s := scratch{dir: d, tmp: filepath.Join(d, "tmp"), result: filepath.Join(d, "result.json"),
		artifacts: filepath.Join(d, "artifacts"), touched: filepath.Join(d, "touched.jsonl")}
	for _, p := range []string{s.tmp, s.artifacts} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			return s, fmt.Errorf("scratch directory: %w", err)
		}
	}
	return s, nil
}

// openLog opens a cluster's log in the report (0600 in a 0700 directory: it holds test output).
func openLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("log directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("log %s: %w", path, err)
	}
	return f, nil
}

// safe makes a cluster name usable in a file name.
func safe(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ' ' {
			return '_'
		}
		return r
	}, name)
}

// childEnv is the child's environment: the base without anything that could point it at another
// cluster or shared temp space, plus this cluster's.
// A cell of the upgrade path also gets upgrade.EnvFrom (dropped from every other cell's).
func (o *Options) childEnv(c Cluster, p *probe, cl cell, sc scratch) []string {
	drop := map[string]bool{"KUBECONFIG": true, "KUBE": true, "NUV_CLUSTER": true, "TMPDIR": true, upgrade.EnvFrom: true,
		report.EnvScratch: true, report.EnvResult: true, report.EnvArtifacts: true, report.EnvTouched: true,
		"NUV_PROJECT": true}
	var env []string
	for _, kv := range o.Environ {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] && !(k == "NUV_HOME" && o.Home != "") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"KUBECONFIG="+c.Kubeconfig,
		"KUBE="+p.typ,
		"NUV_CLUSTER="+c.Name,
		"NUV_PROJECT="+o.Project,
		"TMPDIR="+sc.tmp,
		report.EnvScratch+"="+sc.dir,
		report.EnvResult+"="+sc.result,
		report.EnvArtifacts+"="+sc.artifacts,
		report.EnvTouched+"="+sc.touched,
	)
	if o.Home != "" {
		env = append(env, "NUV_HOME="+o.Home)
	}
	if cl.path == report.PathUpgrade {
		env = append(env, upgrade.EnvFrom+"="+o.UpgradeFrom)
	}
	return env
}

var errTimeout = errors.New("timeout")

var _ = time.Second

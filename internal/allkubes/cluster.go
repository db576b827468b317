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

// runCluster probes one cluster, waits for a run slot, runs the target (with retries) and gathers
// failure artifacts.
func (o *Options) runCluster(ctx context.Context, c Cluster, dir string, sem *slots, ui *ui) report.Result {
	res := report.Result{Cluster: c.Name, Server: c.Server, Type: c.Type, Started: o.Now(),
		Log: filepath.ToSlash(filepath.Join("logs", c.Name+".log"))}
	logPath := filepath.Join(dir, res.Log)
	finish := func() report.Result {
		res.Message = o.Masker.Mask(res.Message)
		res.Seconds = report.Seconds(o.Now().Sub(res.Started))
		ui.done(c.Name, res.Status)
		return res
	}
	logf, err := openLog(logPath)
	if err != nil {
		res.Status, res.Message = report.Failed, err.Error()
		return finish()
	}
	defer logf.Close()

	p, err := o.probeCluster(ctx, c)
	if err != nil {
		res.Status, res.Message, res.ExitCode = report.Unreachable, err.Error(), -1
		if c.Err != nil {
			res.Status = report.Failed // the kubeconfig itself is broken: nothing to reach
		}
		if ctx.Err() != nil {
			res.Status = report.Cancelled
		}
		fmt.Fprintf(logf, "nuv all-kubes: %s: %s\n", res.Status, err)
		ui.line(c.Name, fmt.Sprintf("%s: %v", res.Status, err))
		return finish()
	}
	res.Type, res.ServerVersion, res.Platform = p.typ, p.version, p.platform

	slot := sem.remote
	if p.platform != nil && p.platform.Provider == "local" {
		slot = sem.local
	}
	select {
	case slot <- struct{}{}:
		defer func() { <-slot }()
	case <-ctx.Done():
		res.Status, res.Message, res.ExitCode = report.Cancelled, "cancelled before it started", -1
		return finish()
	}
	res.Started = o.Now()
	ui.running(c.Name)

	scratch, err := os.MkdirTemp("", "nuv-all-kubes-"+safe(c.Name)+"-")
	if err != nil {
		res.Status, res.Message = report.Failed, fmt.Sprintf("scratch directory: %v", err)
		return finish()
	}
	defer os.RemoveAll(scratch)

	for attempt := 1; attempt <= o.Retries+1; attempt++ {
		res.Attempts = attempt
		if attempt > 1 {
			fmt.Fprintf(logf, "\n=== nuv all-kubes: attempt %d of %d\n", attempt, o.Retries+1)
			ui.line(c.Name, fmt.Sprintf("retrying (attempt %d of %d)", attempt, o.Retries+1))
		}
		sc, err := newScratch(scratch, attempt)
		if err != nil {
			res.Status, res.Message = report.Failed, err.Error()
			return finish()
		}
		run := o.runChild(ctx, c, p, sc, logf, ui)
		res.Status, res.ExitCode, res.Message = run.status, run.exitCode, run.message
		cr, err := report.ReadChildResult(sc.result)
		if err != nil {
			fmt.Fprintf(logf, "nuv all-kubes: %v\n", err)
		}
		res.Steps, res.FailingStep = cr.Steps, cr.FailingStep
		if cr.Message != "" && res.Status == report.Failed {
			res.Message = cr.Message
		}
		if res.Status == report.Failed && res.Message == "" {
			res.Message = run.lastLine
		}
		if res.Status.OK() || res.Status == report.Cancelled || ctx.Err() != nil {
			break
		}
		if attempt == o.Retries+1 || res.Status == report.Unreachable {
			o.collect(ctx, c, p, sc, dir, &res, logf)
			break
		}
	}
	if ctx.Err() != nil && !res.Status.OK() {
		res.Status = report.Cancelled
	}
	return finish()
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
func (o *Options) childEnv(c Cluster, p *probe, sc scratch) []string {
	drop := map[string]bool{"KUBECONFIG": true, "KUBE": true, "NUV_CLUSTER": true, "TMPDIR": true,
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
	return env
}

var errTimeout = errors.New("timeout")

var _ = time.Second

package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/deploy/statusview"
	"github.com/nuv-dev/nuv/internal/runner"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Status prints the cluster and which source chose it (kube.Resolve's order), the operator (Deployment and, on a local cluster, the host process)
// and every Whisk with its conditions.
func Status(ctx context.Context, o Options) error {
	return StatusAs(ctx, o, &cli.OutputOption{Format: cli.FormatTable})
}

// StatusAs is Status in the format of out (`nuv status -o table|wide|json|yaml`): the lines of
// Status (wide: with each condition's reason), or the machine form, StatusReport. On a failure the
// table shows what was read before it; the machine form shows nothing. The slim front answers
// `nuv status` itself when it can, through the same report and renderer (package statusview).
func StatusAs(ctx context.Context, o Options, out *cli.OutputOption) error {
	r, err := StatusOf(ctx, o)
	if err != nil {
		if r != nil && !out.Machine() {
			r.Lines(o.Out, out.Wide())
		}
		return err
	}
	return statusview.Write(o.Out, out, r)
}

// StatusReport is what `nuv status` reports (package statusview); its JSON/YAML field names are
// the machine form.
type StatusReport = statusview.Report

// StatusOf reads what `nuv status` reports. On a failure it returns the report read so far too.
func StatusOf(ctx context.Context, o Options) (*StatusReport, error) {
	t, err := prepare(ctx, &o)
	if err != nil {
		return nil, err
	}
	r := statusview.New(statusview.Cluster{Name: t.name, Type: t.kubeType, Server: t.cfg.Host, Source: t.origin})
	objs, err := operatorObjects(o, t, false)
	if err != nil {
		return r, err
	}
	for _, obj := range objs {
		if obj.GetKind() != "Deployment" {
			continue
		}
		ri, _, err := t.resource(obj)
		if err != nil {
			return r, err
		}
		cur, err := ri.Get(ctx, obj.GetName(), getOpts)
		switch {
		case apierrors.IsNotFound(err):
			cur = nil
		case err != nil:
			return r, fmt.Errorf("%s: %w", objRef(obj), err)
		}
		r.Operator = append(r.Operator, statusview.OperatorOf(objRef(obj), cur))
	}
	r.OperatorRead = true
	if t.localName != "" {
		r.Host = statusview.HostOf(o.Home, t.localName)
	}
	items, err := t.whiskItems(ctx)
	if err != nil {
		return r, err
	}
	for i := range items {
		r.Whisks = append(r.Whisks, statusview.WhiskOf(&items[i]))
	}
	r.WhisksRead = true
	return r, nil
}

// Run runs the operator from source (`go run`) against the cluster in the foreground, with the
// cluster's own kubeconfig, after installing its CRDs. On a local cluster the host-run operator
// is stopped first so two operators do not fight (`nuv operator` starts it again).
func Run(ctx context.Context, o Options, args []string) error {
	t, err := prepare(ctx, &o)
	if err != nil {
		return err
	}
	objs, err := operatorObjects(o, t, false)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if obj.GetKind() != "CustomResourceDefinition" {
			continue
		}
		if _, err := t.apply(ctx, obj, false, o.Out); err != nil {
			return err
		}
		if err := t.waitFor(ctx, obj, o.Timeout, o.Out, crdEstablished); err != nil {
			return err
		}
	}
	if t.localName != "" && newHostRun(o.Home, t.localName).stop(5*time.Second) {
		fmt.Fprintln(o.Out, "stopped the host-run operator (`nuv operator` restarts it)")
	}
	bin, err := buildBinary(ctx, o) // from the current sources, cached by their hash
	if err != nil {
		return err
	}
	kc, err := filepath.Abs(t.kubeconfig)
	if err != nil {
		return err
	}
	cmdArgs := append([]string{"--kubeconfig", kc}, args...)
	fmt.Fprintf(o.Out, "running the operator from %s against %s (Ctrl-C stops it)\n", mainPackage(o), t.name)
	// Ctrl-C reaches the operator as SIGINT (it shuts down cleanly); the kill comes 10s later.
	p, err := runner.Start(context.WithoutCancel(ctx), runner.Cmd{Path: bin, Args: cmdArgs, Dir: o.Project,
		Stdin: os.Stdin, Stdout: o.Out, Stderr: o.Out})
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- p.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = p.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.Signal(syscall.SIGKILL)
			<-done
		}
		return ctx.Err()
	}
}

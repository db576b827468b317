package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nuv-dev/nuv/internal/kobj"
	"github.com/nuv-dev/nuv/internal/runner"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Status prints the cluster and which source chose it (kube.Resolve's order), the operator (Deployment and, on a local cluster, the host process)
// and every Whisk with its conditions.
func Status(ctx context.Context, o Options) error {
	t, err := prepare(ctx, &o)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "cluster:  %s (%s) %s\n", t.name, t.kubeType, t.cfg.Host)
	fmt.Fprintf(o.Out, "from:     %s\n", t.origin)
	objs, err := operatorObjects(o, t, false)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if obj.GetKind() != "Deployment" {
			continue
		}
		ri, _, err := t.resource(obj)
		if err != nil {
			return err
		}
		cur, err := ri.Get(ctx, obj.GetName(), getOpts)
		switch {
		case apierrors.IsNotFound(err):
			fmt.Fprintf(o.Out, "operator: not deployed (%s missing; run `nuv operator`)\n", objRef(obj))
		case err != nil:
			return fmt.Errorf("%s: %w", objRef(obj), err)
		default:
			images, _, _ := unstructuredContainers(cur)
			if ok, why := deploymentAvailable(cur); ok {
				fmt.Fprintf(o.Out, "operator: %s Available, image %s\n", objRef(obj), strings.Join(images, ","))
			} else {
				fmt.Fprintf(o.Out, "operator: %s not available: %s\n", objRef(obj), why)
			}
		}
	}
	if t.localName != "" {
		h := newHostRun(o.Home, t.localName)
		if pid, _, ok := h.running(); ok {
			fmt.Fprintf(o.Out, "host:     operator pid %d, log %s\n", pid, h.logFile())
		} else {
			fmt.Fprintln(o.Out, "host:     operator not running (local cluster: `nuv operator` starts it)")
		}
	}
	items, err := t.whiskItems(ctx)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		fmt.Fprintln(o.Out, "whisks:   none")
	}
	for i := range items {
		w := &items[i]
		ready := "Ready=Unknown"
		if c := kobj.FindCondition(w, "Ready"); c != nil {
			ready = fmt.Sprintf("Ready=%s (%s)", c.Status, c.Reason)
		}
		extra := ""
		if w.GetDeletionTimestamp() != nil {
			extra = fmt.Sprintf(" being deleted, finalizers %v", w.GetFinalizers())
		}
		fmt.Fprintf(o.Out, "whisk:    %s/%s %s%s\n", w.GetNamespace(), w.GetName(), ready, extra)
		conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			fmt.Fprintf(o.Out, "            %-16v %-6v %v\n", m["type"], m["status"], m["message"])
		}
	}
	return nil
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

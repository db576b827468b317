package deploy

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kobj"
	"github.com/nuv-dev/nuv/internal/runner"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Status prints the cluster and which source chose it (kube.Resolve's order), the operator (Deployment and, on a local cluster, the host process)
// and every Whisk with its conditions.
func Status(ctx context.Context, o Options) error {
	return StatusAs(ctx, o, &cli.OutputOption{Format: cli.FormatTable})
}

// StatusAs is Status in the format of out (`nuv status -o table|wide|json|yaml`): the lines of
// Status (wide: with each condition's reason), or the machine form, StatusReport. On a failure the
// table shows what was read before it; the machine form shows nothing.
func StatusAs(ctx context.Context, o Options, out *cli.OutputOption) error {
	r, err := StatusOf(ctx, o)
	if err != nil {
		if r != nil && !out.Machine() {
			r.write(o.Out, out.Wide())
		}
		return err
	}
	return writeStatusReport(o.Out, out, r)
}

// writeStatusReport prints r in the format of out: its lines (wide: with each condition's reason),
// or the machine form.
func writeStatusReport(w io.Writer, out *cli.OutputOption, r *StatusReport) error {
	if done, err := out.Write(w, r); done {
		return err
	}
	r.write(w, out.Wide())
	return nil
}

// StatusReport is what `nuv status` reports; its JSON/YAML field names are the machine form.
// Nothing in it is secret (no credentials, no Secret data).
type StatusReport struct {
	Cluster  ClusterStatus    `json:"cluster"`
	Operator []OperatorStatus `json:"operator"`
	// Host is the host-run operator of a local cluster (nil on other clusters).
	Host   *HostStatus   `json:"host,omitempty"`
	Whisks []WhiskStatus `json:"whisks"`

	operatorRead, whisksRead bool // what a partial report (a failure half-way) holds
}

// ClusterStatus is the cluster nuv status looked at, and which source chose it.
type ClusterStatus struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Server string `json:"server"`
	Source string `json:"source"`
}

// OperatorStatus is one Deployment of the operator's manifests.
type OperatorStatus struct {
	// Deployment is "deployment NAMESPACE/NAME".
	Deployment string   `json:"deployment"`
	Deployed   bool     `json:"deployed"`
	Available  bool     `json:"available"`
	Reason     string   `json:"reason,omitempty"` // why it is not available
	Images     []string `json:"images,omitempty"`
}

// HostStatus is the operator process nuv runs on the host for a local cluster.
type HostStatus struct {
	Running bool   `json:"running"`
	PID     int    `json:"pid,omitempty"`
	Log     string `json:"log,omitempty"`
}

// WhiskStatus is one Whisk and its conditions.
type WhiskStatus struct {
	Namespace  string            `json:"namespace"`
	Name       string            `json:"name"`
	Ready      string            `json:"ready"` // True, False or Unknown
	Reason     string            `json:"reason,omitempty"`
	Deleting   bool              `json:"deleting,omitempty"`
	Finalizers []string          `json:"finalizers,omitempty"`
	Conditions []ConditionStatus `json:"conditions,omitempty"`

	readySeen bool // the Whisk has a Ready condition (even one of status Unknown)
}

// ConditionStatus is one status condition of a Whisk.
type ConditionStatus struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// StatusOf reads what `nuv status` reports. On a failure it returns the report read so far too.
func StatusOf(ctx context.Context, o Options) (*StatusReport, error) {
	t, err := prepare(ctx, &o)
	if err != nil {
		return nil, err
	}
	r := &StatusReport{Cluster: ClusterStatus{Name: t.name, Type: t.kubeType, Server: t.cfg.Host, Source: t.origin}, Operator: []OperatorStatus{}, Whisks: []WhiskStatus{}}
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
		op := OperatorStatus{Deployment: objRef(obj)}
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return r, fmt.Errorf("%s: %w", objRef(obj), err)
		default:
			op.Deployed = true
			op.Images, _, _ = unstructuredContainers(cur)
			op.Available, op.Reason = deploymentAvailable(cur)
			if op.Available {
				op.Reason = ""
			}
		}
		r.Operator = append(r.Operator, op)
	}
	r.operatorRead = true
	if t.localName != "" {
		h := newHostRun(o.Home, t.localName)
		r.Host = &HostStatus{}
		if pid, _, ok := h.running(); ok {
			r.Host.Running, r.Host.PID, r.Host.Log = true, pid, h.logFile()
		}
	}
	items, err := t.whiskItems(ctx)
	if err != nil {
		return r, err
	}
	for i := range items {
		w := &items[i]
		ws := WhiskStatus{Namespace: w.GetNamespace(), Name: w.GetName(), Ready: "Unknown"}
		if c := kobj.FindCondition(w, "Ready"); c != nil {
			ws.Ready, ws.Reason, ws.readySeen = string(c.Status), c.Reason, true
		}
		if w.GetDeletionTimestamp() != nil {
			ws.Deleting, ws.Finalizers = true, w.GetFinalizers()
		}
		conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			ws.Conditions = append(ws.Conditions, ConditionStatus{Type: str(m["type"]), Status: str(m["status"]), Reason: str(m["reason"]), Message: str(m["message"])})
		}
		r.Whisks = append(r.Whisks, ws)
	}
	r.whisksRead = true
	return r, nil
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// write prints the report as lines (wide: each condition's reason too).
func (r *StatusReport) write(w io.Writer, wide bool) {
	fmt.Fprintf(w, "cluster:  %s (%s) %s\n", r.Cluster.Name, r.Cluster.Type, r.Cluster.Server)
	fmt.Fprintf(w, "from:     %s\n", r.Cluster.Source)
	for _, op := range r.Operator {
		switch {
		case !op.Deployed:
			fmt.Fprintf(w, "operator: not deployed (%s missing; run `nuv operator`)\n", op.Deployment)
		case op.Available:
			fmt.Fprintf(w, "operator: %s Available, image %s\n", op.Deployment, strings.Join(op.Images, ","))
		default:
			fmt.Fprintf(w, "operator: %s not available: %s\n", op.Deployment, op.Reason)
		}
	}
	if !r.operatorRead {
		return
	}
	if r.Host != nil {
		if r.Host.Running {
			fmt.Fprintf(w, "host:     operator pid %d, log %s\n", r.Host.PID, r.Host.Log)
		} else {
			fmt.Fprintln(w, "host:     operator not running (local cluster: `nuv operator` starts it)")
		}
	}
	if !r.whisksRead {
		return
	}
	if len(r.Whisks) == 0 {
		fmt.Fprintln(w, "whisks:   none")
	}
	for _, ws := range r.Whisks {
		ready := "Ready=Unknown"
		if ws.readySeen {
			ready = fmt.Sprintf("Ready=%s (%s)", ws.Ready, ws.Reason)
		}
		extra := ""
		if ws.Deleting {
			extra = fmt.Sprintf(" being deleted, finalizers %v", ws.Finalizers)
		}
		fmt.Fprintf(w, "whisk:    %s/%s %s%s\n", ws.Namespace, ws.Name, ready, extra)
		for _, c := range ws.Conditions {
			if wide {
				fmt.Fprintf(w, "            %-16s %-6s %-20s %s\n", c.Type, c.Status, c.Reason, c.Message)
				continue
			}
			fmt.Fprintf(w, "            %-16s %-6s %s\n", c.Type, c.Status, c.Message)
		}
	}
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

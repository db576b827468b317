// Package statusview is what `nuv status` reports and how it prints it: the report (the cluster
// and which source chose it, the operator's Deployments, the host-run operator of a local cluster,
// every Whisk with its conditions), built from the objects the API returned, and its forms
// (table, wide, json, yaml). nuv's full program (package deploy) and the slim front (package
// front) both build and print the report here, so the two print the same bytes by construction.
// It links nothing heavier than apimachinery's unstructured objects.
package statusview

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kobj"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/proc"
)

// Report is what `nuv status` reports; its JSON/YAML field names are the machine form.
// Nothing in it is secret (no credentials, no Secret data).
type Report struct {
	Cluster  Cluster    `json:"cluster"`
	Operator []Operator `json:"operator"`
	// Host is the host-run operator of a local cluster (nil on other clusters).
	Host   *Host   `json:"host,omitempty"`
	Whisks []Whisk `json:"whisks"`

	// OperatorRead and WhisksRead say what a partial report (a failure half-way) holds.
	OperatorRead bool `json:"-"`
	WhisksRead   bool `json:"-"`
}

// Cluster is the cluster nuv status looked at, and which source chose it.
type Cluster struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Server string `json:"server"`
	Source string `json:"source"`
}

// Operator is one Deployment of the operator's manifests.
type Operator struct {
	// Deployment is "deployment NAMESPACE/NAME".
	Deployment string   `json:"deployment"`
	Deployed   bool     `json:"deployed"`
	Available  bool     `json:"available"`
	Reason     string   `json:"reason,omitempty"` // why it is not available
	Images     []string `json:"images,omitempty"`
}

// Host is the operator process nuv runs on the host for a local cluster.
type Host struct {
	Running bool   `json:"running"`
	PID     int    `json:"pid,omitempty"`
	Log     string `json:"log,omitempty"`
}

// Whisk is one Whisk and its conditions.
type Whisk struct {
	Namespace  string      `json:"namespace"`
	Name       string      `json:"name"`
	Ready      string      `json:"ready"` // True, False or Unknown
	Reason     string      `json:"reason,omitempty"`
	Deleting   bool        `json:"deleting,omitempty"`
	Finalizers []string    `json:"finalizers,omitempty"`
	Conditions []Condition `json:"conditions,omitempty"`

	// ReadySeen says the Whisk has a Ready condition (even one of status Unknown).
	ReadySeen bool `json:"-"`
}

// Condition is one status condition of a Whisk.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// New is the report of a cluster before anything else was read.
func New(c Cluster) *Report {
	return &Report{Cluster: c, Operator: []Operator{}, Whisks: []Whisk{}}
}

// OperatorOf is the line of the operator Deployment ref ("deployment NS/NAME") as the API returned
// it: cur nil means not found.
func OperatorOf(ref string, cur *unstructured.Unstructured) Operator {
	op := Operator{Deployment: ref}
	if cur == nil {
		return op
	}
	op.Deployed = true
	op.Images, _, _ = kobj.ContainerImages(cur)
	op.Available, op.Reason = kobj.DeploymentAvailable(cur)
	if op.Available {
		op.Reason = ""
	}
	return op
}

// WhiskOf is one Whisk as the API returned it.
func WhiskOf(w *unstructured.Unstructured) Whisk {
	ws := Whisk{Namespace: w.GetNamespace(), Name: w.GetName(), Ready: "Unknown"}
	if c := kobj.FindCondition(w, "Ready"); c != nil {
		ws.Ready, ws.Reason, ws.ReadySeen = c.Status, c.Reason, true
	}
	if w.GetDeletionTimestamp() != nil {
		ws.Deleting, ws.Finalizers = true, w.GetFinalizers()
	}
	conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		ws.Conditions = append(ws.Conditions, Condition{Type: str(m["type"]), Status: str(m["status"]), Reason: str(m["reason"]), Message: str(m["message"])})
	}
	return ws
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// HostOperatorName is the name the host-run operator is registered under in a local cluster's
// pids/ directory (so `nuv cluster stop/delete` end it).
const HostOperatorName = "operator"

// HostFiles are the pid file and the log of the operator nuv runs on the host for local cluster
// name: under home's control plane of that name, else under the emulator's whose cluster it backs
// (paths.Locator.FindControlPlane).
func HostFiles(home, name string) (pidFile, logFile string) {
	h, _ := paths.Locator{Home: home}.FindControlPlane(name)
	dir := paths.Locator{Home: h}.ControlPlane(name)
	return filepath.Join(dir, "pids", HostOperatorName+".pid"), filepath.Join(dir, "logs", "operator.log")
}

// HostOf is the host-run operator of local cluster name: running when its registered process is
// alive (the same process: pid and start time).
func HostOf(home, name string) *Host {
	pidFile, logFile := HostFiles(home, name)
	r, err := proc.ReadRecord(pidFile)
	if err != nil || !r.Alive() {
		return &Host{}
	}
	return &Host{Running: true, PID: r.PID, Log: logFile}
}

// Write prints r in the format of out: its lines (wide: with each condition's reason), or the
// machine form.
func Write(w io.Writer, out *cli.OutputOption, r *Report) error {
	if done, err := out.Write(w, r); done {
		return err
	}
	r.Lines(w, out.Wide())
	return nil
}

// Lines prints the report as lines (wide: each condition's reason too); a partial report shows
// what was read.
func (r *Report) Lines(w io.Writer, wide bool) {
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
	if !r.OperatorRead {
		return
	}
	if r.Host != nil {
		if r.Host.Running {
			fmt.Fprintf(w, "host:     operator pid %d, log %s\n", r.Host.PID, r.Host.Log)
		} else {
			fmt.Fprintln(w, "host:     operator not running (local cluster: `nuv operator` starts it)")
		}
	}
	if !r.WhisksRead {
		return
	}
	if len(r.Whisks) == 0 {
		fmt.Fprintln(w, "whisks:   none")
	}
	for _, ws := range r.Whisks {
		ready := "Ready=Unknown"
		if ws.ReadySeen {
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

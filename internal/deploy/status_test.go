package deploy

import (
	"bytes"
	"github.com/nuv-dev/nuv/internal/golden"
	"path/filepath"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/deploy/statusview"
)

// TestStatusForms pins every -o form of `nuv status` with a golden file each: a local cluster
// whose operator runs on the host with one Whisk Ready and one being deleted, and a cluster where
// the operator is not deployed and no Whisk exists.
func TestStatusForms(t *testing.T) {
	ready := &StatusReport{
		Cluster: statusview.Cluster{Name: "dev", Type: "local", Server: "https://127.0.0.1:40001", Source: "the project's selection (.nuv/cluster)"},
		Operator: []statusview.Operator{{Deployment: "deployment nuv-system/whisk-operator", Deployed: true, Available: true,
			Images: []string{"localhost:5001/whisk-operator:dev"}}},
		Host: &statusview.Host{Running: true, PID: 4242, Log: "/home/dev/.nuv/clusters/dev/operator.log"},
		Whisks: []statusview.Whisk{
			{Namespace: "default", Name: "whisk", Ready: "True", Reason: "Ready", ReadySeen: true, Conditions: []statusview.Condition{
				{Type: "Ready", Status: "True", Reason: "Ready", Message: "all components ready"},
				{Type: "RedisReady", Status: "True", Reason: "Available", Message: "redis answers"}}},
			{Namespace: "team-a", Name: "old", Ready: "False", Reason: "Deleting", ReadySeen: true, Deleting: true, Finalizers: []string{"whisk.nuv.dev/cleanup"},
				Conditions: []statusview.Condition{{Type: "Ready", Status: "False", Reason: "Deleting", Message: "waiting for the stores' PVCs"}}},
			{Namespace: "team-b", Name: "new", Ready: "Unknown"},
		},
		OperatorRead: true, WhisksRead: true,
	}
	empty := &StatusReport{
		Cluster:  statusview.Cluster{Name: "kind-1", Type: "kind", Server: "https://127.0.0.1:43210", Source: "KUBECONFIG"},
		Operator: []statusview.Operator{{Deployment: "deployment nuv-system/whisk-operator"}},
		Whisks:   []statusview.Whisk{}, OperatorRead: true, WhisksRead: true,
	}
	for _, format := range cli.ListFormats {
		for name, r := range map[string]*StatusReport{"ready": ready, "empty": empty} {
			var b bytes.Buffer
			o := &cli.OutputOption{Format: format}
			if err := statusview.Write(&b, o, r); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "status", name+"."+format), b.String(), *update)
		}
	}
}

package deploy

import (
	"bytes"
	"github.com/nuv-dev/nuv/internal/golden"
	"path/filepath"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

// TestStatusForms pins every -o form of `nuv status` with a golden file each: a local cluster
// whose operator runs on the host with one Whisk Ready and one being deleted, and a cluster where
// the operator is not deployed and no Whisk exists.
func TestStatusForms(t *testing.T) {
	ready := &StatusReport{
		Cluster: ClusterStatus{Name: "dev", Type: "local", Server: "https://127.0.0.1:40001", Source: "the project's selection (.nuv/cluster)"},
		Operator: []OperatorStatus{{Deployment: "deployment nuv-system/whisk-operator", Deployed: true, Available: true,
			Images: []string{"localhost:5001/whisk-operator:dev"}}},
		Host: &HostStatus{Running: true, PID: 4242, Log: "/home/dev/.nuv/clusters/dev/operator.log"},
		Whisks: []WhiskStatus{
			{Namespace: "default", Name: "whisk", Ready: "True", Reason: "Ready", readySeen: true, Conditions: []ConditionStatus{
				{Type: "Ready", Status: "True", Reason: "Ready", Message: "all components ready"},
				{Type: "RedisReady", Status: "True", Reason: "Available", Message: "redis answers"}}},
			{Namespace: "team-a", Name: "old", Ready: "False", Reason: "Deleting", readySeen: true, Deleting: true, Finalizers: []string{"whisk.nuv.dev/cleanup"},
				Conditions: []ConditionStatus{{Type: "Ready", Status: "False", Reason: "Deleting", Message: "waiting for the stores' PVCs"}}},
			{Namespace: "team-b", Name: "new", Ready: "Unknown"},
		},
		operatorRead: true, whisksRead: true,
	}
	empty := &StatusReport{
		Cluster:  ClusterStatus{Name: "kind-1", Type: "kind", Server: "https://127.0.0.1:43210", Source: "KUBECONFIG"},
		Operator: []OperatorStatus{{Deployment: "deployment nuv-system/whisk-operator"}},
		Whisks:   []WhiskStatus{}, operatorRead: true, whisksRead: true,
	}
	for _, format := range cli.ListFormats {
		for name, r := range map[string]*StatusReport{"ready": ready, "empty": empty} {
			var b bytes.Buffer
			o := &cli.OutputOption{Format: format}
			if err := writeStatusReport(&b, o, r); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "status", name+"."+format), b.String(), *update)
		}
	}
}

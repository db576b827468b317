package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// TestObserveBrokenStateIsReplacedWithAReason: a cluster directory whose create never recorded
// its state, or whose state file is damaged, is observed as broken, and the plan replaces it
// saying why.
func TestObserveBrokenStateIsReplacedWithAReason(t *testing.T) {
	for _, tc := range []struct {
		name, file, running, why string
	}{
		{"never recorded", "", "incomplete", "its create did not finish"},
		{"damaged", "{", "corrupt", "cannot be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			p := Provider{Home: home, Project: t.TempDir()}
			dir := localkube.StateDir(home, "b")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if tc.file != "" {
				os.WriteFile(filepath.Join(dir, localkube.StateFile), []byte(tc.file), 0o600)
			}
			c := &spec.Cluster{Metadata: spec.Metadata{Name: "b"}, Spec: spec.Spec{Provider: "local", ControlPlane: spec.ControlPlane{Count: 1}}}
			actual, err := p.Observe(context.Background(), c, nil)
			if err != nil || len(actual) != 1 {
				t.Fatalf("observe: %v %+v", err, actual)
			}
			if actual[0].Fields["running"] != tc.running || !strings.Contains(actual[0].Broken, tc.why) || !strings.Contains(actual[0].Broken, dir) {
				t.Fatalf("observed %+v, want running=%s and a reason with %q naming %s", actual[0], tc.running, tc.why, dir)
			}
			desired, err := p.Desired(c)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := cluster.Diff("b", "local", desired, actual)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Changes) == 0 || plan.Changes[0].Action != cluster.Replace || plan.Changes[0].Reason != actual[0].Broken {
				t.Fatalf("plan %+v, want a replace of the control plane with the reason", plan.Changes)
			}
		})
	}
}

// TestDurabilityValidation: a spec's durability is fast or safe.
func TestDurabilityValidation(t *testing.T) {
	c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "demo"},
		Spec: spec.Spec{Provider: "local"}}
	Key.Set(c, &Section{Durability: "sometimes"})
	errs := Provider{}.Validate(c)
	if len(errs) != 1 || errs[0].Path != "spec.local.durability" || !strings.Contains(errs[0].Error(), `"sometimes"`) {
		t.Fatalf("validation errors %v, want one naming spec.local.durability and the value", errs)
	}
}

// TestNodeLimitsOfASpec: a spec's node groups, summed, have at most MaxNodes nodes.
func TestNodeLimitsOfASpec(t *testing.T) {
	count := func(n int) *int { return &n }
	c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "big"},
		Spec: spec.Spec{Provider: "local", NodeGroups: []spec.NodeGroup{{Name: "a", Count: count(600)}, {Name: "b", Count: count(401)}}}}
	errs := Provider{}.Validate(c)
	if len(errs) != 1 || errs[0].Path != "spec.nodeGroups" || !strings.Contains(errs[0].Error(), "1001 nodes in all: a local cluster has at most 1000") {
		t.Fatalf("spec of 1001 nodes: %v", errs)
	}
	c.Spec.NodeGroups[1].Count = count(400)
	if errs := (Provider{}).Validate(c); len(errs) != 0 {
		t.Fatalf("spec of 1000 nodes: %v", errs)
	}
}

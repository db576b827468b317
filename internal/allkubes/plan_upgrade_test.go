package allkubes

import (
	"bytes"
	"flag"
	"path/filepath"
	"testing"

	"github.com/nuv-dev/nuv/internal/golden"
)

var updatePlan = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestPlanUpgradeFrom: `all-kubes plan --upgrade-from REF` gives every cell the upgrade axis, in
// each CI form: the cell names REF and its command passes --upgrade-from REF to the all-kubes run
// on the runner (install cell, then upgrade cell, on each of its clusters), pinned by golden files.
// Without the flag a cell says nothing of an upgrade.
func TestPlanUpgradeFrom(t *testing.T) {
	f, home := planFixture(t)
	cells, err := Plan(PlanOptions{Project: f.project, Home: home, Targets: [][]string{{"dtest"}}, Only: []string{"a", "c"},
		UpgradeFrom: "v1.2.0", Inv: f.inv})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "github", "gitlab"} {
		t.Run(format, func(t *testing.T) {
			var b bytes.Buffer
			if err := WritePlan(&b, cells, format); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "plan-upgrade-from."+format+".golden"), b.String(), *updatePlan)
		})
	}
	plain, err := Plan(PlanOptions{Project: f.project, Home: home, Targets: [][]string{{"dtest"}}, Only: []string{"a"}, Inv: f.inv})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WritePlan(&b, plain, "github"); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte("upgrade")) || plain[0].UpgradeFrom != "" {
		t.Fatalf("a plan without --upgrade-from speaks of an upgrade: %s", b.String())
	}
}

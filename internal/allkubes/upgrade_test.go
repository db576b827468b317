package allkubes

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/report"
	"github.com/nuv-dev/nuv/internal/upgrade"
)

// TestUpgradeAxisCells: with UpgradeFrom every cluster gets an install cell and an upgrade cell,
// run one after the other with their own logs; only the upgrade cell's child is given the version
// (even when the caller's environment has it), and the report carries the axis and the verdicts.
func TestUpgradeAxisCells(t *testing.T) {
	f := newFixture(t)
	f.apiServer(t, "a", "eks")
	f.apiServer(t, "b", "")
	var out bytes.Buffer
	o := f.options(&out, "upgrade")
	o.UpgradeFrom = "v1"
	o.Environ = append(o.Environ, upgrade.EnvFrom+"=from-the-shell")
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	r := readReport(t, res.Dir)
	if r.UpgradeFrom != "v1" || len(r.Results) != 4 {
		t.Fatalf("upgradeFrom %q, %d cells, want v1 and 4 (2 clusters x 2 paths)", r.UpgradeFrom, len(r.Results))
	}
	var cells []string
	for _, x := range r.Results {
		cells = append(cells, x.Cluster+"/"+x.Path+"="+string(x.Status))
		log, err := os.ReadFile(filepath.Join(res.Dir, x.Log))
		if err != nil {
			t.Fatal(err)
		}
		want := "from=none"
		if x.Path == report.PathUpgrade {
			want = "from=v1"
			if x.Upgrade == nil || x.Upgrade.From != "v1" || !x.Upgrade.UIDKept || len(x.Steps) != 2 {
				t.Errorf("%s upgrade cell: %+v", x.Cluster, x)
			}
		} else if x.Upgrade != nil {
			t.Errorf("%s install cell has an upgrade: %+v", x.Cluster, x.Upgrade)
		}
		if !strings.Contains(string(log), want) {
			t.Errorf("%s/%s log (%s) lacks %s:\n%s", x.Cluster, x.Path, x.Log, want, log)
		}
	}
	if got := strings.Join(cells, " "); got != "a/install=passed a/upgrade=passed b/install=passed b/upgrade=passed" {
		t.Errorf("cells: %s", got)
	}
	if r.Results[0].Log == r.Results[1].Log {
		t.Errorf("install and upgrade share the log %s", r.Results[0].Log)
	}
	if !strings.Contains(out.String(), "upgrade on a: from v1: uid kept, data kept") {
		t.Errorf("the table lacks the upgrade verdict:\n%s", out.String())
	}
}

// TestUpgradeAxisTargetWithoutUpgrade: a target that does not take the upgrade path fails its
// upgrade cell, saying so, rather than passing as a second install.
func TestUpgradeAxisTargetWithoutUpgrade(t *testing.T) {
	f := newFixture(t)
	f.apiServer(t, "a", "")
	var out bytes.Buffer
	o := f.options(&out, "pass")
	o.UpgradeFrom = "v1"
	res, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "1 of 2 cells did not pass") {
		t.Fatalf("want 1 of 2 cells failed, got %v", err)
	}
	r := readReport(t, res.Dir)
	for _, x := range r.Results {
		switch x.Path {
		case report.PathInstall:
			if x.Status != report.Passed {
				t.Errorf("install cell: %s %s", x.Status, x.Message)
			}
		case report.PathUpgrade:
			if x.Status != report.Failed || !strings.Contains(x.Message, "did not take the upgrade path from v1") {
				t.Errorf("upgrade cell: %s %q", x.Status, x.Message)
			}
		}
	}
}

// TestUpgradeAxisUnreachable: an unreachable cluster's cells are all unreachable, each with a log.
func TestUpgradeAxisUnreachable(t *testing.T) {
	f := newFixture(t)
	f.kubeconfig(t, "down", "https://127.0.0.1:1")
	var out bytes.Buffer
	o := f.options(&out, "upgrade")
	o.UpgradeFrom = "v1"
	res, _ := Run(context.Background(), o)
	if res == nil {
		t.Fatal("no report")
	}
	r := readReport(t, res.Dir)
	if len(r.Results) != 2 {
		t.Fatalf("%d cells", len(r.Results))
	}
	for _, x := range r.Results {
		if x.Status != report.Unreachable {
			t.Errorf("%s/%s: %s", x.Cluster, x.Path, x.Status)
		}
		if _, err := os.Stat(filepath.Join(res.Dir, x.Log)); err != nil {
			t.Errorf("%s/%s: %v", x.Cluster, x.Path, err)
		}
	}
}

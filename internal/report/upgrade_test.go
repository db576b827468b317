package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/report/reporttest"
)

// sampleUpgrade is a matrix with the upgrade axis: two clusters, each with an install and an
// upgrade cell of dtest; on kind1 the upgrade kept the instance and its data, on gke1 the upgraded
// operator recreated the instance (its UID changed) and the document written before was gone.
func sampleUpgrade() *Report {
	t0 := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	prov := &Provenance{Run: "20261202-050000", Machine: "ci-7", Nuv: "0.2.0", Commit: "def456", Started: t0, Ended: t0.Add(90 * time.Second)}
	kind := &Platform{Provider: "kind", DetectedBy: "providerID", Evidence: "kind://", Nodes: 1}
	gke := &Platform{Provider: "gke", Emulated: "gcp", DetectedBy: "label", Evidence: "cloud.google.com/gke-nodepool", Nodes: 2, Simulated: 2}
	steps := func(fail string) []Step {
		var out []Step
		for _, n := range []string{"inventory", "operator", "instance", "assertions", "destroy", "no-leaks"} {
			out = append(out, Step{Name: n, Status: Passed, Seconds: 2})
		}
		return out
	}
	upSteps := func(converged Status, msg string) []Step {
		s := []Step{{Name: "inventory", Status: Passed, Seconds: 0.2}, {Name: "install-from", Status: Passed, Seconds: 20},
			{Name: "seed", Status: Passed, Seconds: 1.5}, {Name: "upgrade", Status: Passed, Seconds: 15},
			{Name: "converged", Status: converged, Seconds: 4, Message: msg}}
		if converged == Passed {
			s = append(s, steps("")[1:]...)
		}
		return s
	}
	return &Report{Schema: Schema, Nuv: "0.2.0", Target: "dtest", UpgradeFrom: "v1", Started: t0, Seconds: 95,
		Provenance: prov,
		Results: []Result{
			{Cluster: "kind1", Path: PathInstall, Type: "kind", ServerVersion: "v1.36.3", Platform: kind, Status: Passed, Attempts: 1,
				Started: t0, Seconds: 30, Steps: steps(""), Log: "logs/kind1.log", Provenance: prov},
			{Cluster: "kind1", Path: PathUpgrade, Type: "kind", ServerVersion: "v1.36.3", Platform: kind, Status: Passed, Attempts: 1,
				Started: t0.Add(30 * time.Second), Seconds: 60, Steps: upSteps(Passed, ""), Log: "logs/kind1-upgrade.log", Provenance: prov,
				Upgrade: &Upgrade{From: "v1", Commit: "0123456789abcdef0123456789abcdef01234567", FromImage: "nuv.dev/whisk-operator:dev-aaa",
					ToImage: "nuv.dev/whisk-operator:dev-bbb", Instance: "default/whisk", UID: "6c1f-uid", UIDKept: true, Data: DataKept,
					Changed: []string{"Deployment default/whisk-controller: label app.kubernetes.io/version=v2 added"}}},
			{Cluster: "gke1", Path: PathInstall, Type: "gke", ServerVersion: "v1.36.3", Platform: gke, Status: Passed, Attempts: 1,
				Started: t0, Seconds: 12, Steps: steps(""), Log: "logs/gke1.log", Provenance: prov},
			{Cluster: "gke1", Path: PathUpgrade, Type: "gke", ServerVersion: "v1.36.3", Platform: gke, Status: Failed, ExitCode: 1, Attempts: 1,
				Started: t0.Add(12 * time.Second), Seconds: 40.5, FailingStep: "converged",
				Message: "Whisk default/whisk was recreated by the upgrade: UID 9a2e-old before, 77b0-new after",
				Steps:   upSteps(Failed, "Whisk default/whisk was recreated by the upgrade: UID 9a2e-old before, 77b0-new after"),
				Log:     "logs/gke1-upgrade.log", Artifacts: "artifacts/gke1-upgrade", Provenance: prov,
				Upgrade: &Upgrade{From: "v1", Commit: "0123456789abcdef0123456789abcdef01234567", FromImage: "nuv.dev/whisk-operator:dev-aaa",
					ToImage: "nuv.dev/whisk-operator:dev-bbb", Instance: "default/whisk", UID: "9a2e-old", UIDKept: false,
					Data: "not checked: the Whisk's pods run on simulated nodes"}},
		},
	}
}

func TestGoldenUpgradeAxis(t *testing.T) {
	for _, tc := range []struct {
		file string
		fn   func(io.Writer, *Report) error
	}{{"upgrade-report.json", WriteJSON}, {"upgrade-junit.xml", WriteJUnit}, {"upgrade-index.html", WriteHTML}, {"upgrade-table.txt", WriteTable}} {
		t.Run(tc.file, func(t *testing.T) {
			r := sampleUpgrade()
			r.Sort()
			var buf bytes.Buffer
			if err := tc.fn(&buf, r); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.file, buf.Bytes())
		})
	}
}

// TestUpgradeAxisModel checks the data model of the second axis: a cell per cluster x path, sorted
// install before upgrade, JUnit suites named and marked by path, and report.json round-tripping it.
func TestUpgradeAxisModel(t *testing.T) {
	r := sampleUpgrade()
	r.Sort()
	var got []string
	for _, res := range r.Results {
		got = append(got, res.Cluster+"/"+PathOf(res))
	}
	if want := "gke1/install gke1/upgrade kind1/install kind1/upgrade"; strings.Join(got, " ") != want {
		t.Errorf("cells %v, want %s", got, want)
	}
	if p := r.Paths(); strings.Join(p, ",") != "install,upgrade" || !r.HasPaths() {
		t.Errorf("paths %v", p)
	}
	if (&Report{Results: []Result{{Cluster: "a"}}}).HasPaths() {
		t.Error("a report without paths has the axis")
	}
	j := JUnit(r)
	if j.Name != "nuv all-kubes dtest --upgrade-from v1" || len(j.Suites) != 4 || j.Suites[1].Name != "gke1 upgrade" {
		t.Fatalf("junit: %q, %d suites, second %q", j.Name, len(j.Suites), j.Suites[1].Name)
	}
	props := map[string]string{}
	for _, p := range j.Suites[1].Properties {
		props[p.Name] = p.Value
	}
	if props["path"] != "upgrade" || props["upgrade.from"] != "v1" || props["upgrade.uid.kept"] != "false" || props["upgrade.commit"] == "" {
		t.Errorf("gke1 upgrade properties: %v", props)
	}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, r); err != nil {
		t.Fatal(err)
	}
	var back JUnitSuites
	if err := xml.Unmarshal(buf.Bytes(), &back); err != nil || back.Failures != 1 {
		t.Errorf("junit.xml: %v, %d failures", err, back.Failures)
	}
	buf.Reset()
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var rj Report
	if err := json.Unmarshal(buf.Bytes(), &rj); err != nil {
		t.Fatal(err)
	}
	if rj.UpgradeFrom != "v1" || rj.Results[3].Path != PathUpgrade || rj.Results[3].Upgrade == nil || !rj.Results[3].Upgrade.UIDKept || rj.Results[3].Upgrade.Data != DataKept {
		t.Errorf("report.json round trip: %+v", rj.Results[3])
	}
}

// TestMergeKeepsPaths: merging a report with the upgrade axis keeps both cells of a cluster (the
// path is part of the cell's key), and the same cell from a newer run supersedes the older.
func TestMergeKeepsPaths(t *testing.T) {
	base := t.TempDir()
	for i, run := range []string{"20261202-050000", "20261202-060000"} {
		r := sampleUpgrade()
		for j := range r.Results {
			p := *r.Results[j].Provenance
			p.Run, p.Ended = run, p.Ended.Add(time.Duration(i)*time.Hour)
			r.Results[j].Provenance = &p
		}
		dir := filepath.Join(base, run)
		writeLogs(t, dir, r)
		if err := WriteDir(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Merge(MergeOptions{Dirs: []string{base}, Out: filepath.Join(t.TempDir(), "merged")})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Results) != 4 {
		t.Fatalf("merged %d cells, want 4 (2 clusters x 2 paths)", len(m.Results))
	}
	for _, res := range m.Results {
		if res.Provenance.Run != "20261202-060000" || len(res.Superseded) != 1 || res.Path == "" {
			t.Errorf("%s/%s: run %s, %d superseded", res.Cluster, res.Path, res.Provenance.Run, len(res.Superseded))
		}
	}
}

func writeLogs(t *testing.T, dir string, r *Report) {
	t.Helper()
	for _, res := range r.Results {
		for _, p := range []string{res.Log, res.Artifacts} {
			if p == "" {
				continue
			}
			f := filepath.Join(dir, p)
			if p == res.Artifacts {
				f = filepath.Join(f, "events.txt")
			}
			os.MkdirAll(filepath.Dir(f), 0o755)
			if err := os.WriteFile(f, []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestIntegrationHTMLUpgradeAxisInChromium renders the upgrade matrix in headless Chromium: the
// path header groups the columns (install, upgrade from v1), each cluster's row holds both paths,
// the upgrade cells say whether the instance kept its UID and data, the failed upgrade cell is red
// and opens its artifacts, and the Upgrade table lists the verdicts. A screenshot is kept.
func TestIntegrationHTMLUpgradeAxisInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	dir := t.TempDir()
	r := sampleUpgrade()
	writeLogs(t, dir, r)
	if err := WriteDir(dir, r); err != nil {
		t.Fatal(err)
	}
	reporttest.CheckUpgradeAxis(t, dir, "report-upgrade-axis.png")
}

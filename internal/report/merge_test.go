package report

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runDir writes a report directory of one run (with its logs) the way all-kubes does.
func runDir(t *testing.T, base, name, machine string, ended time.Time, results ...Result) string {
	t.Helper()
	dir := filepath.Join(base, name)
	rep := &Report{Nuv: "0.1.0", Target: "dtest", Started: ended.Add(-time.Minute), Seconds: 60}
	for _, r := range results {
		r.Log = "logs/" + r.Cluster + ".log"
		if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, r.Log), []byte(machine+" ran "+r.Cluster+"\n"), 0o644)
		if r.Status == Failed {
			r.Artifacts = "artifacts/" + r.Cluster
			os.MkdirAll(filepath.Join(dir, r.Artifacts), 0o755)
			os.WriteFile(filepath.Join(dir, r.Artifacts, "events.txt"), []byte("events of "+r.Cluster), 0o644)
		}
		r.Provenance = &Provenance{Run: name, Machine: machine, Nuv: "0.1.0", Commit: "c0ffee", Started: ended.Add(-time.Minute), Ended: ended}
		rep.Results = append(rep.Results, r)
	}
	if err := WriteDir(dir, rep); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMerge(t *testing.T) {
	base := t.TempDir()
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	a := runDir(t, filepath.Join(base, "job-a"), "20261130-060000", "runner-a", t0, Result{Cluster: "a", Type: "eks", Status: Passed, Attempts: 1})
	b := runDir(t, filepath.Join(base, "job-b"), "20261130-060000", "runner-b", t0.Add(time.Minute), Result{Cluster: "b", Type: "gke", Status: Failed, Attempts: 2})
	// job-c re-ran cluster a later: its cell wins, job-a's is named as superseded.
	c := runDir(t, filepath.Join(base, "job-c"), "20261130-060500", "runner-c", t0.Add(5*time.Minute), Result{Cluster: "a", Type: "eks", Status: Failed, Attempts: 1})
	// A truncated report.json and a directory with only logs: named and skipped.
	trunc := runDir(t, filepath.Join(base, "job-d"), "20261130-061000", "runner-d", t0, Result{Cluster: "d", Status: Passed, Attempts: 1})
	data, _ := os.ReadFile(filepath.Join(trunc, JSONFile))
	os.WriteFile(filepath.Join(trunc, JSONFile), data[:len(data)/2], 0o644)
	logsOnly := filepath.Join(base, "job-e", "20261130-061500")
	os.MkdirAll(filepath.Join(logsOnly, "logs"), 0o755)
	// A schema-1 report (before provenance): merged with what it knows.
	v1 := filepath.Join(base, "job-f", "old")
	os.MkdirAll(v1, 0o755)
	os.WriteFile(filepath.Join(v1, JSONFile), []byte(`{"target":"itest","started":"2026-11-29T06:00:00Z","seconds":3,"partial":false,
		"results":[{"cluster":"a","type":"eks","status":"passed","exitCode":0,"attempts":1,"started":"2026-11-29T06:00:00Z","seconds":3}]}`), 0o644)

	out := filepath.Join(t.TempDir(), "merged")
	rep, err := Merge(MergeOptions{Dirs: []string{base}, Out: out, Nuv: "0.2.0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Merged) != 4 {
		t.Errorf("merged %v, want 4 directories", rep.Merged)
	}
	if len(rep.Skipped) != 2 || rep.Skipped[0].Dir != trunc || !strings.Contains(rep.Skipped[0].Reason, "malformed report.json") ||
		rep.Skipped[1].Dir != logsOnly || !strings.Contains(rep.Skipped[1].Reason, "report.json missing") {
		t.Errorf("skipped: %+v", rep.Skipped)
	}
	var back Report
	data, err = os.ReadFile(filepath.Join(out, JSONFile))
	if err != nil || json.Unmarshal(data, &back) != nil {
		t.Fatalf("merged report.json: %v", err)
	}
	type cell struct{ cluster, target string }
	got := map[cell]Result{}
	for _, r := range back.Results {
		got[cell{r.Cluster, back.TargetOf(r)}] = r
	}
	if len(got) != 3 || back.Target != "dtest, itest" {
		t.Fatalf("cells %v target %q", got, back.Target)
	}
	ad := got[cell{"a", "dtest"}]
	if ad.Status != Failed || ad.Provenance.Machine != "runner-c" || ad.Provenance.Dir != c ||
		len(ad.Superseded) != 1 || ad.Superseded[0].Machine != "runner-a" || ad.Superseded[0].Dir != a {
		t.Errorf("duplicate a/dtest: %+v superseded %+v", ad.Provenance, ad.Superseded)
	}
	bd := got[cell{"b", "dtest"}]
	if bd.Provenance.Machine != "runner-b" || bd.Provenance.Dir != b || bd.Attempts != 2 || len(bd.Superseded) != 0 {
		t.Errorf("b/dtest: %+v", bd)
	}
	ai := got[cell{"a", "itest"}]
	if ai.Provenance == nil || ai.Provenance.Nuv != "unknown" || !strings.Contains(ai.Provenance.Machine, "schema 1") {
		t.Errorf("schema-1 cell provenance: %+v", ai.Provenance)
	}
	for _, r := range []Result{ad, bd} {
		log, err := os.ReadFile(filepath.Join(out, r.Log))
		if err != nil || !strings.Contains(string(log), r.Provenance.Machine+" ran "+r.Cluster) {
			t.Errorf("%s log in the merged report: %v %q", r.Cluster, err, log)
		}
		if ev, err := os.ReadFile(filepath.Join(out, r.Artifacts, "events.txt")); err != nil || string(ev) != "events of "+r.Cluster {
			t.Errorf("%s artifacts in the merged report: %v", r.Cluster, err)
		}
	}
	html, err := os.ReadFile(filepath.Join(out, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<th class="test" data-target="dtest" data-step="">dtest</th>`, `<th class="test" data-target="itest" data-step="">itest</th>`,
		`<div class="superseded">20261130-060000 on runner-a, ended 2026-11-30T06:00:00Z</div>`, "runs/20261130-060500/artifacts/a/"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("merged index.html lacks %s", want)
		}
	}
	var suites JUnitSuites
	data, _ = os.ReadFile(filepath.Join(out, JUnitFile))
	if err := xml.Unmarshal(data, &suites); err != nil || len(suites.Suites) != 3 || suites.Suites[0].Name != "a dtest" {
		t.Errorf("merged junit: %v %+v", err, suites.Suites)
	}

	t.Run("an existing --out is not overwritten", func(t *testing.T) {
		if _, err := Merge(MergeOptions{Dirs: []string{a}, Out: out}); err == nil || !strings.Contains(err.Error(), "not empty") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a newer report schema is refused naming both versions", func(t *testing.T) {
		future := filepath.Join(t.TempDir(), "future")
		os.MkdirAll(future, 0o755)
		os.WriteFile(filepath.Join(future, JSONFile), []byte(`{"schema":99,"nuv":"9.0.0","target":"dtest","results":[]}`), 0o644)
		dest := filepath.Join(t.TempDir(), "m")
		_, err := Merge(MergeOptions{Dirs: []string{a, future}, Out: dest, Nuv: "0.2.0"})
		var inc *IncompatibleError
		if !errors.As(err, &inc) || !strings.Contains(err.Error(), "nuv 9.0.0 (report schema 99)") || !strings.Contains(err.Error(), "this nuv 0.2.0") {
			t.Errorf("err = %v", err)
		}
		if _, err := os.Stat(dest); !os.IsNotExist(err) {
			t.Error("a refused merge wrote its output")
		}
	})
	t.Run("nothing mergeable is an error naming each directory", func(t *testing.T) {
		_, err := Merge(MergeOptions{Dirs: []string{trunc}, Out: filepath.Join(t.TempDir(), "m")})
		if err == nil || !strings.Contains(err.Error(), trunc) {
			t.Errorf("err = %v", err)
		}
	})
}

// TestMergeRefusesSymlinksOutside: a report directory whose log, artifacts or report.json resolve
// through a symbolic link to something outside it is skipped naming why, and nothing from outside
// reaches the merged report; a symbolic link to a report directory elsewhere is not followed.
func TestMergeRefusesSymlinksOutside(t *testing.T) {
	base := t.TempDir()
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	good := runDir(t, filepath.Join(base, "job-a"), "run-a", "runner-a", t0, Result{Cluster: "a", Type: "eks", Status: Passed, Attempts: 1})

	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("the user's secret"), 0o600)
	os.WriteFile(filepath.Join(outside, "b.log"), []byte("the user's secret"), 0o600)
	elsewhere := runDir(t, outside, "run-elsewhere", "runner-x", t0, Result{Cluster: "x", Type: "eks", Status: Passed, Attempts: 1})

	// artifacts/b is a link to a directory outside.
	arts := runDir(t, filepath.Join(base, "job-b"), "run-b", "runner-b", t0, Result{Cluster: "b", Type: "gke", Status: Failed, Attempts: 1})
	os.RemoveAll(filepath.Join(arts, "artifacts", "b"))
	if err := os.Symlink(outside, filepath.Join(arts, "artifacts", "b")); err != nil {
		t.Fatal(err)
	}
	// logs/ is a link to a directory outside holding c.log.
	logs := runDir(t, filepath.Join(base, "job-c"), "run-c", "runner-c", t0, Result{Cluster: "c", Type: "gke", Status: Passed, Attempts: 1})
	os.WriteFile(filepath.Join(outside, "c.log"), []byte("the user's secret"), 0o600)
	os.RemoveAll(filepath.Join(logs, "logs"))
	if err := os.Symlink(outside, filepath.Join(logs, "logs")); err != nil {
		t.Fatal(err)
	}
	// report.json is a link to another run's report outside.
	js := filepath.Join(base, "job-d", "run-d")
	os.MkdirAll(filepath.Join(js, "logs"), 0o755)
	if err := os.Symlink(filepath.Join(elsewhere, JSONFile), filepath.Join(js, JSONFile)); err != nil {
		t.Fatal(err)
	}
	// A link to a whole report directory elsewhere is not walked into.
	if err := os.Symlink(elsewhere, filepath.Join(base, "job-e")); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "merged")
	rep, err := Merge(MergeOptions{Dirs: []string{base}, Out: out, Nuv: "0.2.0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Merged) != 1 || rep.Merged[0] != good {
		t.Errorf("merged %v, want only %s", rep.Merged, good)
	}
	skipped := map[string]string{}
	for _, s := range rep.Skipped {
		skipped[s.Dir] = s.Reason
	}
	for dir, rel := range map[string]string{arts: "artifacts/b", logs: "logs/c.log", js: JSONFile} {
		if r := skipped[dir]; !strings.Contains(r, rel+" resolves to ") || !strings.Contains(r, "outside the report directory") {
			t.Errorf("%s skipped for %q; want %s named as resolving outside", dir, r, rel)
		}
	}
	err = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), "the user's secret") || strings.Contains(string(b), "runner-x") {
			t.Errorf("%s holds what was outside the report directories", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("a report directory given directly with an escaping link is refused", func(t *testing.T) {
		_, err := Merge(MergeOptions{Dirs: []string{arts}, Out: filepath.Join(t.TempDir(), "m")})
		if err == nil || !strings.Contains(err.Error(), "outside the report directory") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestMergeUpgradeCells: the reports of the cells of `all-kubes plan --upgrade-from v1.2.0`, each
// with its clusters' install and upgrade paths, merge into one report with the upgrade axis: every
// cluster's two paths, and the version they upgraded from.
func TestMergeUpgradeCells(t *testing.T) {
	base := t.TempDir()
	t0 := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	for i, cl := range []string{"a", "b"} {
		d := runDir(t, filepath.Join(base, "cell-"+cl), "20261202-060000", "runner-"+cl, t0.Add(time.Duration(i)*time.Minute),
			Result{Cluster: cl, Type: "kind", Status: Passed, Attempts: 1, Path: PathInstall},
			Result{Cluster: cl, Type: "kind", Status: Passed, Attempts: 1, Path: PathUpgrade})
		rep, err := readReportDir(d)
		if err != nil {
			t.Fatal(err)
		}
		rep.UpgradeFrom = "v1.2.0"
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, JSONFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	merged, err := Merge(MergeOptions{Dirs: []string{base}, Out: filepath.Join(t.TempDir(), "merged"), Nuv: "0.2.0"})
	if err != nil {
		t.Fatal(err)
	}
	var cells []string
	for _, r := range merged.Results {
		cells = append(cells, r.Cluster+"/"+PathOf(r))
	}
	if merged.UpgradeFrom != "v1.2.0" || !merged.HasPaths() || strings.Join(cells, ",") != "a/install,a/upgrade,b/install,b/upgrade" {
		t.Fatalf("merged: upgrade from %q, paths %v, cells %v", merged.UpgradeFrom, merged.HasPaths(), cells)
	}
}

package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func sample() *Report {
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	prov := func(retries int) *Provenance {
		return &Provenance{Run: "20261130-060000", Machine: "ci-7", Nuv: "0.1.0", Commit: "abc123", Started: t0, Ended: t0.Add(9 * time.Second), Retries: retries}
	}
	eksLocal := &Platform{Provider: "local", Flavor: "eks", DetectedBy: "providerID", Evidence: "aws://", Nodes: 3, Simulated: 3}
	return &Report{Schema: Schema, Nuv: "0.1.0",
		Target: "itest", Args: []string{"T=whisk"}, Started: t0, Seconds: 12.34, Partial: false,
		Results: []Result{
			{Cluster: "gke1", Type: "gke", ServerVersion: "v1.36.3", Status: Failed, ExitCode: 1, Attempts: 2,
				Started: t0, Seconds: 8.5, FailingStep: "whisk-redis/02-assert",
				Message: "whisk-redis/02-assert: timed out after 30s\n.status.ready: expected true, got false",
				Steps:   []Step{{Name: "whisk-redis", Status: Failed, Seconds: 8, Message: "02-assert: timed out"}, {Name: "crd-validation", Status: Passed, Seconds: 0.4}},
				Log:     "logs/gke1.log", Artifacts: "artifacts/gke1", Provenance: prov(1),
				Platform: &Platform{Provider: "kubeconfig", DetectedBy: "label", Evidence: "cloud.google.com/gke-nodepool", Nodes: 2}},
			{Cluster: "eks1", Type: "eks", ServerVersion: "v1.36.3", Status: Passed, Attempts: 1, Started: t0, Seconds: 6.25,
				Steps: []Step{{Name: "whisk-redis", Status: Passed, Seconds: 5.5}, {Name: "crd-validation", Status: Passed, Seconds: 0.5}},
				Log:   "logs/eks1.log", Platform: eksLocal, Provenance: prov(0)},
			{Cluster: "flaky", Type: "local", ServerVersion: "v1.36.3", Status: Passed, Attempts: 2, Started: t0, Seconds: 3,
				Log: "logs/flaky.log", Provenance: prov(1),
				Platform: &Platform{Provider: "local", DetectedBy: "override", Evidence: "clusters/flaky.type", Nodes: 1, Simulated: 1}},
			{Cluster: "down", Type: "", Status: Unreachable, ExitCode: -1, Attempts: 1, Started: t0, Seconds: 2,
				Message: "dial tcp 127.0.0.1:1: connect: connection refused", Log: "logs/down.log"},
			{Cluster: "slow<&>", Type: "local", Status: TimedOut, ExitCode: -1, Attempts: 1, Started: t0, Seconds: 30,
				Message: "ended after --timeout 30s", Log: "logs/slow.log",
				Platform: &Platform{Provider: "kubeconfig", DetectedBy: "none", Nodes: 0}},
		},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run go test -update)", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		file string
		fn   func(io.Writer, *Report) error
	}{{"report.json", WriteJSON}, {"junit.xml", WriteJUnit}, {"index.html", WriteHTML}, {"table.txt", WriteTable}} {
		t.Run(tc.file, func(t *testing.T) {
			r := sample()
			r.Sort()
			var buf bytes.Buffer
			if err := tc.fn(&buf, r); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.file, buf.Bytes())
		})
	}
}

func TestWriteDirFilesAreValid(t *testing.T) {
	dir := t.TempDir()
	r := sample()
	if err := WriteDir(dir, r); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	var suites JUnitSuites
	if err := xml.Unmarshal(data, &suites); err != nil {
		t.Fatalf("junit.xml does not parse: %v", err)
	}
	if len(suites.Suites) != 5 {
		t.Fatalf("want 5 testsuites, got %d", len(suites.Suites))
	}
	props := map[string]string{}
	for _, p := range suites.Suites[1].Properties { // eks1 after sorting
		props[p.Name] = p.Value
	}
	if suites.Suites[1].Name != "eks1" || props["cluster.type"] != "eks" || props["server.version"] != "v1.36.3" ||
		props["cluster.provider"] != "local" || props["cluster.flavor"] != "eks" || props["nodes.kind"] != "simulated" ||
		props["cluster.type.detected.by"] != "providerID" || props["run.machine"] != "ci-7" || props["run.commit"] != "abc123" {
		t.Errorf("suite eks1 properties: %+v", suites.Suites[1])
	}
	props = map[string]string{}
	for _, p := range suites.Suites[4].Properties { // slow<&> after sorting: a cluster without nodes
		props[p.Name] = p.Value
	}
	if suites.Suites[4].Name != "slow<&>" || props["nodes"] != "0" || props["nodes.kind"] != NodesEmpty {
		t.Errorf("suite slow<&> properties: %+v", suites.Suites[4])
	}
	if suites.Failures != 1 || suites.Errors != 2 || suites.Tests != 7 {
		t.Errorf("totals: tests=%d failures=%d errors=%d", suites.Tests, suites.Failures, suites.Errors)
	}
	var back Report
	data, _ = os.ReadFile(filepath.Join(dir, JSONFile))
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != 5 || back.Results[0].Cluster != "down" || back.Schema != Schema {
		t.Errorf("json results: %+v", back.Results)
	}
	html, _ := os.ReadFile(filepath.Join(dir, HTMLFile))
	for _, name := range []string{"gke1", "eks1", "down", "slow&lt;&amp;&gt;"} {
		if !strings.Contains(string(html), name) {
			t.Errorf("index.html does not name %s", name)
		}
	}
	if strings.Contains(string(html), "slow<&>") {
		t.Error("index.html does not escape cluster names")
	}
}

func TestNodeKind(t *testing.T) {
	for _, tc := range []struct {
		p          *Platform
		kind, desc string
	}{
		{nil, "", "?"},
		{&Platform{Provider: "kind", Nodes: 0}, NodesEmpty, "kind, no nodes"},
		{&Platform{Provider: "kind", Nodes: 0, Simulated: 0}, NodesEmpty, "kind, no nodes"},
		{&Platform{Provider: "kind", Nodes: 1}, NodesReal, "kind, 1 real node"},
		{&Platform{Provider: "local", Flavor: "eks", Nodes: 3, Simulated: 3}, NodesSimulated, "local/eks, 3 simulated nodes"},
		{&Platform{Provider: "kubeconfig", Nodes: 3, Simulated: 1}, NodesMixed, "kubeconfig, 3 mixed nodes"},
	} {
		if got := tc.p.NodeKind(); got != tc.kind {
			t.Errorf("%+v: NodeKind %q, want %q", tc.p, got, tc.kind)
		}
		if got := tc.p.Label(); got != tc.desc {
			t.Errorf("%+v: Label %q, want %q", tc.p, got, tc.desc)
		}
		if tc.p == nil {
			continue
		}
		data, err := json.Marshal(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			NodeKind string `json:"nodeKind"`
			Nodes    int    `json:"nodes"`
		}
		if err := json.Unmarshal(data, &back); err != nil || back.NodeKind != tc.kind || back.Nodes != tc.p.Nodes {
			t.Errorf("%+v: JSON %s, want nodeKind %q", tc.p, data, tc.kind)
		}
	}
}

func TestFailed(t *testing.T) {
	for _, tc := range []struct {
		statuses []Status
		partial  bool
		want     bool
	}{
		{[]Status{Passed, Passed}, false, false},
		{[]Status{Passed, Failed}, false, true},
		{[]Status{Passed, Unreachable}, false, true},
		{[]Status{Passed, Skipped}, false, false},
		{[]Status{Passed}, true, true},
		{nil, false, false},
	} {
		r := &Report{Partial: tc.partial}
		for _, s := range tc.statuses {
			r.Results = append(r.Results, Result{Status: s})
		}
		if got := r.Failed(); got != tc.want {
			t.Errorf("%v partial=%v: Failed()=%v want %v", tc.statuses, tc.partial, got, tc.want)
		}
	}
}

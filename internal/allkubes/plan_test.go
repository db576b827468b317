package allkubes

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"sigs.k8s.io/yaml"
)

// planFixture is a project with four clusters: a, b and d from kubeconfigs, c one of nuv's local
// clusters (its state in NUV_HOME says flavor eks, 2 nodes).
func planFixture(t *testing.T) (*fixture, string) {
	f := newFixture(t)
	for _, n := range []string{"a", "b", "c", "d"} {
		f.kubeconfig(t, n, "https://127.0.0.1:1")
	}
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "clusters", "c"), 0o700)
	state := `{"name":"c","provider":"local","flavor":"eks","nodes":2,"kubeconfig":"` + filepath.Join(f.project, "clusters", "c.kubeconfig") + `"}`
	if err := os.WriteFile(filepath.Join(home, "clusters", "c", "state.json"), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	return f, home
}

var targets2 = [][]string{{"dtest"}, {"itest", "T=whisk redis"}}

func TestPlanFourClustersTwoTargets(t *testing.T) {
	f, home := planFixture(t)
	cells, err := Plan(PlanOptions{Project: f.project, Home: home, Targets: targets2, Inv: f.inv})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 8 {
		t.Fatalf("%d cells, want 8", len(cells))
	}
	byName := map[string]Cell{}
	for _, c := range cells {
		byName[c.Name] = c
	}
	for _, tc := range []struct {
		name, command string
		kc            Kubeconfig
	}{
		{"a-dtest", "nuv all-kubes --only a -- dtest",
			Kubeconfig{Cluster: "a", Source: SourceSecret, File: "clusters/a.kubeconfig", Secret: "NUV_KUBECONFIG_A"}},
		{"c-dtest", "nuv all-kubes --only c -- dtest",
			Kubeconfig{Cluster: "c", Source: SourceLocal, File: "clusters/c.kubeconfig", Setup: "nuv cluster create local --name c --flavor eks --nodes 2"}},
		{"d-itest-T_whisk_redis", "nuv all-kubes --only d -- itest 'T=whisk redis'",
			Kubeconfig{Cluster: "d", Source: SourceSecret, File: "clusters/d.kubeconfig", Secret: "NUV_KUBECONFIG_D"}},
	} {
		c, ok := byName[tc.name]
		if !ok {
			t.Errorf("no cell %s in %v", tc.name, names2(cells))
			continue
		}
		if c.Command != tc.command || len(c.Kubeconfigs) != 1 || c.Kubeconfigs[0] != tc.kc {
			t.Errorf("%s: %q %+v", tc.name, c.Command, c.Kubeconfigs)
		}
	}

	t.Run("github", func(t *testing.T) {
		var buf bytes.Buffer
		if err := WritePlan(&buf, cells, "github"); err != nil {
			t.Fatal(err)
		}
		if strings.Count(buf.String(), "\n") != 1 {
			t.Error("the github matrix is not one line (it goes to $GITHUB_OUTPUT)")
		}
		var m struct{ Include []map[string]string }
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil || len(m.Include) != 8 {
			t.Fatalf("%v: %s", err, buf.String())
		}
		got := m.Include[0]
		if got["name"] != "a-dtest" || got["command"] != "nuv all-kubes --only a -- dtest" || got["kubeconfig_secret"] != "NUV_KUBECONFIG_A" ||
			got["kubeconfig_source"] != "secret" || got["kubeconfig_file"] != "clusters/a.kubeconfig" {
			t.Errorf("first include: %v", got)
		}
	})
	t.Run("gitlab", func(t *testing.T) {
		var buf bytes.Buffer
		if err := WritePlan(&buf, cells, "gitlab"); err != nil {
			t.Fatal(err)
		}
		var m struct {
			Parallel struct{ Matrix []map[string]string }
		}
		if err := yaml.UnmarshalStrict(buf.Bytes(), &m); err != nil || len(m.Parallel.Matrix) != 8 {
			t.Fatalf("%v: %s", err, buf.String())
		}
		c := m.Parallel.Matrix[2] // c-dtest
		if c["NUV_CELL"] != "c-dtest" || c["NUV_SETUP"] != "nuv cluster create local --name c --flavor eks --nodes 2" || c["NUV_KUBECONFIG_SOURCE"] != "local" {
			t.Errorf("c-dtest entry: %v", c)
		}
	})
	t.Run("json", func(t *testing.T) {
		var buf bytes.Buffer
		if err := WritePlan(&buf, cells, "json"); err != nil {
			t.Fatal(err)
		}
		var m struct{ Cells []Cell }
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil || len(m.Cells) != 8 || m.Cells[7].Command != cells[7].Command {
			t.Fatalf("%v: %s", err, buf.String())
		}
	})
}

func names2(cells []Cell) []string {
	var n []string
	for _, c := range cells {
		n = append(n, c.Name)
	}
	return n
}

func TestPlanOptions(t *testing.T) {
	f, home := planFixture(t)
	os.WriteFile(filepath.Join(f.project, "clusters", "a.type"), []byte("eks\n"), 0o644)
	os.WriteFile(filepath.Join(f.project, "clusters", "b.type"), []byte("eks\n"), 0o644)
	for _, tc := range []struct {
		name  string
		o     PlanOptions
		cells []string
		err   string
	}{
		{"only and exclude", PlanOptions{Only: []string{"a", "b"}, Exclude: []string{"b"}}, []string{"a-dtest"}, ""},
		{"an unknown --only names the clusters", PlanOptions{Only: []string{"zz"}}, nil, `unknown cluster "zz"; clusters: a, b, c, d`},
		{"groups of two", PlanOptions{Group: "2"}, []string{"group1-dtest", "group2-dtest"}, ""},
		{"group by type", PlanOptions{Group: "type"}, []string{"eks-dtest", "unknown-dtest"}, ""},
		{"a bad group", PlanOptions{Group: "0"}, nil, `--group "0"`},
		{"clusters named without kubeconfigs", PlanOptions{Clusters: []string{"staging-eks", "x"}}, []string{"staging-eks-dtest", "x-dtest"}, ""},
		{"every kubeconfig from a file", PlanOptions{From: "file", Only: []string{"c"}}, []string{"c-dtest"}, ""},
		{"a bad source", PlanOptions{From: "vault"}, nil, `--kubeconfig-from "vault"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Project, o.Home, o.Inv, o.Targets = f.project, home, KubeInventory{Getenv: func(string) string { return "" }}, [][]string{{"dtest"}}
			cells, err := Plan(o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := names2(cells)
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(tc.cells, " ") {
				t.Errorf("cells %v, want %v", got, tc.cells)
			}
		})
	}
	cells, _ := Plan(PlanOptions{Project: f.project, Home: home, Targets: [][]string{{"dtest"}}, Group: "type", Inv: KubeInventory{Getenv: func(string) string { return "" }}})
	if cells[0].Command != "nuv all-kubes --only a,b -- dtest" || cells[0].Kubeconfigs[1].Secret != "NUV_KUBECONFIG_B" {
		t.Errorf("eks group: %+v", cells[0])
	}
	var buf bytes.Buffer
	WritePlan(&buf, cells, "github")
	if !strings.Contains(buf.String(), `"kubeconfig_secrets":"clusters/a.kubeconfig=NUV_KUBECONFIG_A clusters/b.kubeconfig=NUV_KUBECONFIG_B"`) ||
		!strings.Contains(buf.String(), `"kubeconfig_source":"local,secret"`) {
		t.Errorf("grouped github cells: %s", buf.String())
	}
	if k := (PlanOptions{From: "file", Home: home}).source("c"); k.Source != SourceFile || k.Setup != "" || k.Secret != "" {
		t.Errorf("--kubeconfig-from file: %+v", k)
	}
}

func TestKubeconfigSecret(t *testing.T) {
	for in, want := range map[string]string{"a": "NUV_KUBECONFIG_A", "staging-eks.1": "NUV_KUBECONFIG_STAGING_EKS_1"} {
		if got := KubeconfigSecret(in); got != want {
			t.Errorf("%s: %s want %s", in, got, want)
		}
	}
}

// TestGitHubExample lints examples/github/all-kubes.yml with actionlint and checks that every
// matrix.<key> it reads is a key of the plan's github cells.
func TestGitHubExample(t *testing.T) {
	path := filepath.Join(repoRoot(t), "examples", "github", "all-kubes.yml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	l, err := actionlint.NewLinter(&log, &actionlint.LinterOptions{WorkingDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("actionlint: %s:%d:%d: %s [%s]", path, e.Line, e.Column, e.Message, e.Kind)
	}
	var cell map[string]any
	b, _ := json.Marshal(githubCell{})
	json.Unmarshal(b, &cell)
	used := regexp.MustCompile(`matrix\.([a-z_]+)`).FindAllStringSubmatch(string(data), -1)
	if len(used) == 0 {
		t.Fatal("the example reads nothing of the matrix")
	}
	for _, m := range used {
		if _, ok := cell[m[1]]; !ok {
			t.Errorf("the example reads matrix.%s, which plan -o github does not give", m[1])
		}
	}
	if !strings.Contains(string(data), "nuv all-kubes plan -o github") || !strings.Contains(string(data), "nuv report merge") {
		t.Error("the example does not plan with nuv or merge with nuv report merge")
	}
}

// TestGitLabExample builds the child pipeline the way the example's plan job does (cell.yml plus
// the indented plan) and checks both pipelines by parsing: stages exist, the trigger includes the
// plan job's artifact, the cell job gets one matrix entry per cell with string values (at most
// GitLab's 200), every $NUV_ variable the cell script reads is in every entry, and merge needs
// the cells.
func TestGitLabExample(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "examples", "gitlab")
	parentData, err := os.ReadFile(filepath.Join(dir, ".gitlab-ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var parent map[string]any
	if err := yaml.Unmarshal(parentData, &parent); err != nil {
		t.Fatalf(".gitlab-ci.yml: %v", err)
	}
	checkStages(t, ".gitlab-ci.yml", parent)
	plan := parent["plan"].(map[string]any)
	script := strings.Join(toStrings(plan["script"]), "\n")
	if !strings.Contains(script, "nuv all-kubes plan -o gitlab") || !strings.Contains(script, "sed 's/^/  /' >> child.yml") ||
		!strings.Contains(script, "cp examples/gitlab/cell.yml child.yml") {
		t.Errorf("plan job script: %s", script)
	}
	arts := toStrings(plan["artifacts"].(map[string]any)["paths"])
	inc := parent["cells"].(map[string]any)["trigger"].(map[string]any)["include"].([]any)[0].(map[string]any)
	if inc["job"] != "plan" || len(arts) != 1 || inc["artifact"] != arts[0] {
		t.Errorf("trigger includes %v, plan keeps %v", inc, arts)
	}

	f, home := planFixture(t)
	cells, err := Plan(PlanOptions{Project: f.project, Home: home, Targets: targets2, Inv: f.inv})
	if err != nil {
		t.Fatal(err)
	}
	template, err := os.ReadFile(filepath.Join(dir, "cell.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var fragment bytes.Buffer
	if err := WritePlan(&fragment, cells, "gitlab"); err != nil {
		t.Fatal(err)
	}
	child := append([]byte(nil), template...)
	for _, line := range strings.SplitAfter(fragment.String(), "\n") {
		if line != "" {
			child = append(child, "  "+line...)
		}
	}
	var pipeline map[string]any
	if err := yaml.Unmarshal(child, &pipeline); err != nil {
		t.Fatalf("child pipeline: %v\n%s", err, child)
	}
	checkStages(t, "child pipeline", pipeline)
	cell := pipeline["cell"].(map[string]any)
	matrix := cell["parallel"].(map[string]any)["matrix"].([]any)
	if len(matrix) != len(cells) || len(matrix) > gitlabMaxJobs {
		t.Fatalf("%d matrix entries for %d cells", len(matrix), len(cells))
	}
	cellScript := strings.Join(toStrings(cell["script"]), "\n") + strings.Join(toStrings(cell["after_script"]), "\n")
	vars := regexp.MustCompile(`\$\{?(NUV_[A-Z_]+)`).FindAllStringSubmatch(cellScript, -1)
	for i, e := range matrix {
		entry := e.(map[string]any)
		for k, v := range entry {
			if _, ok := v.(string); !ok {
				t.Errorf("entry %d: %s is %T, GitLab wants strings", i, k, v)
			}
		}
		for _, v := range vars {
			if _, ok := entry[v[1]]; !ok && v[1] != "NUV_VERSION" {
				t.Errorf("entry %d lacks %s, which the cell script reads", i, v[1])
			}
		}
	}
	needs := pipeline["merge"].(map[string]any)["needs"].([]any)
	if needs[0].(map[string]any)["job"] != "cell" || !strings.Contains(strings.Join(toStrings(pipeline["merge"].(map[string]any)["script"]), " "), "nuv report merge reports") {
		t.Errorf("merge job: %v", pipeline["merge"])
	}
}

func checkStages(t *testing.T, name string, p map[string]any) {
	t.Helper()
	stages := map[string]bool{}
	for _, s := range toStrings(p["stages"]) {
		stages[s] = true
	}
	for job, v := range p {
		m, ok := v.(map[string]any)
		if !ok || strings.HasPrefix(job, ".") || job == "variables" {
			continue
		}
		if s, _ := m["stage"].(string); !stages[s] {
			t.Errorf("%s: job %s has stage %q, not one of %v", name, job, s, p["stages"])
		}
	}
}

func toStrings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

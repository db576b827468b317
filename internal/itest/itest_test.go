package itest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestParseStepFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
		err  bool
		n    int
		op   Op
	}{
		{"01-apply.yaml", true, false, 1, OpApply},
		{"02-assert-ready.yaml", true, false, 2, OpAssert},
		{"10-error-no-service.yml", true, false, 10, OpError},
		{"03-delete.yaml", true, false, 3, OpDelete},
		{"04-reject-bad-spec.yaml", true, false, 4, OpReject},
		{"05-command-kubectl.yaml", true, false, 5, OpCommand},
		{"06-frobnicate.yaml", false, true, 0, ""},
		{"README.md", false, false, 0, ""},
		{"whisk.yaml", false, false, 0, ""},
		{"01-apply.json", false, false, 0, ""},
	} {
		sf, ok, err := ParseStepFile(tc.name)
		if ok != tc.ok || (err != nil) != tc.err {
			t.Errorf("%s: ok=%v err=%v", tc.name, ok, err)
			continue
		}
		if ok && (sf.N != tc.n || sf.Op != tc.op) {
			t.Errorf("%s: %+v", tc.name, sf)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDiscoverOverlaysTheTypeDirectory(t *testing.T) {
	p := t.TempDir()
	write(t, filepath.Join(p, "tests/itest/alpha/01-apply.yaml"), "x")
	write(t, filepath.Join(p, "tests/itest/alpha/02-assert.yaml"), "common")
	write(t, filepath.Join(p, "tests/itest/alpha/notes.md"), "ignored")
	write(t, filepath.Join(p, "tests/itest/beta/01-apply.yaml"), "x")
	write(t, filepath.Join(p, "tests/eks/itest/alpha/02-assert.yaml"), "eks")
	write(t, filepath.Join(p, "tests/eks/itest/alpha/03-error.yaml"), "eks")
	write(t, filepath.Join(p, "tests/eks/itest/gamma/01-command.yaml"), "eks only")

	show := func(ts []Test) string {
		var parts []string
		for _, tt := range ts {
			var steps []string
			for _, s := range tt.Steps {
				rel, _ := filepath.Rel(p, s.Path)
				steps = append(steps, rel)
			}
			parts = append(parts, tt.Name+"="+strings.Join(steps, ","))
		}
		return strings.Join(parts, " ")
	}
	for _, tc := range []struct {
		typ, prefix, want string
	}{
		{"local", "", "alpha=tests/itest/alpha/01-apply.yaml,tests/itest/alpha/02-assert.yaml beta=tests/itest/beta/01-apply.yaml"},
		{"eks", "", "alpha=tests/itest/alpha/01-apply.yaml,tests/eks/itest/alpha/02-assert.yaml,tests/eks/itest/alpha/03-error.yaml beta=tests/itest/beta/01-apply.yaml gamma=tests/eks/itest/gamma/01-command.yaml"},
		{"eks", "g", "gamma=tests/eks/itest/gamma/01-command.yaml"},
		{"local", "zzz", ""},
	} {
		ts, err := Discover(SuiteDirs(p, tc.typ), tc.prefix)
		if err != nil {
			t.Fatal(err)
		}
		if got := show(ts); got != tc.want {
			t.Errorf("%s T=%s:\n got %s\nwant %s", tc.typ, tc.prefix, got, tc.want)
		}
	}
	write(t, filepath.Join(p, "tests/itest/alpha/04-bogus.yaml"), "x")
	if _, err := Discover(SuiteDirs(p, ""), ""); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown op not reported: %v", err)
	}
}

func TestMatch(t *testing.T) {
	y := func(s string) any {
		var v any
		if err := yaml.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	actual := y(`
metadata: {name: w, labels: {a: "1", b: "2"}}
spec: {replicas: 3, redis: {enabled: true}}
status:
  conditions:
  - {type: RedisReady, status: "True"}
  - {type: Ready, status: "False", reason: Waiting}
`)
	// Live objects decode integers as int64; make sure mixed number types compare by value.
	actual.(map[string]any)["spec"].(map[string]any)["replicas"] = int64(3)
	for _, tc := range []struct {
		exp  string
		want string // "" = match, else a substring of the error
	}{
		{`{spec: {replicas: 3}}`, ""},
		{`{metadata: {labels: {a: "1"}}}`, ""},
		{`{status: {conditions: [{type: Ready, status: "False"}]}}`, ""},
		{`{status: {conditions: [{type: Ready}, {type: RedisReady, status: "True"}]}}`, ""},
		{`{status: {conditions: [{type: Ready, status: "True"}]}}`, ".status.conditions[0]: no element matches"},
		{`{spec: {replicas: 2}}`, ".spec.replicas: expected 2, got 3"},
		{`{spec: {static: {enabled: true}}}`, ".spec.static: missing"},
		{`{spec: {redis: {enabled: "true"}}}`, `.spec.redis.enabled: expected "true", got true`},
		{`{spec: [1]}`, ".spec: expected a list"},
		{`{metadata: {labels: {c: "3"}}}`, ".metadata.labels.c: missing"},
	} {
		err := Match(y(tc.exp), actual)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: unexpected mismatch: %v", tc.exp, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want error containing %q", tc.exp, err, tc.want)
		}
	}
}

func TestExpand(t *testing.T) {
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{"NAMESPACE": "itest-a-1", "KUBE": "eks"}[k]
		return v, ok
	}
	got, err := Expand([]byte("ns: ${NAMESPACE} kube: ${KUBE} $HOME"), lookup)
	if err != nil || string(got) != "ns: itest-a-1 kube: eks $HOME" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := Expand([]byte("x: ${NOPE}"), lookup); err == nil || !strings.Contains(err.Error(), "NOPE") {
		t.Errorf("unset variable not named: %v", err)
	}
}

func TestParseStep(t *testing.T) {
	for _, tc := range []struct {
		file, body string
		want       string // "" = ok, else error substring
		objects    int
	}{
		{"01-apply.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n", "", 2},
		{"01-apply.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {labels: {a: b}}\n", "metadata.name is required", 0},
		{"02-assert.yaml", "apiVersion: itest.nuv.dev/v1\nkind: Step\ntimeout: 5s\n---\napiVersion: v1\nkind: Pod\nmetadata: {labels: {a: b}}\n", "", 1},
		{"02-assert.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {}\n", "metadata.name or metadata.labels", 0},
		{"02-assert.yaml", "apiVersion: itest.nuv.dev/v1\nkind: Step\ntimeout: soon\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "positive duration", 0},
		{"03-command.yaml", "apiVersion: itest.nuv.dev/v1\nkind: Step\nscript: kubectl get ns\n", "", 0},
		{"03-command.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "needs a Step document with a script", 0},
		{"04-delete.yaml", "", "needs at least one object", 0},
		{"05-apply.yaml", "apiVersion: itest.nuv.dev/v1\nkind: Step\nscript: ls\n", "only for command steps", 0},
		{"06-apply.yaml", "kind: [", "step 06-apply:1: did not find expected node content (at the end of the file)", 0},
		{"07-apply.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n data: {}\n", "step 07-apply:9: did not find expected key", 0},
		{"08-assert.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\n# options\napiVersion: itest.nuv.dev/v1\nkind: Step\ntimout: 5s\n", "step 08-assert:8: timout: unknown field (valid: apiVersion, kind, metadata, timeout, script, expectFail, errorContains)", 0},
		{"09-apply.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n- a list\n", "step 09-apply:5: document 2: want a Kubernetes object or a Step document (a mapping), got [\"a list\"]", 0},
	} {
		sf, _, _ := ParseStepFile(tc.file)
		st, err := ParseStep(sf, []byte(tc.body))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.file, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.file, err, tc.want)
		case err == nil && len(st.Objects) != tc.objects:
			t.Errorf("%s: %d objects", tc.file, len(st.Objects))
		}
	}
}

func TestNamespaceFor(t *testing.T) {
	a, b := namespaceFor("Whisk_Redis"), namespaceFor("Whisk_Redis")
	if a == b || !strings.HasPrefix(a, "itest-whisk-redis-") || len(namespaceFor(strings.Repeat("x", 100))) > 63 {
		t.Errorf("namespaces %s %s", a, b)
	}
}

// TestRepositorySuitesParse loads every step of the repository's own suites (tests/itest and the
// per-type overlays), so a broken suite fails here rather than on a cluster.
func TestRepositorySuitesParse(t *testing.T) {
	project, _ := filepath.Abs("../..")
	dirs := []string{filepath.Join(project, "tests", "itest")}
	types, _ := filepath.Glob(filepath.Join(project, "tests", "*", "itest"))
	dirs = append(dirs, types...)
	tests, err := Discover(dirs, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) < 3 {
		t.Fatalf("want the repository's suites, found %d tests", len(tests))
	}
	lookup := func(k string) (string, bool) { return "x", true }
	for _, tt := range tests {
		for _, sf := range tt.Steps {
			if _, err := LoadStep(sf, lookup); err != nil {
				t.Errorf("%s: %v", tt.Name, err)
			}
		}
	}
}

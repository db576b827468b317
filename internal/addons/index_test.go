package addons

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

const head = "apiVersion: nuv.dev/v1alpha1\nkind: Addons\nspec:\n  addons:\n"

func TestLoadRefusesBadIndexes(t *testing.T) {
	tests := []struct {
		name, index string
		want        []string // substrings of the error
	}{
		{"unknown field", head + "  - name: a\n    version: '1'\n    source: {path: m}\n    colour: red\n",
			[]string{"index.yaml:8: spec.addons[0].colour: unknown field (valid: name, namespace, version, description, selector, kubernetesVersion, source, dependsOn, prune, wait)"}},
		{"unknown source field", head + "  - name: a\n    version: '1'\n    source:\n      chart: {repo: oci://r, name: a, version: 1.0.0, valuez: {}}\n",
			[]string{"index.yaml:8: spec.addons[0].source.chart.valuez: unknown field (valid: repo, name, version, values)"}},
		{"misspelt field of the second add-on", head + "  - {name: a, version: '1', source: {path: m}}\n  - name: b\n    version: '1'\n    source: {path: m}\n    dependOn: [a]\n",
			[]string{"index.yaml:9: spec.addons[1].dependOn: unknown field (valid: name, namespace, version, description, selector, kubernetesVersion, source, dependsOn, prune, wait)"}},
		{"list where a string goes", head + "  - name: [a, b]\n    version: '1'\n    source: {path: m}\n",
			[]string{"index.yaml:5: spec.addons[0].name: want a string, got a list"}},
		{"string where a list goes", head + "  - {name: a, version: '1', source: {path: m}, dependsOn: b}\n",
			[]string{`index.yaml:5: spec.addons[0].dependsOn: want a list, got "b"`}},
		{"syntax error at its line", head + "  - name: a\n    version: '1'\n   source: {path: m}\n",
			[]string{"index.yaml:7: did not find expected key"}},
		{"missing include", "apiVersion: nuv.dev/v1alpha1\nkind: Addons\nspec:\n  include:\n  - more.yaml\n  - gone.yaml\n",
			[]string{"index.yaml:6: spec.include[1]: included index ", "gone.yaml does not exist"}},
		{"dangling dependency", head + "  - name: a\n    version: '1'\n    source: {path: m}\n  - name: b\n    version: '1'\n    source: {path: m}\n    dependsOn: [a, nope]\n",
			[]string{"index.yaml:8:", `add-on "b" depends on "nope", which no add-on of the index defines`}},
		{"cycle", head + "  - {name: a, version: '1', source: {path: m}, dependsOn: [c]}\n  - {name: b, version: '1', source: {path: m}, dependsOn: [a]}\n  - {name: c, version: '1', source: {path: m}, dependsOn: [b]}\n",
			[]string{"index.yaml:5:", "dependency cycle: a -> c -> b -> a"}},
		{"two sources", head + "  - {name: a, version: '1', source: {path: m, kustomize: k}}\n",
			[]string{"index.yaml:5:", "exactly one of path, kustomize, chart, url (found 2)"}},
		{"url without digest", head + "  - {name: a, version: '1', source: {url: 'https://example.com/a.yaml'}}\n",
			[]string{"index.yaml:5:", "source.url needs source.digest"}},
		{"chart range", head + "  - {name: a, version: '1', source: {chart: {repo: 'oci://r/c', name: a, version: '^1.0'}}}\n",
			[]string{"must be one exact version (pinned)"}},
		{"bad digest", head + "  - {name: a, version: '1', source: {url: 'https://e/a', digest: 'md5:00'}}\n",
			[]string{`source.digest "md5:00" must be sha256`}},
		{"duplicate", head + "  - {name: a, version: '1', source: {path: m}}\n  - {name: a, version: '2', source: {path: m}}\n",
			[]string{"index.yaml:6:", `add-on "a" is defined twice (also at`, "index.yaml:5)"}},
		{"bad type", head + "  - {name: a, version: '1', source: {path: m}, selector: {types: [openshift]}}\n",
			[]string{`unknown cluster type "openshift"`}},
		{"bad range", head + "  - {name: a, version: '1', source: {path: m}, kubernetesVersion: 'about 1.30'}\n",
			[]string{`kubernetesVersion "about 1.30"`}},
		{"wrong kind", "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nspec: {}\n",
			[]string{`index.yaml:2: kind: want Addons, got "Cluster"`}},
		{"stack lists unknown", head + "  - {name: a, version: '1', source: {path: m}}\n  stacks:\n  - {name: s, addons: [a, zz]}\n",
			[]string{"index.yaml:7:", `stack "s" lists "zz"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "index.yaml")
			if err := os.WriteFile(p, []byte(tc.index), 0o644); err != nil {
				t.Fatal(err)
			}
			// an include that exists, for the missing-include case
			if err := os.WriteFile(filepath.Join(dir, "more.yaml"), []byte("apiVersion: nuv.dev/v1alpha1\nkind: Addons\nspec: {}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(p)
			if err == nil {
				t.Fatalf("Load accepted:\n%s", tc.index)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadIncludesStacksAndSelection(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"index.yaml": head + "  - {name: app, version: '1', source: {path: m}, dependsOn: [base]}\n  include: [stacks/obs.yaml]\n",
		"stacks/obs.yaml": head + "  - {name: base, version: '2', source: {path: m}}\n" +
			"  - {name: metrics, version: '3', source: {chart: {repo: 'oci://r/c', name: metrics, version: 1.2.3, values: {a: 1, b: {c: 2}}}}, dependsOn: [base]}\n" +
			"  stacks:\n  - name: observability\n    addons: [metrics]\n    values: {b: {c: 5}}\n",
	})
	idx, err := Load(filepath.Join(dir, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	names := func(as []*Addon) string {
		var s []string
		for _, a := range as {
			s = append(s, a.Name)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		only   []string
		stacks []string
		want   string
	}{
		{nil, nil, "base,app"},
		{nil, []string{"observability"}, "base,metrics"},
		{[]string{"metrics", "app"}, nil, "base,metrics,app"},
		{[]string{"app"}, []string{"observability"}, "base,metrics,app"},
	} {
		sel, err := idx.Select(tc.only, tc.stacks)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(sel); got != tc.want {
			t.Errorf("Select(%v, %v) = %s, want %s", tc.only, tc.stacks, got, tc.want)
		}
	}
	if _, err := idx.Select(nil, []string{"nope"}); err == nil || !strings.Contains(err.Error(), "stacks: observability") {
		t.Errorf("unknown stack: %v", err)
	}
	m := idx.Get("metrics")
	if m.StackValues["b"].(map[string]any)["c"] != 5 || m.File != filepath.Join(dir, "stacks", "obs.yaml") || m.Line != 6 {
		t.Errorf("metrics: stack values %v, at %s", m.StackValues, m.at())
	}
}

func TestPlanPrintGolden(t *testing.T) {
	p := &Plan{Cluster: "dev", Type: "local", Version: "v1.36.3", Steps: []Step{
		{Name: "crds", Action: Unchanged, From: "1.0.0", To: "1.0.0"},
		{Name: "kust", Action: Upgrade, From: "1.0.0", To: "1.1.0"},
		{Name: "web", Action: Upgrade, From: "1.0.0", To: "1.0.0", Reason: "same version, manifests changed"},
		{Name: "cert-manager", Action: Install, To: "v1.16.2"},
		{Name: "eks-only", Action: Skipped, To: "0.1.0", Reason: "selector: cluster type local is not one of eks"},
		{Name: "old", Action: Remove, From: "0.9.0", Reason: "no longer in the index"},
	}}
	var b bytes.Buffer
	p.Print(&b)
	golden(t, "plan.golden", b.Bytes())
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n--- got\n%s--- want\n%s", p, got, want)
	}
}

// TestShippedIndex: the repository's addons/index.yaml and its stacks load, and every shipped
// chart is pinned to one version.
func TestShippedIndex(t *testing.T) {
	idx, err := Load(filepath.Join("..", "..", DefaultIndex))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"observability", "ingress", "cert-manager"} {
		if idx.Stack(s) == nil {
			t.Errorf("stack %s is not shipped", s)
		}
	}
	if sel, _ := idx.Select(nil, nil); len(sel) != 0 {
		t.Errorf("the shipped index installs %d add-ons by default; stacks are on request", len(sel))
	}
	for _, a := range idx.Addons {
		if a.Source.Chart == nil || a.Source.Chart.Version == "" {
			t.Errorf("%s: shipped add-ons are charts pinned by version", a.Name)
		}
	}
}

func TestPrintListAndStatusGolden(t *testing.T) {
	idx, err := Load(filepath.Join("testdata", "list", "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	PrintList(&b, idx)
	golden(t, "list.golden", []byte(strings.ReplaceAll(b.String(), filepath.Dir(idx.File), "DIR")))

	b.Reset()
	PrintStatus(&b, "dev", []AddonStatus{
		{Record: Record{Name: "crds", Version: "1.0.0", Hash: "sha256:0123456789abcdef0123", Inventory: make([]ObjRef, 2)}, Indexed: "1.0.0", Ready: true},
		{Record: Record{Name: "web", Version: "1.1.0", Hash: "sha256:fedcba9876543210fedc", Inventory: make([]ObjRef, 3)}, Indexed: "1.2.0",
			NotReady: "deployment web-system/web: 0/2 replicas available"},
		{Record: Record{Name: "old", Version: "0.1", Hash: "sha256:00", Inventory: make([]ObjRef, 1)}, Ready: true, Missing: 1},
	})
	PrintStatus(&b, "empty", nil)
	golden(t, "status.golden", b.Bytes())
}

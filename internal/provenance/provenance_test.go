package provenance

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var goFiles = flag.Bool("provenance.go", false, "compare the repository's Go files too (slow: every .go file of every module)")

func TestRequirements(t *testing.T) {
	gomod := `module example.com/m

go 1.26

replace (
	k8s.io/api => k8s.io/api v0.36.3
	example.com/local => ../local
)

replace example.com/pinned v1.0.0 => example.com/fork v1.0.1

require (
	k8s.io/api v0.0.0 // pinned by replace
	example.com/Upper v1.2.3 // indirect
	example.com/local v0.1.0
	example.com/pinned v1.0.0
)

require example.com/single v0.0.1
`
	got, err := Requirements([]byte(gomod))
	if err != nil {
		t.Fatal(err)
	}
	want := []Module{{"example.com/Upper", "v1.2.3"}, {"example.com/fork", "v1.0.1"}, {"example.com/single", "v0.0.1"}, {"k8s.io/api", "v0.36.3"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := Requirements([]byte("require (\n\tonly-a-path\n)\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a require without version: %v", err)
	}
	if d := Dir("/c", Module{"github.com/Azure/go-ansiterm", "v1.0.0"}); d != filepath.FromSlash("/c/github.com/!azure/go-ansiterm@v1.0.0") {
		t.Errorf("Dir: %s", d)
	}
}

func TestLinesNormalise(t *testing.T) {
	a := Lines([]byte("  name: \"a-long-enough-value\"\nshort\n\tkey: value-that-counts,\n  third:   line of the run\nfourth line of the file\n"))
	b := Lines([]byte("name: a-long-enough-value\n'key: value-that-counts'\nthird: line of the run\n}\nfourth line of the file"))
	if len(a) != 2 || !reflect.DeepEqual(a, b) {
		t.Errorf("shingles %v and %v should be the same two", a, b)
	}
}

// TestNormalise holds normalise to its definition: quotes dropped, surrounding blanks and one
// trailing comma trimmed, inner blanks squeezed to one space (Unicode blanks included).
func TestNormalise(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"   ", ""},
		{"  name: \"value\"  ", "name: value"},
		{"\tkey:\t 'x' ,", "key: x"},
		{"a,,", "a,"},
		{",", ""},
		{" , ", ""},
		{"a , ,", "a ,"},
		{"`cmd`   --flag\r", "cmd --flag"},
		{"\u00a0unicode\u2003blank\u00a0,", "unicode blank"},
		{"caf\u00e9  \"au lait\",", "caf\u00e9 au lait"},
	} {
		if got := string(normalise([]byte(tc.in), nil)); got != tc.want {
			t.Errorf("normalise(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// BenchmarkLines measures the shingling of a YAML-like file, what indexing the module cache
// spends its time on.
func BenchmarkLines(b *testing.B) {
	data := []byte(strings.Repeat("  - name: \"some-container-name\"\n    image: registry.example/app:v1.2.3,\n    args: ['--flag', '--other']\n}\n", 200))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		Lines(data)
	}
}

func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s line number %d of the file\n", prefix, i)
	}
	return b.String()
}

// reorder interleaves a file's lines (every other one first): each line stays, no run does.
func reorder(s string) string {
	lines := strings.SplitAfter(s, "\n")
	var a, b []string
	for i, l := range lines {
		if i%2 == 0 {
			a = append(a, l)
		} else {
			b = append(b, l)
		}
	}
	return strings.Join(append(a, b...), "")
}

func TestCompare(t *testing.T) {
	x := NewIndex()
	x.Add("mod/a.yaml", []byte(numbered("alpha", 40)))
	x.Add("mod/b.yaml", []byte(numbered("beta", 40)))
	boiler := "apiVersion: boilerplate/v1\nmetadata name: boilerplate\nspec template: boilerplate\n"
	for i := 0; i <= Common; i++ {
		x.Add(fmt.Sprintf("mod/boiler%d.yaml", i), []byte(boiler))
	}
	edited := "# our header, with attribution missing\n" + strings.Replace(numbered("alpha", 30), "alpha line number 3 of", "alpha line number 3, edited, of", 1)
	for _, tc := range []struct {
		name   string
		data   string
		copied bool
		source string
	}{
		{"verbatim", numbered("alpha", 40), true, "mod/a.yaml (38)"},
		{"part of one, edited, with a header", edited, true, "mod/a.yaml (25)"},
		{"two concatenated and re-indented", strings.ReplaceAll(numbered("alpha", 10)+numbered("beta", 10), "\n", "\n    "), true, "mod/a.yaml (8)"},
		{"own file", numbered("ours", 40), false, ""},
		{"own file sharing boilerplate only", strings.Repeat(boiler, 3) + numbered("ours", 5), false, ""},
		{"own file quoting a few lines", numbered("ours", 20) + numbered("alpha", 5), false, "mod/a.yaml (3)"},
		{"the same lines in another order", reorder(numbered("alpha", 40)), false, ""},
		{"too small to tell", numbered("alpha", 5), false, "mod/a.yaml (3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := x.Compare([]byte(tc.data))
			if m.Copied(8) != tc.copied {
				t.Errorf("copied %v, want %v: %s", m.Copied(8), tc.copied, m)
			}
			if first := append(m.Sources, "")[0]; first != tc.source {
				t.Errorf("first source %q, want %q", first, tc.source)
			}
		})
	}
}

// repoRoot is the root of nuv's source tree (where its go.mod is).
func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/nuv-dev/nuv\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod of nuv above the test's directory")
		}
		dir = parent
	}
}

// TestRepositoryCarriesNoModuleFiles fails when a YAML, JSON or shell file of nuv's tree is a copy
// (whole, edited, or several concatenated) of files the modules of go.mod ship, as found in the
// module cache: what a module publishes nuv reads from it (e.g. kwok's stages), it never carries
// its own copy. With -provenance.go the Go files are compared too.
func TestRepositoryCarriesNoModuleFiles(t *testing.T) {
	root := repoRoot(t)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mods, err := Requirements(gomod)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	cache := strings.TrimSpace(string(out))
	families := map[string]bool{"yaml": true, "json": true, "shell": true, "go": *goFiles}
	x := NewIndex()
	var missing []string
	haveKwok := false
	for _, m := range mods {
		dir := Dir(cache, m)
		if _, err := os.Stat(dir); err != nil {
			missing = append(missing, m.Path)
			continue
		}
		haveKwok = haveKwok || m.Path == "sigs.k8s.io/kwok"
		err := Walk(dir, families, nil, func(path string, data []byte) error {
			rel, _ := filepath.Rel(cache, path)
			x.Add(filepath.ToSlash(rel), data)
			return nil
		})
		if err != nil {
			t.Fatalf("module %s: %v", m.Path, err)
		}
	}
	if !haveKwok {
		t.Fatalf("sigs.k8s.io/kwok is not in the module cache %s (go mod download sigs.k8s.io/kwok): nothing to compare with", cache)
	}
	t.Logf("%d module files of %d modules indexed; %d modules not in the cache (not needed by any build here)", x.Files(), len(mods)-len(missing), len(missing))
	skip := func(rel string) bool {
		base := filepath.Base(rel)
		return base == ".git" || rel == "bin" || rel == "_reports" || rel == "_test-artifacts" || rel == ".nuv" || rel == ".nuvdev"
	}
	checked := 0
	err = Walk(root, families, skip, func(path string, data []byte) error {
		checked++
		if m := x.Compare(data); m.Copied(8) {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s looks copied from a module: %s", rel, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files of the repository compared", checked)
}

package providers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/nuv-dev/nuv"

// providerPackages are the providers, one cluster kind each; this registry imports every one.
var providerPackages = []string{
	"internal/cluster/local", "internal/cluster/kind", "internal/cluster/eks",
	"internal/cluster/awsmachines", "internal/cluster/aks", "internal/cluster/gke",
}

// goPackage is a package of the module as its non-test files import.
type goPackage struct {
	name    string
	imports []string // the module's own packages, relative to the module
}

// modulePackages reads the package clause and imports of every non-test Go file of the module
// (testdata, hidden folders and nested modules left out), by package path relative to the module.
func modulePackages(t *testing.T) map[string]*goPackage {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	pkgs := map[string]*goPackage{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if p != root && (n == "testdata" || n == "vendor" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		gp := pkgs[rel]
		if gp == nil {
			gp = &goPackage{name: f.Name.Name}
			pkgs[rel] = gp
		}
		for _, is := range f.Imports {
			ip, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return err
			}
			if r, ok := strings.CutPrefix(ip, module+"/"); ok && !slices.Contains(gp.imports, r) {
				gp.imports = append(gp.imports, r)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// linked is every package linked into a program other than a benchmark: the mains outside bench/
// and all they import. A package outside it is a test helper or a benchmark's.
func linked(pkgs map[string]*goPackage) map[string]bool {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(p string) {
		if seen[p] || pkgs[p] == nil {
			return
		}
		seen[p] = true
		for _, ip := range pkgs[p].imports {
			visit(ip)
		}
	}
	for p, gp := range pkgs {
		if gp.name == "main" && p != "bench" && !strings.HasPrefix(p, "bench/") {
			visit(p)
		}
	}
	return seen
}

// TestOnlyTheRegistryImportsProviders: no package of a program imports a provider but this
// registry and the programs' mains; test helpers and benchmarks, which no program links, may.
// docs/architecture.md states the rule.
func TestOnlyTheRegistryImportsProviders(t *testing.T) {
	pkgs := modulePackages(t)
	const registry = "internal/cluster/providers"
	for _, pp := range providerPackages {
		if pkgs[pp] == nil || !slices.Contains(pkgs[registry].imports, pp) {
			t.Fatalf("provider package %s: not in the module or not imported by the registry (is the list above up to date?)", pp)
		}
	}
	inProgram := linked(pkgs)
	for _, p := range slices.Sorted(maps.Keys(pkgs)) {
		gp := pkgs[p]
		if p == registry || gp.name == "main" || !inProgram[p] {
			continue
		}
		for _, ip := range gp.imports {
			if !slices.Contains(providerPackages, ip) {
				continue
			}
			t.Errorf("%s imports the provider package %s: only the registry (%s) and the mains may; reach providers through the registry or move what is shared to a neutral package", p, ip, registry)
		}
	}
}

// TestEmulatorsImportNoProvider: no package under internal/emulator reaches a provider package
// through the module's imports (every emulated cluster's control plane is a local one, run
// through internal/cluster/controlplane on internal/cluster/localkube, which is no provider).
func TestEmulatorsImportNoProvider(t *testing.T) {
	pkgs := modulePackages(t)
	var checked int
	for _, p := range slices.Sorted(maps.Keys(pkgs)) {
		if !strings.HasPrefix(p, "internal/emulator/") {
			continue
		}
		checked++
		// Walk p's imports breadth first, remembering how each package was reached.
		via := map[string]string{p: ""}
		queue := []string{p}
		for len(queue) > 0 {
			q := queue[0]
			queue = queue[1:]
			if slices.Contains(providerPackages, q) {
				chain := []string{q}
				for r := via[q]; r != ""; r = via[r] {
					chain = append([]string{r}, chain...)
				}
				t.Errorf("emulator package %s reaches a provider: %s", p, strings.Join(chain, " -> "))
				continue
			}
			if pkgs[q] == nil {
				continue
			}
			for _, ip := range pkgs[q].imports {
				if _, ok := via[ip]; !ok {
					via[ip] = q
					queue = append(queue, ip)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package under internal/emulator: the walk of the module found nothing to check")
	}
}

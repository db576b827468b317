package addons

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"go.yaml.in/yaml/v3"

	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/lazy"
	"github.com/nuv-dev/nuv/internal/yamlerr"
)

// APIVersion and Kind identify an add-ons index file.
const (
	APIVersion = "nuv.dev/v1alpha1"
	Kind       = "Addons"
)

// DefaultIndex is the index nuv reads when none is named, relative to the project.
const DefaultIndex = "addons/index.yaml"

// Index is a loaded add-ons index: the add-ons and stacks of a file and of the files it includes.
type Index struct {
	// File is the path of the root index file.
	File string
	// Addons are every add-on defined, in file order (root file first, then includes).
	Addons []*Addon
	// Stacks are every stack defined.
	Stacks []*Stack
	// Default names the add-ons `apply` installs without --only or --stack: those of the root file.
	Default []string
}

// Addon is one entry of spec.addons.
type Addon struct {
	Name              string   `yaml:"name"`
	Namespace         string   `yaml:"namespace"`
	Version           string   `yaml:"version"`
	Description       string   `yaml:"description"`
	Selector          Selector `yaml:"selector"`
	KubernetesVersion string   `yaml:"kubernetesVersion"`
	Source            Source   `yaml:"source"`
	DependsOn         []string `yaml:"dependsOn"`
	Prune             Prune    `yaml:"prune"`
	Wait              Wait     `yaml:"wait"`

	// File and Line locate the entry; Dir is the directory relative sources are resolved from.
	File string `yaml:"-"`
	Line int    `yaml:"-"`
	Dir  string `yaml:"-"`
	// StackValues are the chart values of the stacks that list this add-on (at most one may carry values).
	StackValues map[string]any `yaml:"-"`
	kubeRange   *semver.Constraints
}

// Selector limits the clusters an add-on applies to. Empty fields match every cluster.
type Selector struct {
	// Types are cluster types (local, kind, eks, aks, gke, k3s, m8s, osh, lks, generic).
	Types []string `yaml:"types"`
	// NodeLabels must all be carried by at least one node.
	NodeLabels map[string]string `yaml:"nodeLabels"`
}

// Source is where an add-on's objects come from: exactly one of Path, Kustomize, Chart or URL.
type Source struct {
	// Path is a directory of manifests (*.yaml, *.yml, *.json, recursively, in name order) or one file.
	Path string `yaml:"path"`
	// Kustomize is a directory holding a kustomization.
	Kustomize string `yaml:"kustomize"`
	// Chart is a Helm chart at a pinned version.
	Chart *Chart `yaml:"chart"`
	// URL is a manifest file on the web, pinned by Digest.
	URL string `yaml:"url"`
	// Digest pins the URL's content or the chart archive: "sha256:<64 hex digits>".
	Digest string `yaml:"digest"`
}

// Chart is a Helm chart source.
type Chart struct {
	// Repo is "oci://host/path" (the chart is Repo/Name:Version) or a chart repository's http(s) URL.
	Repo    string         `yaml:"repo"`
	Name    string         `yaml:"name"`
	Version string         `yaml:"version"`
	Values  map[string]any `yaml:"values"`
}

// Prune are an add-on's prune rules.
type Prune struct {
	// Disabled leaves objects a new version no longer contains in place (they leave the inventory).
	Disabled bool `yaml:"disabled"`
	// CRDs lets remove (and prune) delete the add-on's CustomResourceDefinitions, and with them
	// every custom resource of those kinds. Off by default.
	CRDs bool `yaml:"crds"`
}

// Wait tunes the readiness wait of an add-on.
type Wait struct {
	// Skip applies the add-on without waiting for its workloads.
	Skip bool `yaml:"skip"`
}

// Stack is a named group of add-ons with shared chart values.
type Stack struct {
	Name        string         `yaml:"name"`
	Description string         `yaml:"description"`
	Addons      []string       `yaml:"addons"`
	Values      map[string]any `yaml:"values"`
	File        string         `yaml:"-"`
	Line        int            `yaml:"-"`
}

type indexFile struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name        string            `yaml:"name"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Spec struct {
		Include []string `yaml:"include"`
		Addons  []*Addon `yaml:"addons"`
		Stacks  []*Stack `yaml:"stacks"`
	} `yaml:"spec"`
}

var (
	nameRE   = lazy.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	digestRE = lazy.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// Load reads and validates the index at path and the files it includes (spec.include, relative
// to the including file). Every error names the file and, where it applies, the line.
func Load(path string) (*Index, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	idx := &Index{File: abs}
	seen := map[string]bool{}
	if err := idx.loadFile(abs, true, seen); err != nil {
		return nil, err
	}
	if err := idx.validate(); err != nil {
		return nil, err
	}
	return idx, nil
}

func (idx *Index) loadFile(path string, root bool, seen map[string]bool) error {
	if seen[path] {
		return nil
	}
	seen[path] = true
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("add-ons index %s does not exist (create it, or name another with --index)", path)
		}
		return fmt.Errorf("add-ons index: %w", err)
	}
	doc, err := parseIndex(path, data)
	if err != nil {
		return err
	}
	var f indexFile
	if err := doc.Decode(&f); err != nil {
		return yamlerr.FromDecode(path, data, err)
	}
	for _, h := range []struct{ field, got, want string }{{"apiVersion", f.APIVersion, APIVersion}, {"kind", f.Kind, Kind}} {
		if h.got != h.want {
			return fmt.Errorf("%s:%d: %s: want %s, got %q (an add-ons index starts with apiVersion: %s and kind: %s)",
				path, lineOf(doc, h.field), h.field, h.want, h.got, APIVersion, Kind)
		}
	}
	dir := filepath.Dir(path)
	addonNodes := seqItems(child(child(doc, "spec"), "addons"))
	for i, a := range f.Spec.Addons {
		if a == nil {
			return fmt.Errorf("%s: spec.addons[%d]: empty entry (want name, version and source)", at(path, lineAt(addonNodes, i)), i)
		}
		a.File, a.Dir = path, dir
		if i < len(addonNodes) {
			a.Line = addonNodes[i].Line
		}
		idx.Addons = append(idx.Addons, a)
		if root {
			idx.Default = append(idx.Default, a.Name)
		}
	}
	stackNodes := seqItems(child(child(doc, "spec"), "stacks"))
	for i, s := range f.Spec.Stacks {
		if s == nil {
			return fmt.Errorf("%s: spec.stacks[%d]: empty entry (want name and addons)", at(path, lineAt(stackNodes, i)), i)
		}
		s.File = path
		if i < len(stackNodes) {
			s.Line = stackNodes[i].Line
		}
		idx.Stacks = append(idx.Stacks, s)
	}
	incNodes := seqItems(child(child(doc, "spec"), "include"))
	for i, inc := range f.Spec.Include {
		p := inc
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		line := 0
		if i < len(incNodes) {
			line = incNodes[i].Line
		}
		where := fmt.Sprintf("%s: spec.include[%d]", at(path, line), i)
		if strings.TrimSpace(inc) == "" {
			return fmt.Errorf("%s: empty file name", where)
		}
		if st, err := os.Stat(p); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("%s: included index %s does not exist", where, p)
			}
			return fmt.Errorf("%s: %w", where, err)
		} else if st.IsDir() {
			return fmt.Errorf("%s: included index %s is a directory (name a file)", where, p)
		}
		if err := idx.loadFile(p, false, seen); err != nil {
			return err
		}
	}
	return nil
}

// parseIndex checks the syntax of an index file and its fields against indexFile (unknown fields
// and wrong types, each named by path and line) and returns its document's root.
func parseIndex(path string, data []byte) (*yaml.Node, error) {
	if err := yamlerr.Syntax(path, data); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty add-ons index (want apiVersion %s, kind %s)", path, APIVersion, Kind)
		}
		return nil, yamlerr.FromDecode(path, data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil && len(extra.Content) > 0 {
		return nil, fmt.Errorf("%s:%d: one document per index file (found a second one)", path, extra.Content[0].Line)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind == yaml.DocumentNode || (root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
		return nil, fmt.Errorf("%s: empty add-ons index (want apiVersion %s, kind %s)", path, APIVersion, Kind)
	}
	if probs := yamlerr.Check(root, reflect.TypeOf(indexFile{}), "", nil); len(probs) > 0 {
		return nil, &yamlerr.Errors{File: path, List: probs}
	}
	return root, nil
}

// at formats a location for errors.
func at(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}

func (a *Addon) at() string { return at(a.File, a.Line) }

// SourceKind names the kind of source: "path", "kustomize", "chart" or "url".
func (a *Addon) SourceKind() string {
	switch {
	case a.Source.Chart != nil:
		return "chart"
	case a.Source.Kustomize != "":
		return "kustomize"
	case a.Source.URL != "":
		return "url"
	}
	return "path"
}

// SourceString describes the source for people.
func (a *Addon) SourceString() string {
	s := a.Source
	switch a.SourceKind() {
	case "chart":
		if strings.HasPrefix(s.Chart.Repo, "oci://") {
			return fmt.Sprintf("chart %s/%s:%s", s.Chart.Repo, s.Chart.Name, s.Chart.Version)
		}
		return fmt.Sprintf("chart %s %s (%s)", s.Chart.Name, s.Chart.Version, s.Chart.Repo)
	case "kustomize":
		return "kustomize " + s.Kustomize
	case "url":
		return "url " + s.URL
	}
	return "path " + s.Path
}

func (idx *Index) validate() error {
	byName := map[string]*Addon{}
	var errs []string
	for _, a := range idx.Addons {
		if prev, ok := byName[a.Name]; ok {
			errs = append(errs, fmt.Sprintf("%s: add-on %q is defined twice (also at %s)", a.at(), a.Name, prev.at()))
			continue
		}
		byName[a.Name] = a
		if msg := a.check(); msg != "" {
			errs = append(errs, a.at()+": "+msg)
		}
	}
	for _, a := range idx.Addons {
		for _, d := range a.DependsOn {
			if d == a.Name {
				errs = append(errs, fmt.Sprintf("%s: add-on %q depends on itself", a.at(), a.Name))
			} else if byName[d] == nil {
				errs = append(errs, fmt.Sprintf("%s: add-on %q depends on %q, which no add-on of the index defines", a.at(), a.Name, d))
			}
		}
	}
	stacks := map[string]*Stack{}
	valuesFrom := map[string]*Stack{}
	for _, s := range idx.Stacks {
		loc := at(s.File, s.Line)
		if !nameRE.MatchString(s.Name) {
			errs = append(errs, fmt.Sprintf("%s: stack name %q must be lower-case letters, digits and '-'", loc, s.Name))
		}
		if prev, ok := stacks[s.Name]; ok {
			errs = append(errs, fmt.Sprintf("%s: stack %q is defined twice (also at %s)", loc, s.Name, at(prev.File, prev.Line)))
			continue
		}
		stacks[s.Name] = s
		if len(s.Addons) == 0 {
			errs = append(errs, fmt.Sprintf("%s: stack %q lists no add-ons", loc, s.Name))
		}
		for _, n := range s.Addons {
			a := byName[n]
			if a == nil {
				errs = append(errs, fmt.Sprintf("%s: stack %q lists %q, which no add-on of the index defines", loc, s.Name, n))
				continue
			}
			if len(s.Values) == 0 || a.Source.Chart == nil {
				continue
			}
			if prev := valuesFrom[n]; prev != nil {
				errs = append(errs, fmt.Sprintf("%s: stacks %q and %q (%s) both give values to add-on %q; only one may", loc, s.Name, prev.Name, at(prev.File, prev.Line), n))
				continue
			}
			valuesFrom[n] = s
			a.StackValues = s.Values
		}
	}
	if len(errs) == 0 {
		if cyc := findCycle(idx.Addons, byName); cyc != nil {
			a := byName[cyc[0]]
			errs = append(errs, fmt.Sprintf("%s: dependency cycle: %s", a.at(), strings.Join(cyc, " -> ")))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n")) // each names its file and line
	}
	return nil
}

// check validates one add-on on its own; "" when it is fine.
func (a *Addon) check() string {
	var bad []string
	if !nameRE.MatchString(a.Name) || len(a.Name) > 50 {
		bad = append(bad, fmt.Sprintf("name %q must be 1-50 lower-case letters, digits and '-'", a.Name))
	}
	if a.Namespace != "" && !nameRE.MatchString(a.Namespace) {
		bad = append(bad, fmt.Sprintf("namespace %q is not a valid namespace name", a.Namespace))
	}
	if a.Version == "" {
		bad = append(bad, "version is required")
	}
	n := 0
	s := a.Source
	for _, set := range []bool{s.Path != "", s.Kustomize != "", s.Chart != nil, s.URL != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		bad = append(bad, fmt.Sprintf("source needs exactly one of path, kustomize, chart, url (found %d)", n))
	}
	if s.Digest != "" && !digestRE.MatchString(s.Digest) {
		bad = append(bad, fmt.Sprintf("source.digest %q must be sha256:<64 lower-case hex digits>", s.Digest))
	}
	if s.URL != "" {
		if !strings.HasPrefix(s.URL, "https://") && !strings.HasPrefix(s.URL, "http://") {
			bad = append(bad, fmt.Sprintf("source.url %q must be http(s)", s.URL))
		}
		if s.Digest == "" {
			bad = append(bad, "source.url needs source.digest (the manifest is pinned by its digest)")
		}
	}
	if (s.Path != "" || s.Kustomize != "") && s.Digest != "" {
		bad = append(bad, "source.digest applies to url and chart sources only")
	}
	if c := s.Chart; c != nil {
		if c.Repo == "" || c.Name == "" || c.Version == "" {
			bad = append(bad, "source.chart needs repo, name and version")
		}
		if c.Repo != "" && !strings.HasPrefix(c.Repo, "oci://") && !strings.HasPrefix(c.Repo, "https://") && !strings.HasPrefix(c.Repo, "http://") {
			bad = append(bad, fmt.Sprintf("source.chart.repo %q must be oci://, https:// or http://", c.Repo))
		}
		if c.Version != "" {
			if _, err := semver.StrictNewVersion(strings.TrimPrefix(c.Version, "v")); err != nil {
				bad = append(bad, fmt.Sprintf("source.chart.version %q must be one exact version (pinned), not a range", c.Version))
			}
		}
	}
	if a.KubernetesVersion != "" {
		c, err := semver.NewConstraint(a.KubernetesVersion)
		if err != nil {
			bad = append(bad, fmt.Sprintf("kubernetesVersion %q: %v", a.KubernetesVersion, err))
		}
		a.kubeRange = c
	}
	for _, t := range a.Selector.Types {
		if !kube.ValidType(t) {
			bad = append(bad, fmt.Sprintf("selector.types: unknown cluster type %q (known: %s)", t, strings.Join(kube.Types(), ", ")))
		}
	}
	return strings.Join(bad, "; ")
}

// findCycle returns a dependency cycle as names (first repeated last), or nil.
func findCycle(all []*Addon, byName map[string]*Addon) []string {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var cycle []string
	var visit func(n string) bool
	visit = func(n string) bool {
		color[n] = grey
		stack = append(stack, n)
		deps := append([]string(nil), byName[n].DependsOn...)
		for _, d := range deps {
			switch color[d] {
			case grey:
				for i, s := range stack {
					if s == d {
						cycle = append(append([]string(nil), stack[i:]...), d)
						return true
					}
				}
			case white:
				if visit(d) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
		return false
	}
	for _, a := range all {
		if color[a.Name] == white && visit(a.Name) {
			return cycle
		}
	}
	return nil
}

// Get returns the add-on called name, or nil.
func (idx *Index) Get(name string) *Addon {
	for _, a := range idx.Addons {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// Stack returns the stack called name, or nil.
func (idx *Index) Stack(name string) *Stack {
	for _, s := range idx.Stacks {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Select returns the add-ons to act on, in dependency order (dependencies first, then index order):
// the named ones (only) and those of the named stacks, with their dependencies; with neither, the
// root file's.
func (idx *Index) Select(only, stacks []string) ([]*Addon, error) {
	var want []string
	for _, stack := range stacks {
		s := idx.Stack(stack)
		if s == nil {
			return nil, fmt.Errorf("no stack %q in %s (stacks: %s)", stack, idx.File, strings.Join(idx.stackNames(), ", "))
		}
		want = append(want, s.Addons...)
	}
	for _, n := range only {
		if idx.Get(n) == nil {
			return nil, fmt.Errorf("no add-on %q in %s", n, idx.File)
		}
		want = append(want, n)
	}
	if len(stacks) == 0 && len(only) == 0 {
		want = idx.Default
	}
	seen := map[string]bool{}
	var out []*Addon
	var add func(n string)
	add = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		a := idx.Get(n)
		for _, d := range a.DependsOn {
			add(d)
		}
		out = append(out, a)
	}
	for _, n := range want {
		add(n)
	}
	return out, nil
}

func (idx *Index) stackNames() []string {
	var n []string
	for _, s := range idx.Stacks {
		n = append(n, s.Name)
	}
	sort.Strings(n)
	if len(n) == 0 {
		return []string{"none"}
	}
	return n
}

// child returns the value node of key in mapping m, or nil.
func child(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func seqItems(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// lineAt is the line of nodes[i], or 0.
func lineAt(nodes []*yaml.Node, i int) int {
	if i < len(nodes) {
		return nodes[i].Line
	}
	return 0
}

func lineOf(m *yaml.Node, key string) int {
	if c := child(m, key); c != nil {
		return c.Line
	}
	if m != nil {
		return m.Line
	}
	return 0
}

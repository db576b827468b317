// Package providertest is the worked example of docs/providers.md: "shelf", a provider that
// exists only in this test package, registers itself in nuv's provider registry and is planned,
// applied and deleted by the real lifecycle engine over the real file state store, with no edit
// outside this package. Its clusters are directories on disk, one JSON file per resource, so every
// step is observable: what Observe finds is what Execute wrote.
package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/providers"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// Section is shelf's spec section, `spec.shelf:`.
type Section struct {
	// Size is the size of every node: small (default) or large. Changing it replaces the pools.
	Size string `yaml:"size,omitempty" json:"size,omitempty"`
}

// Key names spec.shelf.
var Key = spec.SectionKey[Section]("shelf")

// Provider keeps each cluster as a directory under Dir: cluster.json and pool-NAME.json.
type Provider struct{ Dir string }

// registration is all nuv needs to know of shelf.
var registration = cluster.Registration{
	Name:  "shelf",
	Short: "clusters as directories of JSON files (a test provider)",
	New: func(h cluster.Host) (cluster.Provider, error) {
		return &Provider{Dir: filepath.Join(h.Home, "shelf")}, nil
	},
	Section: Key.Decoder(),
}

func (p *Provider) Name() string { return "shelf" }

func (p *Provider) Validate(c *spec.Cluster) []spec.FieldError {
	sec, errs := Key.Decode(c)
	if sec != nil && sec.Size != "" && sec.Size != "small" && sec.Size != "large" {
		errs = append(errs, spec.Errorf("spec.shelf.size", "%q: want small or large", sec.Size))
	}
	if len(c.Spec.NodeGroups) == 0 {
		errs = append(errs, spec.Errorf("spec.nodeGroups", "required: a shelf cluster needs a node group"))
	}
	return append(errs, c.CheckSections()...)
}

func size(c *spec.Cluster) string {
	if s := Key.Get(c).Size; s != "" {
		return s
	}
	return "small"
}

// Desired is the cluster, then a pool per node group.
func (p *Provider) Desired(c *spec.Cluster) ([]cluster.Resource, error) {
	name := c.Metadata.Name
	out := []cluster.Resource{{Kind: "cluster", Name: name, Fields: map[string]string{"version": c.Spec.KubernetesVersion}}}
	for _, g := range c.Spec.NodeGroups {
		out = append(out, cluster.Resource{Kind: "pool", Name: g.Name, Replace: []string{"size"}, DependsOn: []string{"cluster/" + name},
			Fields: map[string]string{"count": strconv.Itoa(g.Size()), "size": size(c)}})
	}
	return out, nil
}

func (p *Provider) file(cluster, kind, name string) string {
	if kind == "cluster" {
		return filepath.Join(p.Dir, cluster, "cluster.json")
	}
	return filepath.Join(p.Dir, cluster, kind+"-"+name+".json")
}

// Observe reads back every file of the cluster's directory.
func (p *Provider) Observe(_ context.Context, c *spec.Cluster, _ []cluster.Resource) ([]cluster.Resource, error) {
	files, _ := filepath.Glob(filepath.Join(p.Dir, c.Metadata.Name, "*.json"))
	var out []cluster.Resource
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var r cluster.Resource
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Execute writes (create, update, replace) or removes (delete) one resource's file.
func (p *Provider) Execute(_ context.Context, c *spec.Cluster, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	kind, name, _ := strings.Cut(ch.Key, "/")
	f := p.file(c.Metadata.Name, kind, name)
	if ch.Action == cluster.Delete {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if kind == "cluster" {
			return nil, os.Remove(filepath.Dir(f))
		}
		return nil, nil
	}
	r := *ch.Desired
	r.ID = f
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(f+".tmp", b, 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(f+".tmp", f); err != nil {
		return nil, err
	}
	return &r, save(r)
}

func (p *Provider) List(ctx context.Context) ([]cluster.Info, error) {
	dirs, _ := os.ReadDir(p.Dir)
	var out []cluster.Info
	for _, d := range dirs {
		info, err := p.Status(ctx, cluster.Named(d.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

func (p *Provider) Status(_ context.Context, c *spec.Cluster) (cluster.Info, error) {
	name := c.Metadata.Name
	if _, err := os.Stat(p.file(name, "cluster", name)); err != nil {
		return cluster.Info{}, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	return cluster.Info{Name: name, Provider: "shelf", Status: cluster.Running}, nil
}

const shelfSpec = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata:
  name: books
spec:
  provider: shelf
  kubernetesVersion: "1.36"
  nodeGroups:
  - name: workers
    count: 2
  shelf:
    size: large
`

// world is nuv's provider registry with shelf registered, its spec decoder, and an engine over a
// file state store.
func world(t *testing.T) (*cluster.Registry, *engine.Engine, *Provider) {
	t.Helper()
	r := providers.Registry()
	if err := r.Register(registration); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := &cli.Env{Log: cli.Quiet(), Getenv: func(k string) string { return map[string]string{"NUV_HOME": home}[k] }, Dir: t.TempDir()}
	ps, err := providers.Build(r, env)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	e := &engine.Engine{Providers: ps, Store: state.Dir{Path: filepath.Join(home, "state")}, Out: &out}
	return r, e, ps["shelf"].(*Provider)
}

func decode(t *testing.T, r *cluster.Registry, doc string) *spec.Cluster {
	t.Helper()
	cs, err := r.Decoder().Decode("books.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cs[0]
}

func keys(p *cluster.Plan) []string {
	var out []string
	for _, ch := range p.Changes {
		out = append(out, string(ch.Action)+" "+ch.Key)
	}
	return out
}

// TestShelfLifecycle: registered, shelf is one of nuv's providers; the engine plans, applies (a
// second apply changes nothing), updates and deletes its clusters, and the state record follows.
func TestShelfLifecycle(t *testing.T) {
	r, e, p := world(t)
	ctx := t.Context()
	if !slices.Contains(r.Names(), "shelf") || !slices.Contains(r.Names(), "local") {
		t.Fatalf("registry: %v", r.Names())
	}
	c := decode(t, r, shelfSpec)

	plan, err := e.Plan(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(plan), []string{"create cluster/books", "create pool/workers"}; !slices.Equal(got, want) {
		t.Fatalf("plan %v, want %v", got, want)
	}
	if _, err := e.Store.Load(ctx, "books"); !errors.Is(err, state.ErrNoRecord) {
		t.Fatalf("a plan wrote a record: %v", err)
	}

	if _, err := e.Apply(ctx, c, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	rec, err := e.Store.Load(ctx, "books")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Provider != "shelf" || rec.Phase != state.Running || len(rec.Resources) != 2 ||
		rec.Resources[1].Fields["size"] != "large" || rec.Resources[1].Fields["count"] != "2" {
		t.Fatalf("record after apply: %+v", rec)
	}
	if got := string(rec.Spec.Section("shelf")); got != `{"size":"large"}` {
		t.Fatalf("the record's spec.shelf is %s", got)
	}
	if b, err := os.ReadFile(p.file("books", "pool", "workers")); err != nil || !strings.Contains(string(b), `"size":"large"`) {
		t.Fatalf("pool file: %s %v", b, err)
	}

	again, err := e.Apply(ctx, c, engine.ApplyOptions{})
	if err != nil || !again.Empty() {
		t.Fatalf("second apply: %v %v", keys(again), err)
	}

	// The record's spec, read back from its file, plans the same (its section survives JSON).
	rec, _ = e.Store.Load(ctx, "books")
	if plan, err := e.Plan(ctx, rec.Spec); err != nil || !plan.Empty() {
		t.Fatalf("plan of the recorded spec: %v %v", keys(plan), err)
	}

	small := decode(t, r, strings.Replace(shelfSpec, "size: large", "size: small", 1))
	plan, err = e.Apply(ctx, small, engine.ApplyOptions{})
	if err != nil || !slices.Equal(keys(plan), []string{"replace pool/workers"}) {
		t.Fatalf("size change: %v %v", keys(plan), err)
	}

	plan, err = e.Delete(ctx, "books")
	if err != nil || !slices.Equal(keys(plan), []string{"delete pool/workers", "delete cluster/books"}) {
		t.Fatalf("delete: %v %v", keys(plan), err)
	}
	if _, err := e.Store.Load(ctx, "books"); !errors.Is(err, state.ErrNoRecord) {
		t.Fatalf("record after delete: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.Dir, "books")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the cluster's directory is still there: %v", err)
	}
}

// TestShelfSpecErrors: shelf's section is decoded strictly by the decoder the registry makes
// (file, line, field path), and the generic check refuses sections of other providers both ways.
func TestShelfSpecErrors(t *testing.T) {
	r, e, _ := world(t)
	for _, tc := range []struct{ name, from, to, want string }{
		{"unknown field", "size: large", "colour: red", "books.yaml:12: spec.shelf.colour: unknown field (valid: size)"},
		{"wrong kind", "size: large", "size: [large]", "books.yaml:12: spec.shelf.size: want a string"},
		{"another provider's section", "  shelf:\n    size: large\n", "  kind:\n    image: x\n", "books.yaml:11: spec.kind: is for provider kind; this spec's provider is shelf"},
		{"shelf's section elsewhere", "provider: shelf", "provider: local", "books.yaml:11: spec.shelf: is for provider shelf; this spec's provider is local"},
		{"unknown field of spec", "  shelf:\n", "  shelves:\n", "books.yaml:11: spec.shelves: unknown field (valid: provider, region, zones, ttl, kubernetesVersion, controlPlane, nodeGroups, networking, registry, addons, tags, local, kind, eks, aws, aks, gke, shelf)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Decoder().Decode("books.yaml", []byte(strings.Replace(shelfSpec, tc.from, tc.to, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	// A value the type accepts but shelf does not: refused by its Validate, with file and line.
	c := decode(t, r, strings.Replace(shelfSpec, "size: large", "size: huge", 1))
	if _, err := e.Plan(t.Context(), c); err == nil || !strings.Contains(err.Error(), `books.yaml:12: spec.shelf.size: "huge": want small or large`) {
		t.Fatalf("plan of size huge: %v", err)
	}
}

// TestRegisterRefuses: a name registered twice, or without a factory, is refused.
func TestRegisterRefuses(t *testing.T) {
	r := providers.Registry()
	for _, tc := range []struct {
		reg  cluster.Registration
		want string
	}{
		{cluster.Registration{Name: "local", New: registration.New}, "provider local is registered twice"},
		{cluster.Registration{Name: "shelf"}, "provider shelf: registration without a factory"},
		{cluster.Registration{Name: "Shelf", New: registration.New}, "a provider name is a lower-case DNS label"},
	} {
		if err := r.Register(tc.reg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Register(%s): %v, want %q", tc.reg.Name, err, tc.want)
		}
	}
}

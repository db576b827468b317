package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// memProvider keeps its "cloud" in memory: resources by key with IDs allocated as a cloud would
// (net-1, group-2, ...), a count of calls that changed something, and a failure to inject.
type memProvider struct {
	mu      sync.Mutex
	objects map[string]cluster.Resource
	next    int
	writes  int
	failOn  string // key whose next Execute fails
	foreign []string
}

func newMem() *memProvider { return &memProvider{objects: map[string]cluster.Resource{}} }

func (m *memProvider) Name() string                               { return "mem" }
func (m *memProvider) Validate(c *spec.Cluster) []spec.FieldError { return nil }
func (m *memProvider) Desired(c *spec.Cluster) ([]cluster.Resource, error) {
	out := []cluster.Resource{{Kind: "net", Name: c.Metadata.Name, Fields: map[string]string{"cidr": c.Spec.Networking.VPCCIDR}, Replace: []string{"cidr"}}}
	for _, g := range c.Spec.NodeGroups {
		out = append(out, cluster.Resource{Kind: "group", Name: g.Name, Fields: map[string]string{"count": strconv.Itoa(g.Size())}, DependsOn: []string{"net/" + c.Metadata.Name}})
	}
	return out, nil
}
func (m *memProvider) Observe(ctx context.Context, c *spec.Cluster, _ []cluster.Resource) ([]cluster.Resource, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []cluster.Resource
	for _, r := range m.objects {
		out = append(out, r)
	}
	for _, f := range m.foreign {
		k, n, _ := strings.Cut(f, "/")
		out = append(out, cluster.Resource{Kind: k, Name: n, ID: "theirs", Foreign: true})
	}
	return out, nil
}
func (m *memProvider) Execute(ctx context.Context, c *spec.Cluster, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failOn == ch.Key {
		m.failOn = ""
		return nil, errors.New("injected failure")
	}
	m.writes++
	switch ch.Action {
	case cluster.Delete:
		delete(m.objects, ch.Key)
		return nil, nil
	case cluster.Create, cluster.Replace:
		m.next++
		r := *ch.Desired
		r.ID = fmt.Sprintf("%s-%d", r.Kind, m.next)
		m.objects[ch.Key] = r
		return &r, nil
	default:
		r := m.objects[ch.Key]
		r.Fields = ch.Desired.Fields
		m.objects[ch.Key] = r
		return &r, nil
	}
}
func (m *memProvider) List(ctx context.Context) ([]cluster.Info, error) { return nil, nil }
func (m *memProvider) Status(ctx context.Context, _ *spec.Cluster) (cluster.Info, error) {
	return cluster.Info{}, cluster.ErrNotFound
}

func specOf(name string, counts ...int) *spec.Cluster {
	c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: name},
		Spec: spec.Spec{Provider: "mem", Networking: spec.Networking{VPCCIDR: "10.0.0.0/16"}}}
	for i, n := range counts {
		n := n
		c.Spec.NodeGroups = append(c.Spec.NodeGroups, spec.NodeGroup{Name: "g" + strconv.Itoa(i), Count: &n})
	}
	return c
}

func newEngine(t *testing.T, m *memProvider) (*Engine, *bytes.Buffer) {
	var out bytes.Buffer
	return &Engine{Providers: map[string]cluster.Provider{"mem": m}, Store: state.Dir{Path: t.TempDir()}, Out: &out, LockWait: time.Second}, &out
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	e, _ := newEngine(t, m)
	c := specOf("dev", 2, 1)
	p, err := e.Plan(ctx, c)
	if err != nil || p.Count(cluster.Create) != 3 {
		t.Fatalf("first plan: %v %+v", err, p)
	}
	if _, err := e.Apply(ctx, c, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	rec, err := e.Store.Load(ctx, "dev")
	if err != nil || rec.Phase != state.Running || len(rec.Resources) != 3 {
		t.Fatalf("record after apply: %+v %v", rec, err)
	}
	gen, writes := rec.Generation, m.writes
	// No change: plan empty, apply touches neither the provider nor the record.
	if p, _ := e.Plan(ctx, c); !p.Empty() {
		t.Fatalf("second plan not empty: %+v", p.Changes)
	}
	if p, err := e.Apply(ctx, c, ApplyOptions{}); err != nil || !p.Empty() {
		t.Fatalf("second apply: %v %+v", err, p)
	}
	rec, _ = e.Store.Load(ctx, "dev")
	if rec.Generation != gen || m.writes != writes {
		t.Fatalf("a no-change apply wrote: generation %d->%d, provider writes %d->%d", gen, rec.Generation, writes, m.writes)
	}
	// Scale one group: exactly that change.
	c2 := specOf("dev", 4, 1)
	p, _ = e.Plan(ctx, c2)
	var buf bytes.Buffer
	WritePlan(&buf, p)
	if len(p.Changes) != 1 || !strings.Contains(buf.String(), "~ update group/g0") || !strings.Contains(buf.String(), "count: 2 -> 4") {
		t.Fatalf("scale plan:\n%s", buf.String())
	}
	if _, err := e.Apply(ctx, c2, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Apply(ctx, c2, ApplyOptions{CreateOnly: true}); !errors.Is(err, cluster.ErrExists) {
		t.Fatalf("create of an existing cluster: %v", err)
	}
	// Delete: dependents first, nothing left, no record.
	if _, err := e.Delete(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	if len(m.objects) != 0 {
		t.Fatalf("left behind: %v", m.objects)
	}
	if _, err := e.Store.Load(ctx, "dev"); !errors.Is(err, state.ErrNoRecord) {
		t.Fatalf("record after delete: %v", err)
	}
}

func TestResumeAfterFailure(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	e, _ := newEngine(t, m)
	c := specOf("dev", 1, 1)
	m.failOn = "group/g1"
	_, err := e.Apply(ctx, c, ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "injected failure") || !strings.Contains(err.Error(), "creation_failed") {
		t.Fatalf("failing apply: %v", err)
	}
	rec, _ := e.Store.Load(ctx, "dev")
	if rec.Phase != state.CreationFailed || len(rec.Resources) != 2 || !strings.Contains(rec.Error, "group/g1") {
		t.Fatalf("record after failure: %+v", rec)
	}
	ids := map[string]string{}
	for k, r := range m.objects {
		ids[k] = r.ID
	}
	p, err := e.Apply(ctx, c, ApplyOptions{})
	if err != nil || len(p.Changes) != 1 || p.Changes[0].Key != "group/g1" {
		t.Fatalf("resume did more than the missing step: %v %+v", err, p)
	}
	for k, id := range ids {
		if m.objects[k].ID != id {
			t.Fatalf("%s was made again (%s -> %s)", k, id, m.objects[k].ID)
		}
	}
	rec, _ = e.Store.Load(ctx, "dev")
	if rec.Phase != state.Running || rec.Error != "" {
		t.Fatalf("record after resume: %+v", rec)
	}
	// A failed delete is finished by the next one.
	m.failOn = "net/dev"
	if _, err := e.Delete(ctx, "dev"); err == nil {
		t.Fatal("delete with an injected failure succeeded")
	}
	rec, _ = e.Store.Load(ctx, "dev")
	if rec.Phase != state.DeletionFailed {
		t.Fatalf("phase after a failed delete: %s", rec.Phase)
	}
	if _, err := e.Apply(ctx, c, ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "being deleted") {
		t.Fatalf("apply during a failed delete: %v", err)
	}
	if _, err := e.Delete(ctx, "dev"); err != nil || len(m.objects) != 0 {
		t.Fatalf("second delete: %v, left %v", err, m.objects)
	}
}

func TestForeignResourcesBlockApply(t *testing.T) {
	m := newMem()
	m.foreign = []string{"net/dev", "group/other"}
	e, _ := newEngine(t, m)
	p, err := e.Apply(context.Background(), specOf("dev", 1), ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "nuv did not make them") || m.writes != 0 {
		t.Fatalf("apply over a foreign resource: %v (writes %d)", err, m.writes)
	}
	var b bytes.Buffer
	WritePlan(&b, p)
	if !strings.Contains(b.String(), "! conflict net/dev (theirs): exists but was not made by nuv; left alone") || strings.Contains(b.String(), "group/other") {
		t.Fatalf("plan:\n%s", b.String())
	}
}

func TestConcurrentAppliesSerialise(t *testing.T) {
	m := newMem()
	e, _ := newEngine(t, m)
	e.LockWait = 10 * time.Second
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.Apply(context.Background(), specOf("dev", 2), ApplyOptions{})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if m.next != 2 {
		t.Fatalf("%d resources made for a 2-resource spec", m.next)
	}
}

func TestUnknownProviderListsProviders(t *testing.T) {
	e, _ := newEngine(t, newMem())
	c := specOf("dev")
	c.Spec.Provider = "ekz"
	_, err := e.Plan(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), `spec.provider: unknown provider "ekz" (valid: mem)`) {
		t.Fatalf("%v", err)
	}
}

// preflightProvider refuses any plan that creates or replaces something while its "image" is
// missing, as the kind provider refuses an HA cluster without the load balancer's image.
type preflightProvider struct {
	*memProvider
	missing string
}

func (p *preflightProvider) Preflight(ctx context.Context, c *spec.Cluster, plan *cluster.Plan) error {
	if p.missing != "" && plan.Count(cluster.Create)+plan.Count(cluster.Replace) > 0 {
		return fmt.Errorf("image %s is missing", p.missing)
	}
	return nil
}

// TestPreflightRefusesBeforeAnythingIsWritten: a plan the provider refuses fails plan and apply
// alike, with no provider write and no state record; once the provider accepts, apply proceeds.
func TestPreflightRefusesBeforeAnythingIsWritten(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	p := &preflightProvider{memProvider: m, missing: "x:1"}
	e, _ := newEngine(t, m)
	e.Providers["mem"] = p
	c := specOf("dev", 1)
	for _, op := range []string{"plan", "apply"} {
		var err error
		if op == "plan" {
			_, err = e.Plan(ctx, c)
		} else {
			_, err = e.Apply(ctx, c, ApplyOptions{})
		}
		if err == nil || !strings.Contains(err.Error(), "cluster dev: image x:1 is missing") {
			t.Fatalf("%s: %v", op, err)
		}
	}
	if m.writes != 0 {
		t.Fatalf("the provider was asked to change %d thing(s)", m.writes)
	}
	if _, err := e.Store.Load(ctx, "dev"); !errors.Is(err, state.ErrNoRecord) {
		t.Fatalf("a record was written: %v", err)
	}
	p.missing = ""
	if _, err := e.Apply(ctx, c, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// with nothing to change the provider is not asked at all
	p.missing = "x:1"
	if plan, err := e.Plan(ctx, c); err != nil || !plan.Empty() {
		t.Fatalf("plan with no changes: %v %+v", err, plan)
	}
}

// TestBrokenIsReplacedWithItsReason: a resource Observe reports broken is replaced, and the plan
// says why.
func TestBrokenIsReplacedWithItsReason(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	e, _ := newEngine(t, m)
	c := specOf("dev")
	if _, err := e.Apply(ctx, c, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	r := m.objects["net/dev"]
	r.Broken = "its create was interrupted"
	m.objects["net/dev"] = r
	p, err := e.Plan(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WritePlan(&b, p)
	want := "-/+ replace net/dev (net-1)\n      why: its create was interrupted\nPlan: 0 to create, 0 to update, 1 to replace, 0 to delete; 0 unchanged.\n"
	if !strings.HasSuffix(b.String(), want) {
		t.Fatalf("plan:\n%s\nwant it to end with:\n%s", b.String(), want)
	}
	var j bytes.Buffer
	if err := WritePlansJSON(&j, []*cluster.Plan{p}); err != nil || !strings.Contains(j.String(), `"reason": "its create was interrupted"`) {
		t.Fatalf("json: %v\n%s", err, j.String())
	}
}

package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// cloudCluster is a cluster of tagCloud: one VM, with nuv's tag (or not) and the marks it carries.
type cloudCluster struct {
	nuv   bool // tagged nuv.dev/cluster=<name>
	marks spec.Marks
}

// tagCloud is a stateful cloud whose clusters carry tags: an Expirer and Adopter as the cloud
// providers are, counting the deletes it carried out.
type tagCloud struct {
	mu       sync.Mutex
	clusters map[string]*cloudCluster
	deletes  int
	marked   int
}

func (p *tagCloud) Name() string                             { return "cloud" }
func (p *tagCloud) Validate(*spec.Cluster) []spec.FieldError { return nil }
func (p *tagCloud) Desired(c *spec.Cluster) ([]cluster.Resource, error) {
	return []cluster.Resource{{Kind: "vm", Name: c.Metadata.Name, Fields: map[string]string{}}}, nil
}
func (p *tagCloud) Observe(_ context.Context, c *spec.Cluster, _ []cluster.Resource) ([]cluster.Resource, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cc, ok := p.clusters[c.Metadata.Name]
	if !ok {
		return nil, nil
	}
	return []cluster.Resource{{Kind: "vm", Name: c.Metadata.Name, ID: "vm-" + c.Metadata.Name, Fields: map[string]string{}, Foreign: !cc.nuv}}, nil
}
func (p *tagCloud) Execute(_ context.Context, c *spec.Cluster, ch cluster.Change, _ func(cluster.Resource) error) (*cluster.Resource, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ch.Action == cluster.Delete {
		if cc := p.clusters[c.Metadata.Name]; cc == nil || !cc.nuv {
			return nil, fmt.Errorf("deleted what is not nuv's: %s", c.Metadata.Name)
		}
		delete(p.clusters, c.Metadata.Name)
		p.deletes++
		return nil, nil
	}
	p.clusters[c.Metadata.Name] = &cloudCluster{nuv: true, marks: c.Marks}
	r := *ch.Desired
	r.ID = "vm-" + c.Metadata.Name
	return &r, nil
}
func (p *tagCloud) List(context.Context) ([]cluster.Info, error) { return nil, nil }
func (p *tagCloud) Status(context.Context, *spec.Cluster) (cluster.Info, error) {
	return cluster.Info{}, cluster.ErrNotFound
}
func (p *tagCloud) Tagged(context.Context) ([]cluster.Tagged, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []cluster.Tagged
	for n, cc := range p.clusters {
		if cc.nuv {
			out = append(out, cluster.Tagged{Name: n, Marks: cc.marks, Where: "here"})
		}
	}
	return out, nil
}
func (p *tagCloud) Mark(_ context.Context, c *spec.Cluster) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cc := p.clusters[c.Metadata.Name]; cc != nil && cc.nuv {
		cc.marks = c.Marks
		p.marked++
	}
	return nil
}
func (p *tagCloud) Adopt(_ context.Context, name string) (*spec.Cluster, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cc := p.clusters[name]; cc != nil && cc.nuv {
		c := cluster.Named(name)
		c.Spec.Provider = "cloud"
		return c, nil
	}
	return nil, cluster.ErrNotFound
}

// TestGCByTag: the marks an apply writes (expiry and owner) and extend moves; clusters found by
// tag whose record was lost are deleted only when this store owns them and they expired; a
// cluster without nuv's tag, another store's, one without owner or not yet expired is left alone
// (and said why); concurrent deletes of a lost cluster delete it once.
func TestGCByTag(t *testing.T) {
	ctx := context.Background()
	cloud := &tagCloud{clusters: map[string]*cloudCluster{}}
	e := &Engine{Providers: map[string]cluster.Provider{"cloud": cloud}, Store: state.Dir{Path: t.TempDir()}, LockWait: 5 * time.Second}
	owner := e.Owner()
	if !strings.HasPrefix(owner, "dir-") || len(owner) != len("dir-")+12 {
		t.Fatalf("owner of a directory store: %q", owner)
	}

	// An apply with ttl marks what it makes; extend marks it again, then the record.
	c := cluster.Named("kept")
	c.Spec.Provider, c.Spec.TTL = "cloud", "2h"
	if _, err := e.Apply(ctx, c, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	rec, _ := e.Store.Load(ctx, "kept")
	if m := cloud.clusters["kept"].marks; m.Owner != owner || m.ExpiresAt == nil || !m.ExpiresAt.Equal(*rec.ExpiresAt) {
		t.Fatalf("marks after create: %+v, record expires %v", m, rec.ExpiresAt)
	}
	at, err := e.Extend(ctx, "kept", time.Hour, time.Now())
	if err != nil || !cloud.clusters["kept"].marks.ExpiresAt.Equal(at) {
		t.Fatalf("extend: %v %v, marks %+v", at, err, cloud.clusters["kept"].marks)
	}
	// A changed ttl marks the cluster again although nothing else changes.
	c2 := cluster.Named("kept")
	c2.Spec.Provider, c2.Spec.TTL = "cloud", "30m"
	marked := cloud.marked
	if _, err := e.Apply(ctx, c2, ApplyOptions{}); err != nil || cloud.marked != marked+1 || cloud.clusters["kept"].marks.ExpiresAt.After(time.Now().Add(31*time.Minute)) {
		t.Fatalf("apply with a new ttl: %v, marked %d times, marks %+v", err, cloud.marked-marked, cloud.clusters["kept"].marks)
	}

	now := time.Now()
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	for name, cc := range map[string]*cloudCluster{
		"lost":       {nuv: true, marks: spec.Marks{ExpiresAt: &past, Owner: owner}},
		"lost-later": {nuv: true, marks: spec.Marks{ExpiresAt: &future, Owner: owner}},
		"lost-never": {nuv: true, marks: spec.Marks{Owner: owner}},
		"theirs":     {nuv: true, marks: spec.Marks{ExpiresAt: &past, Owner: "dir-0123456789ab"}},
		"theirs-new": {nuv: true, marks: spec.Marks{ExpiresAt: &future, Owner: "dir-0123456789ab"}},
		"ownerless":  {nuv: true, marks: spec.Marks{ExpiresAt: &past}},
		"foreign":    {marks: spec.Marks{ExpiresAt: &past, Owner: owner}},
	} {
		cloud.clusters[name] = cc
	}
	later := now.Add(2 * time.Hour) // "kept" (30m) has expired by then, but it has a record
	lost, errs := e.Lost(ctx, now, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got := map[string]string{}
	for _, l := range lost {
		got[l.Name] = l.Skip
	}
	for _, tc := range []struct {
		name, skip string // skip: "" deleted, "-" not reported
	}{
		{"lost", ""},
		{"lost-later", "record lost; not expired: expires at "},
		{"lost-never", "record lost; no expiry tag"},
		{"theirs", "owned by another state store (dir-0123456789ab; this one is " + owner + ")"},
		{"theirs-new", "-"},
		{"ownerless", "no nuv.dev/owner tag"},
		{"foreign", "-"},
		{"kept", "-"},
	} {
		skip, ok := got[tc.name]
		switch {
		case tc.skip == "-" && ok:
			t.Errorf("%s reported (%q), want it left out", tc.name, skip)
		case tc.skip == "-":
		case !ok:
			t.Errorf("%s not reported", tc.name)
		case (tc.skip == "") != (skip == "") || !strings.HasPrefix(skip, tc.skip):
			t.Errorf("%s: skip %q, want %q", tc.name, skip, tc.skip)
		}
	}
	for _, name := range []string{"lost-later", "theirs", "ownerless", "foreign"} {
		if _, err := e.DeleteLost(ctx, "cloud", name, now); err == nil {
			t.Errorf("DeleteLost %s: deleted", name)
		}
	}

	// Four gcs at once: the lost cluster is deleted once.
	var wg sync.WaitGroup
	results := make([]error, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, results[i] = e.DeleteLost(ctx, "cloud", "lost", now)
		}()
	}
	wg.Wait()
	deleted := 0
	for _, err := range results {
		switch {
		case err == nil:
			deleted++
		case !errors.Is(err, cluster.ErrNotFound):
			t.Errorf("a concurrent gc: %v", err)
		}
	}
	if deleted != 1 || cloud.deletes != 1 || cloud.clusters["lost"] != nil {
		t.Fatalf("%d gcs deleted, %d deletes in the cloud, lost is %v", deleted, cloud.deletes, cloud.clusters["lost"])
	}
	if _, err := e.Store.Load(ctx, "lost"); !errors.Is(err, state.ErrNoRecord) {
		t.Fatalf("record left by the gc of a lost cluster: %v", err)
	}
	for _, name := range []string{"lost-later", "lost-never", "theirs", "theirs-new", "ownerless", "foreign", "kept"} {
		if cloud.clusters[name] == nil {
			t.Errorf("%s was deleted", name)
		}
	}
	// The record path still governs the cluster that has one.
	if _, err := e.DeleteExpired(ctx, "kept", later); err != nil || cloud.clusters["kept"] != nil {
		t.Fatalf("gc of the recorded cluster: %v", err)
	}
}

package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
)

// TestExpiry: spec.ttl gives the record an expiry from the apply that creates the cluster; an
// unchanged ttl keeps it (and what extend made of it), a changed one starts again, none clears it.
// Expired lists what passed; DeleteExpired leaves a cluster that is not (or no longer) expired
// alone, and of concurrent gcs exactly one deletes.
func TestExpiry(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	e, _ := newEngine(t, m)
	c := specOf("dev", 1)
	c.Spec.TTL = "4h"
	before := time.Now()
	if _, err := e.Apply(ctx, c, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	rec, err := e.Store.Load(ctx, "dev")
	if err != nil || rec.ExpiresAt == nil {
		t.Fatalf("record after an apply with ttl: %+v %v", rec, err)
	}
	if d := rec.ExpiresAt.Sub(before); d < 4*time.Hour-time.Second || d > 4*time.Hour+time.Minute {
		t.Fatalf("expires %s after the apply, want 4h", d)
	}
	at, err := e.Extend(ctx, "dev", 2*time.Hour, time.Now())
	if err != nil || !at.Equal(rec.ExpiresAt.Add(2*time.Hour)) {
		t.Fatalf("extend: %v %v (was %v)", at, err, rec.ExpiresAt)
	}
	c2 := specOf("dev", 1)
	c2.Spec.TTL = "4h"
	if _, err := e.Apply(ctx, c2, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if rec, _ = e.Store.Load(ctx, "dev"); !rec.ExpiresAt.Equal(at) {
		t.Fatalf("an apply with the same ttl moved the extended expiry %v to %v", at, rec.ExpiresAt)
	}
	c2.Spec.TTL = "1h"
	if _, err := e.Apply(ctx, c2, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if rec, _ = e.Store.Load(ctx, "dev"); rec.ExpiresAt == nil || rec.ExpiresAt.Sub(time.Now()) > time.Hour {
		t.Fatalf("a changed ttl: expiry %v, want an hour from now", rec.ExpiresAt)
	}

	now := time.Now()
	if got, _ := e.Expired(ctx, now, ""); len(got) != 0 {
		t.Fatalf("expired before its time: %v", got)
	}
	if _, err := e.DeleteExpired(ctx, "dev", now); !errors.Is(err, ErrNotExpired) {
		t.Fatalf("DeleteExpired of a live cluster: %v", err)
	}
	later := now.Add(2 * time.Hour)
	if got, _ := e.Expired(ctx, later, ""); len(got) != 1 || got[0].Name != "dev" {
		t.Fatalf("expired two hours later: %v", got)
	}
	if got, _ := e.Expired(ctx, later, "other"); len(got) != 0 {
		t.Fatalf("--provider other: %v", got)
	}
	writes := m.writes
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.DeleteExpired(ctx, "dev", later)
		}()
	}
	wg.Wait()
	deleted := 0
	for _, err := range errs {
		switch {
		case err == nil:
			deleted++
		case !errors.Is(err, cluster.ErrNotFound):
			t.Fatalf("a concurrent gc: %v", err)
		}
	}
	if deleted != 1 || m.writes-writes != 2 || len(m.objects) != 0 {
		t.Fatalf("%d gcs deleted, %d provider writes, %d objects left; want 1, 2 (net and group), 0", deleted, m.writes-writes, len(m.objects))
	}

	c3 := specOf("keep", 1)
	if _, err := e.Apply(ctx, c3, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if rec, _ = e.Store.Load(ctx, "keep"); rec.ExpiresAt != nil {
		t.Fatalf("a cluster without ttl got an expiry %v", rec.ExpiresAt)
	}
	if _, err := e.Extend(ctx, "dev", time.Hour, time.Now()); err == nil {
		t.Fatal("extend of a deleted cluster succeeded")
	}
}

package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// readyProvider is a memProvider whose nodes come up after the apply: each look at readiness
// finds one more of the spec's nodes Ready, up to stall (0: no limit), as kubelets of a booted
// cluster report Ready one after another.
type readyProvider struct {
	*memProvider
	mu    sync.Mutex
	ready int
	stall int
	looks int
}

func (p *readyProvider) Ready(ctx context.Context, c *spec.Cluster) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.looks++
	want := 0
	for _, g := range c.Spec.NodeGroups {
		want += g.Size()
	}
	if p.ready >= want {
		return nil
	}
	status := fmt.Errorf("%d of %d nodes Ready", p.ready, want)
	if p.stall == 0 || p.ready < p.stall {
		p.ready++
	}
	return status
}

// TestApplyReturnsWhenReady: an apply returns only once the provider says every node is Ready,
// showing the wait; one that gives up at the bound records the failure and names the last
// status; the next apply, with nothing left to change, waits again and records the cluster
// running; a no-change apply of a running cluster does not look.
func TestApplyReturnsWhenReady(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	p := &readyProvider{memProvider: m}
	e, out := newEngine(t, m)
	e.Providers["mem"] = p
	e.ReadyInterval = time.Millisecond
	c := specOf("dev", 2, 1)
	if _, err := e.Apply(ctx, c, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if p.ready != 3 || p.looks != 4 {
		t.Fatalf("apply returned with %d of 3 nodes Ready after %d looks", p.ready, p.looks)
	}
	for _, want := range []string{"waiting for cluster dev to be ready (0s): 0 of 3 nodes Ready\n", "waiting for cluster dev to be ready (0s): 2 of 3 nodes Ready\n",
		"cluster dev ready: every node Ready, the API answers (waited "} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if rec, _ := e.Store.Load(ctx, "dev"); rec.Phase != state.Running {
		t.Fatalf("phase %s after a ready apply", rec.Phase)
	}
	looks := p.looks
	if _, err := e.Apply(ctx, c, ApplyOptions{}); err != nil || p.looks != looks {
		t.Fatalf("a no-change apply of a running cluster: %v, %d look(s)", err, p.looks-looks)
	}

	// Scaling up: two more nodes, of which one never gets Ready within the bound.
	p.stall, e.WaitTimeout = 4, 50*time.Millisecond
	c2 := specOf("dev", 4, 1)
	_, err := e.Apply(ctx, c2, ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "gave up waiting for cluster dev to be ready") || !strings.Contains(err.Error(), "last seen: 4 of 5 nodes Ready") ||
		!strings.Contains(err.Error(), "update_failed") {
		t.Fatalf("apply past the bound: %v", err)
	}
	rec, _ := e.Store.Load(ctx, "dev")
	if rec.Phase != state.UpdateFailed || rec.Error != "not ready: 4 of 5 nodes Ready" {
		t.Fatalf("record after the bound: %s %q", rec.Phase, rec.Error)
	}
	// The node comes up: the next apply has nothing to change, waits again and records running.
	p.stall = 0
	plan, err := e.Apply(ctx, c2, ApplyOptions{})
	if err != nil || !plan.Empty() {
		t.Fatalf("resumed apply: %v %+v", err, plan)
	}
	if rec, _ = e.Store.Load(ctx, "dev"); rec.Phase != state.Running || rec.Error != "" || p.ready != 5 {
		t.Fatalf("record after the resumed apply: %s %q, %d nodes Ready", rec.Phase, rec.Error, p.ready)
	}
	var _ cluster.Readier = p
}

// notSaying is a provider that does not say when its clusters are ready (ErrUnsupported).
type notSaying struct{ *memProvider }

func (notSaying) Ready(context.Context, *spec.Cluster) error { return cluster.ErrUnsupported }

// TestApplyWithoutReadiness: a provider that does not say is not waited for, and apply claims
// nothing about the nodes.
func TestApplyWithoutReadiness(t *testing.T) {
	m := newMem()
	e, out := newEngine(t, m)
	e.Providers["mem"] = notSaying{m}
	if _, err := e.Apply(context.Background(), specOf("dev", 1), ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "ready") {
		t.Fatalf("apply spoke of readiness:\n%s", out)
	}
}

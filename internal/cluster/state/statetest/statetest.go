// Package statetest is the conformance suite every state.Store backend passes: records round-trip,
// writes based on a stale generation are refused, corrupt records are reported (never overwritten),
// locks exclude each other, name their holder, a lock whose holder is gone is taken over by exactly
// one of many contenders that found it, and an unlock never releases someone else's lock.
package statetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// Backend makes an empty store; two calls with the same t must share their data (two processes
// looking at one backend). Corrupt writes a record that cannot be decoded.
type Backend struct {
	New     func(t *testing.T) state.Store
	Corrupt func(t *testing.T, s state.Store, name string)
}

// Run runs the suite.
func Run(t *testing.T, b Backend) {
	runRecords(t, b)
	runLocks(t, b)
	runUnlocks(t, b)
}

// runRecords: records round-trip, stale writes are refused, corrupt records are reported and kept.
func runRecords(t *testing.T, b Backend) {
	ctx := context.Background()
	t.Run("round trip", func(t *testing.T) {
		s := b.New(t)
		if err := s.Check(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load(ctx, "c1"); !errors.Is(err, state.ErrNoRecord) {
			t.Fatalf("Load of a missing record: got %v, want ErrNoRecord", err)
		}
		three := 3
		r := &state.Record{Name: "c1", Provider: "local", Phase: state.Creating,
			Spec: &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "c1"},
				Spec: spec.Spec{Provider: "local", NodeGroups: []spec.NodeGroup{{Name: "w", Count: &three}}}}}
		r.Set(cluster.Resource{Kind: "control-plane", Name: "c1", ID: "/x", Fields: map[string]string{"version": "1.36.3"}})
		if err := s.Save(ctx, r); err != nil {
			t.Fatal(err)
		}
		if r.Generation != 1 || r.Created.IsZero() {
			t.Fatalf("after the first save: generation %d, created %v", r.Generation, r.Created)
		}
		got, err := s.Load(ctx, "c1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Phase != state.Creating || len(got.Resources) != 1 || got.Resources[0].ID != "/x" ||
			got.Spec.Spec.NodeGroups[0].Size() != 3 || got.Generation != 1 {
			t.Fatalf("loaded %+v", got)
		}
		got.Phase = state.Running
		if err := s.Save(ctx, got); err != nil {
			t.Fatal(err)
		}
		list, errs := s.List(ctx)
		if len(errs) > 0 || len(list) != 1 || list[0].Phase != state.Running {
			t.Fatalf("List: %v %v", list, errs)
		}
		if err := s.Remove(ctx, "c1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load(ctx, "c1"); !errors.Is(err, state.ErrNoRecord) {
			t.Fatalf("after Remove: %v", err)
		}
		if err := s.Remove(ctx, "c1"); err != nil {
			t.Fatalf("Remove of a missing record: %v", err)
		}
	})
	t.Run("stale write refused", func(t *testing.T) {
		s1 := b.New(t)
		if err := s1.Save(ctx, &state.Record{Name: "c2", Provider: "local", Phase: state.Running}); err != nil {
			t.Fatal(err)
		}
		a, err := s1.Load(ctx, "c2")
		if err != nil {
			t.Fatal(err)
		}
		s2 := b.New(t)
		bb, err := s2.Load(ctx, "c2")
		if err != nil {
			t.Fatal(err)
		}
		a.Phase = state.Updating
		if err := s1.Save(ctx, a); err != nil {
			t.Fatal(err)
		}
		bb.Phase = state.Deleting
		if err := s2.Save(ctx, bb); !errors.Is(err, state.ErrConflict) {
			t.Fatalf("a save based on an older generation: got %v, want ErrConflict", err)
		}
		if err := s1.Save(ctx, &state.Record{Name: "c2", Provider: "local"}); !errors.Is(err, state.ErrConflict) {
			t.Fatalf("a new record over an existing one: got %v, want ErrConflict", err)
		}
		cur, _ := s1.Load(ctx, "c2")
		if cur == nil || cur.Phase != state.Updating {
			t.Fatalf("the record after refused writes: %+v", cur)
		}
	})
	t.Run("corrupt record reported and kept", func(t *testing.T) {
		s := b.New(t)
		b.Corrupt(t, s, "c3")
		_, err := s.Load(ctx, "c3")
		if !errors.Is(err, state.ErrCorrupt) {
			t.Fatalf("Load of a corrupt record: %v", err)
		}
		if err := s.Save(ctx, &state.Record{Name: "c3", Provider: "local"}); err == nil {
			t.Fatal("a save over a corrupt record succeeded")
		}
		if _, err := s.Load(ctx, "c3"); !errors.Is(err, state.ErrCorrupt) {
			t.Fatalf("the corrupt record changed: %v", err)
		}
		_, errs := s.List(ctx)
		if len(errs) != 1 {
			t.Fatalf("List should report the corrupt record: %v", errs)
		}
	})
}

// runLocks: locks exclude each other and name their holder; a gone holder's lock is taken over.
func runLocks(t *testing.T, b Backend) {
	ctx := context.Background()
	t.Run("locks exclude and name the holder", func(t *testing.T) {
		s := b.New(t)
		me := state.Me("nuv cluster apply -f a.yaml")
		unlock, err := state.Lock(ctx, s, "c4", me, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		h, err := s.Holder(ctx, "c4")
		if err != nil || h == nil || h.PID != os.Getpid() || h.Command != me.Command {
			t.Fatalf("Holder: %+v %v", h, err)
		}
		_, err = state.Lock(ctx, b.New(t), "c4", state.Me("second"), 300*time.Millisecond, nil)
		if !errors.Is(err, state.ErrLocked) {
			t.Fatalf("a second lock: %v", err)
		}
		if err := unlock(); err != nil {
			t.Fatal(err)
		}
		if h, _ := s.Holder(ctx, "c4"); h != nil {
			t.Fatalf("still held by %+v after unlock", h)
		}
		// Many contenders: exactly one holds the lock at a time.
		var inside, max atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 6; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				u, err := state.Lock(ctx, b.New(t), "c4", me, 30*time.Second, nil)
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				if n > max.Load() {
					max.Store(n)
				}
				time.Sleep(20 * time.Millisecond)
				inside.Add(-1)
				if err := u(); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if max.Load() != 1 {
			t.Fatalf("%d holders at once", max.Load())
		}
	})
	t.Run("a gone holder is taken over", func(t *testing.T) {
		s := b.New(t)
		dead := state.Me("nuv cluster apply (killed)")
		dead.PID, dead.Start = 1<<22-1, 1 // no such process
		if _, _, err := s.TryLock(ctx, "c5", dead); err != nil {
			t.Fatal(err)
		}
		var notes []string
		unlock, err := state.Lock(ctx, s, "c5", state.Me("next"), time.Second, func(n string) { notes = append(notes, n) })
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		if len(notes) != 1 {
			t.Fatalf("want one note about the takeover, got %q", notes)
		}
		other := state.Me("elsewhere")
		other.Host = "another-machine"
		if err := s.Break(ctx, "c5"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.TryLock(ctx, "c5", other); err != nil {
			t.Fatal(err)
		}
		if _, err := state.Lock(ctx, s, "c5", state.Me("next"), 200*time.Millisecond, nil); !errors.Is(err, state.ErrLocked) {
			t.Fatalf("a holder on another machine must not be taken over: %v", err)
		}
	})
}

// runUnlocks: an unlock releases only its own lock; exactly one contender takes over a dead holder.
func runUnlocks(t *testing.T, b Backend) {
	ctx := context.Background()
	t.Run("an unlock releases only its own lock", func(t *testing.T) {
		s := b.New(t)
		dead := state.Me("nuv cluster apply (killed)")
		dead.PID, dead.Start = 1<<22-1, 1
		unlockDead, _, err := s.TryLock(ctx, "c7", dead)
		if err != nil {
			t.Fatal(err)
		}
		next := state.Me("next")
		unlock, err := state.Lock(ctx, b.New(t), "c7", next, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := unlockDead(); err != nil { // the taken-over holder's late unlock
			t.Fatal(err)
		}
		if h, _ := s.Holder(ctx, "c7"); h == nil || h.Command != next.Command {
			t.Fatalf("after the old holder's unlock the lock is held by %+v, want %q", h, next.Command)
		}
		if err := s.Break(ctx, "c7"); err != nil {
			t.Fatal(err)
		}
		third := state.Me("third")
		unlockThird, _, err := s.TryLock(ctx, "c7", third)
		if err != nil {
			t.Fatal(err)
		}
		if err := unlock(); err != nil { // broken meanwhile: the unlock must leave the third's lock alone
			t.Fatal(err)
		}
		if h, _ := s.Holder(ctx, "c7"); h == nil || h.Command != third.Command {
			t.Fatalf("after a broken holder's unlock the lock is held by %+v, want %q", h, third.Command)
		}
		if err := unlockThird(); err != nil {
			t.Fatal(err)
		}
		if h, _ := s.Holder(ctx, "c7"); h != nil {
			t.Fatalf("still held by %+v after unlock", h)
		}
	})
	t.Run("exactly one contender takes over a dead holder", func(t *testing.T) {
		RaceTakeover(t, b, Rounds, Contenders)
	})
}

// Rounds and Contenders of the takeover race the suite runs; Lanes is how many locks race at
// once (each round still has Contenders contenders on one lock).
const (
	Rounds     = 50
	Contenders = 8
	Lanes      = 10
)

// RaceTakeover runs rounds in which contenders stores (each opened with b.New, as separate nuvs
// would) find the lock of one dead holder and all try to take it over at once: every contender is
// held at a barrier right after it saw the dead holder, until all have seen it, so each takeover is
// based on the same stale view. Exactly one must win each round; the others must be told the
// lock is held (by the winner). The rounds are shared by Lanes locks raced at the same time (lane
// L races the lock race-L with stores of its own): a store whose server makes contenders wait
// (SeaweedFS's per-object write lock retries once a second) then costs seconds, not minutes.
func RaceTakeover(t *testing.T, b Backend, rounds, contenders int) {
	lanes := min(Lanes, rounds)
	stores := make([][]state.Store, lanes)
	for l := range stores {
		stores[l] = make([]state.Store, contenders)
		for i := range stores[l] {
			stores[l][i] = b.New(t)
		}
	}
	errs := make([]error, lanes)
	var wg sync.WaitGroup
	for l := 0; l < lanes; l++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("race-%d", l)
			for round := l; round < rounds && errs[l] == nil; round += lanes {
				errs[l] = raceRound(stores[l], name, round)
			}
		}()
	}
	wg.Wait()
	for l, err := range errs {
		if err != nil {
			t.Errorf("lock race-%d: %v", l, err)
		}
	}
}

// raceRound is one round of RaceTakeover on the lock name: stores[0] seeds the dead holder, every
// store contends, exactly one must win and its unlock must free the lock.
func raceRound(stores []state.Store, name string, round int) error {
	ctx := context.Background()
	contenders := len(stores)
	dead := state.Me("nuv cluster apply (killed)")
	dead.PID, dead.Start = 1<<22-1, uint64(round+1) // no such process
	if _, _, err := stores[0].TryLock(ctx, name, dead); err != nil {
		return fmt.Errorf("round %d: seeding the dead holder: %w", round, err)
	}
	bar := newBarrier(contenders)
	type result struct {
		unlock func() error
		err    error
	}
	results := make([]result, contenders)
	var wg sync.WaitGroup
	for i := 0; i < contenders; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &barrierStore{Store: stores[i], bar: bar}
			u, err := state.Lock(ctx, s, name, state.Me(fmt.Sprintf("contender %d", i)), 0, nil)
			results[i] = result{u, err}
		}()
	}
	wg.Wait()
	var winners []int
	for i, r := range results {
		switch {
		case r.err == nil:
			winners = append(winners, i)
		case !errors.Is(r.err, state.ErrLocked):
			return fmt.Errorf("round %d: contender %d: %w", round, i, r.err)
		}
	}
	if len(winners) != 1 {
		return fmt.Errorf("round %d: %d contenders took over the dead holder's lock (%v), want exactly one", round, len(winners), winners)
	}
	h, err := stores[0].Holder(ctx, name)
	if err != nil || h == nil || h.Command != fmt.Sprintf("contender %d", winners[0]) {
		return fmt.Errorf("round %d: the lock is held by %+v (%v), want the winner, contender %d", round, h, err, winners[0])
	}
	if err := results[winners[0]].unlock(); err != nil {
		return fmt.Errorf("round %d: the winner's unlock: %w", round, err)
	}
	if h, _ := stores[0].Holder(ctx, name); h != nil {
		return fmt.Errorf("round %d: still held by %+v after the winner's unlock", round, h)
	}
	return nil
}

// barrierStore holds a contender that found a gone holder until every contender found it.
type barrierStore struct {
	state.Store
	bar    *barrier
	passed bool
}

func (s *barrierStore) TryLock(ctx context.Context, name string, h state.Holder) (func() error, *state.Holder, error) {
	u, holder, err := s.Store.TryLock(ctx, name, h)
	if errors.Is(err, state.ErrLocked) && holder != nil && holder.Gone() && !s.passed {
		s.passed = true
		s.bar.wait()
	}
	return u, holder, err
}

type barrier struct {
	mu   sync.Mutex
	n    int
	done chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, done: make(chan struct{})} }

func (b *barrier) wait() {
	b.mu.Lock()
	b.n--
	if b.n == 0 {
		close(b.done)
	}
	b.mu.Unlock()
	select {
	case <-b.done:
	case <-time.After(10 * time.Second): // a contender that never saw the dead holder
	}
}

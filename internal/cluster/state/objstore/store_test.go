package objstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/history"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/objstoretest"
	"github.com/nuv-dev/nuv/internal/cluster/state/statetest"
)

func TestMemoryBucket(t *testing.T) { objstoretest.Run(t, &objstore.Memory{Name: "t"}) }

// memBackend: stores of one test share one memory bucket (two nuvs on one store).
func memBackend() statetest.Backend {
	var mu sync.Mutex
	buckets := map[*testing.T]*objstore.Memory{}
	return statetest.Backend{
		New: func(t *testing.T) state.Store {
			mu.Lock()
			defer mu.Unlock()
			b, ok := buckets[t]
			if !ok {
				b = &objstore.Memory{Name: t.Name()}
				buckets[t] = b
			}
			return objstore.New(b)
		},
		Corrupt: func(t *testing.T, s state.Store, name string) {
			if _, err := s.(*objstore.Store).Bucket().Put(context.Background(), objstore.RecordKey(name), []byte("{not json"), objstore.Cond{}); err != nil {
				t.Fatal(err)
			}
		},
	}
}

func TestStoreOnMemory(t *testing.T) { statetest.Run(t, memBackend()) }

func TestFailedSaveKeepsRecord(t *testing.T) {
	ctx := context.Background()
	m := &objstore.Memory{Name: "t"}
	s := objstore.New(m)
	r := &state.Record{Name: "c", Provider: "local", Phase: state.Running}
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	m.FailPut = func(string) bool { return true }
	r.Phase = state.Deleting
	err := s.Save(ctx, r)
	if err == nil || errors.Is(err, state.ErrConflict) {
		t.Fatalf("a save the store failed: %v", err)
	}
	if r.Generation != 1 || r.Phase != state.Deleting {
		t.Fatalf("the failed save changed the caller's record: %+v", r)
	}
	m.FailPut = nil
	got, err := s.Load(ctx, "c")
	if err != nil || got.Phase != state.Running || got.Generation != 1 {
		t.Fatalf("after a failed save: %+v %v", got, err)
	}
	if err := s.Save(ctx, r); err != nil { // retried after the failure
		t.Fatal(err)
	}
}

func TestHistoryConcurrentAdds(t *testing.T) {
	ctx := context.Background()
	s := objstore.New(&objstore.Memory{Name: "t"})
	h, err := history.ForState(s)
	if err != nil || h == nil {
		t.Fatalf("ForState: %v %v", h, err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h.Add(ctx, "local", history.Sample{Kind: "node", Action: "create", Seconds: float64(i), At: time.Now()}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := h.Load(ctx, "local")
	if err != nil || len(got) != 10 {
		t.Fatalf("after 10 adds at once: %d samples, %v", len(got), err)
	}
}

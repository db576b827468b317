package objstoretest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
	"github.com/nuv-dev/nuv/internal/cluster/state/statetest"
	"github.com/nuv-dev/nuv/internal/testservers"
)

// What every bucket adapter's tests (azbucket, gcsbucket, mongobucket) run besides Run: the state
// store's suite on the bucket, the refused writes and a latency benchmark.

// StoreBackend is the state store suite's backend (statetest.Run) on buckets open makes: each
// store is objstore.New of a bucket; a corrupt record is one written over with a broken JSON.
func StoreBackend(open func(t *testing.T) objstore.Bucket) statetest.Backend {
	return statetest.Backend{
		New: func(t *testing.T) state.Store { return objstore.New(open(t)) },
		Corrupt: func(t *testing.T, s state.Store, name string) {
			if _, err := s.(*objstore.Store).Bucket().Put(context.Background(), objstore.RecordKey(name), []byte("{not json"), objstore.Cond{}); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// Words are how a bucket's own documentation names its versions and objects, as the sub-tests of
// RefusedWrites are named: {"ETag", "an ETag", "blob", "a blob"}.
type Words struct {
	Version, AVersion, Object, AnObject string
}

// RefusedWrites checks that a refused write or delete, and a read of a missing object, fail with
// the error they must (objstore.ErrPrecondition, objstore.ErrNotFound) and leave the object
// readable as it was; check sees each error's message (i: the case, in the order put at a stale
// version, put if absent over an object, put at a version of a gone object, delete at a stale
// version, delete of a missing object, get of a missing object). It writes records/c.json and
// deletes it at the end.
func RefusedWrites(t *testing.T, b objstore.Bucket, w Words, check func(t *testing.T, i int, want error, msg string)) {
	t.Helper()
	ctx := context.Background()
	v1, err := b.Put(ctx, "records/c.json", []byte("one"), objstore.Cond{Absent: true})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := b.Put(ctx, "records/c.json", []byte("two"), objstore.Cond{Version: v1})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		do   func() error
		want error
	}{
		{"put at a stale " + w.Version, func() error {
			_, err := b.Put(ctx, "records/c.json", []byte("three"), objstore.Cond{Version: v1})
			return err
		}, objstore.ErrPrecondition},
		{"put if absent over " + w.AnObject, func() error {
			_, err := b.Put(ctx, "records/c.json", []byte("three"), objstore.Cond{Absent: true})
			return err
		}, objstore.ErrPrecondition},
		{"put at " + w.AVersion + " of a gone " + w.Object, func() error {
			_, err := b.Put(ctx, "records/gone.json", []byte("x"), objstore.Cond{Version: v1})
			return err
		}, objstore.ErrPrecondition},
		{"delete at a stale " + w.Version, func() error { return b.Delete(ctx, "records/c.json", v1) }, objstore.ErrPrecondition},
		{"delete of a missing " + w.Object, func() error { return b.Delete(ctx, "records/none.json", "") }, objstore.ErrNotFound},
		{"get of a missing " + w.Object, func() error { _, _, err := b.Get(ctx, "records/none.json"); return err }, objstore.ErrNotFound},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			if !errors.Is(err, c.want) {
				t.Fatalf("%v, want %v", err, c.want)
			}
			check(t, i, c.want, err.Error())
			data, v, err := b.Get(ctx, "records/c.json")
			if err != nil || !bytes.Equal(data, []byte("two")) || v != v2 {
				t.Fatalf("after a refused write: %q %q %v, want %q %q", data, v, err, "two", v2)
			}
		})
	}
	if err := b.Delete(ctx, "records/c.json", v2); err != nil {
		t.Fatalf("delete at the current %s: %v", w.Version, err)
	}
}

// Bench prints the latency of a conditional Put and of a Get of bk, and the startup time and
// memory of srv, the server called name.
func Bench(b *testing.B, bk objstore.Bucket, name string, srv *testservers.Server) {
	ctx := context.Background()
	body := bytes.Repeat([]byte("x"), 4096)
	v, err := bk.Put(ctx, "k", body, objstore.Cond{Absent: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("put", func(b *testing.B) {
		for range b.N {
			if v, err = bk.Put(ctx, "k", body, objstore.Cond{Version: v}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("get", func(b *testing.B) {
		for range b.N {
			if _, _, err := bk.Get(ctx, "k"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Logf("%s: ready in %v, RSS %d KiB", name, srv.Startup.Round(time.Millisecond), srv.RSS())
}

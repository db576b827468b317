package gcsbucket_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/gcsbucket"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/objstoretest"
	"github.com/nuv-dev/nuv/internal/cluster/state/statetest"
	"github.com/nuv-dev/nuv/internal/testservers"
)

// fakeGCS is fake-gcs-server, started once for the package, keeping its objects on disk.
var fakeGCS = testservers.NewShared(func() (*testservers.Server, error) {
	s, env, err := testservers.StartFakeGCS()
	if err != nil {
		return nil, err
	}
	if err := env.Set(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	fakeGCS.Stop()
	os.Exit(code)
}

var buckets atomic.Int64

// newBucket makes a bucket on the server (nuv never does) and returns nuv's view of it.
func newBucket(t *testing.T, prefix string) (objstore.Bucket, string) {
	t.Helper()
	fakeGCS.Get(t)
	ctx := context.Background()
	name := fmt.Sprintf("nuv-test-%d-%d", os.Getpid(), buckets.Add(1))
	if err := testservers.CreateGCSBucket(ctx, name); err != nil {
		t.Fatal(err)
	}
	b, err := gcsbucket.New(ctx, name, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.(*gcsbucket.Bucket).Close() })
	return b, name
}

func TestIntegrationGCSBucket(t *testing.T) {
	b, name := newBucket(t, "team/nuv")
	if got, want := b.Where(), "gs://"+name+"/team/nuv"; got != want {
		t.Errorf("Where: %q, want %q", got, want)
	}
	objstoretest.Run(t, b)
}

func TestIntegrationGCSStore(t *testing.T) {
	b, _ := newBucket(t, "")
	statetest.Run(t, statetest.Backend{
		// The stores of one test share a prefix of the bucket (two nuvs on one store).
		New: func(t *testing.T) state.Store {
			nb, err := gcsbucket.New(context.Background(), strings.TrimPrefix(b.Where(), "gs://"), t.Name())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { nb.(*gcsbucket.Bucket).Close() })
			return objstore.New(nb)
		},
		Corrupt: func(t *testing.T, s state.Store, name string) {
			if _, err := s.(*objstore.Store).Bucket().Put(context.Background(), objstore.RecordKey(name), []byte("{not json"), objstore.Cond{}); err != nil {
				t.Fatal(err)
			}
		},
	})
}

func TestIntegrationGCSMissingBucket(t *testing.T) {
	fakeGCS.Get(t)
	b, err := gcsbucket.New(context.Background(), "nuv-no-such-bucket", "p")
	if err != nil {
		t.Fatal(err)
	}
	objstoretest.CheckMissing(t, b, "nuv-no-such-bucket")
	if _, err := b.Put(context.Background(), "records/a.json", []byte("x"), objstore.Cond{Absent: true}); err == nil ||
		!strings.Contains(err.Error(), "nuv-no-such-bucket") {
		t.Errorf("Put into a missing bucket: %v", err)
	}
}

// TestIntegrationGCSErrors: a refused write names the store, the object and the server's answer,
// and leaves the object readable as it was; generations are checked on delete too.
func TestIntegrationGCSErrors(t *testing.T) {
	ctx := context.Background()
	b, name := newBucket(t, "p")
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
		{"put at a stale generation", func() error {
			_, err := b.Put(ctx, "records/c.json", []byte("three"), objstore.Cond{Version: v1})
			return err
		}, objstore.ErrPrecondition},
		{"put if absent over an object", func() error {
			_, err := b.Put(ctx, "records/c.json", []byte("three"), objstore.Cond{Absent: true})
			return err
		}, objstore.ErrPrecondition},
		{"put at a generation of a gone object", func() error {
			_, err := b.Put(ctx, "records/gone.json", []byte("x"), objstore.Cond{Version: v1})
			return err
		}, objstore.ErrPrecondition},
		{"delete at a stale generation", func() error { return b.Delete(ctx, "records/c.json", v1) }, objstore.ErrPrecondition},
		{"delete of a missing object", func() error { return b.Delete(ctx, "records/none.json", "") }, objstore.ErrNotFound},
		{"get of a missing object", func() error { _, _, err := b.Get(ctx, "records/none.json"); return err }, objstore.ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			if !errors.Is(err, c.want) {
				t.Fatalf("%v, want %v", err, c.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, "gs://"+name+"/p") || !strings.Contains(msg, "p/records/") {
				t.Errorf("%q does not name the store and the object", msg)
			}
			if c.want == objstore.ErrPrecondition && !strings.Contains(msg, "412") && !strings.Contains(msg, "gone") && !strings.Contains(msg, "404") {
				t.Errorf("%q does not give the server's answer", msg)
			}
			data, v, err := b.Get(ctx, "records/c.json")
			if err != nil || !bytes.Equal(data, []byte("two")) || v != v2 {
				t.Fatalf("after a refused write: %q %q %v, want %q %q", data, v, err, "two", v2)
			}
		})
	}
	if err := b.Delete(ctx, "records/c.json", v2); err != nil {
		t.Fatalf("delete at the current generation: %v", err)
	}
}

// BenchmarkIntegrationGCS prints the latency of a conditional Put and of a Get on the server, and
// the server's startup time and memory.
func BenchmarkIntegrationGCS(b *testing.B) {
	srv := fakeGCS.Get(b)
	ctx := context.Background()
	name := fmt.Sprintf("nuv-bench-%d-%d", os.Getpid(), time.Now().UnixNano())
	if err := testservers.CreateGCSBucket(ctx, name); err != nil {
		b.Fatal(err)
	}
	bk, err := gcsbucket.New(ctx, name, "")
	if err != nil {
		b.Fatal(err)
	}
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
	b.Logf("fake-gcs-server: ready in %v, RSS %d KiB", srv.Startup.Round(time.Millisecond), srv.RSS())
}

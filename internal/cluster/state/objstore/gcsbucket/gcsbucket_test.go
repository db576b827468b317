package gcsbucket_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
	// The stores of one test share a prefix of the bucket (two nuvs on one store).
	statetest.Run(t, objstoretest.StoreBackend(func(t *testing.T) objstore.Bucket {
		nb, err := gcsbucket.New(context.Background(), strings.TrimPrefix(b.Where(), "gs://"), t.Name())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nb.(*gcsbucket.Bucket).Close() })
		return nb
	}))
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
	b, name := newBucket(t, "p")
	objstoretest.RefusedWrites(t, b, objstoretest.Words{Version: "generation", AVersion: "a generation", Object: "object", AnObject: "an object"}, func(t *testing.T, _ int, want error, msg string) {
		if !strings.Contains(msg, "gs://"+name+"/p") || !strings.Contains(msg, "p/records/") {
			t.Errorf("%q does not name the store and the object", msg)
		}
		if want == objstore.ErrPrecondition && !strings.Contains(msg, "412") && !strings.Contains(msg, "gone") && !strings.Contains(msg, "404") {
			t.Errorf("%q does not give the server's answer", msg)
		}
	})
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
	objstoretest.Bench(b, bk, "fake-gcs-server", srv)
}

package s3bucket_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/history"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/objstoretest"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/s3bucket"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/servertest"
	"github.com/nuv-dev/nuv/internal/cluster/state/statetest"
)

func TestMain(m *testing.M) { os.Exit(servertest.Main(m)) }

func open(t *testing.T, bucket, prefix string) *s3bucket.Bucket {
	t.Helper()
	b, err := s3bucket.New(context.Background(), bucket, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestIntegrationBucket(t *testing.T) {
	name := servertest.S3Bucket(t)
	t.Logf("SeaweedFS %s answered in %s", servertest.SeaweedFSVersion, servertest.S3(t).StartTime.Round(1e6))
	objstoretest.Run(t, open(t, name, servertest.UniqueName()+"/nuv"))
	if w := open(t, name, "team/nuv/").Where(); w != "s3://"+name+"/team/nuv" {
		t.Errorf("Where = %q", w)
	}
	if w := open(t, name, "").Where(); w != "s3://"+name {
		t.Errorf("Where = %q", w)
	}
}

func TestIntegrationMissingBucket(t *testing.T) {
	servertest.S3(t)
	objstoretest.CheckMissing(t, open(t, "nuv-no-such-bucket", ""), "nuv-no-such-bucket")
	s := objstore.New(open(t, "nuv-no-such-bucket", "p"))
	err := s.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "nuv-no-such-bucket") || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("Check of a store in a missing bucket: %v", err)
	}
}

// backend: the stores of one test share one prefix of one bucket (two nuvs on one store).
func backend(t *testing.T) statetest.Backend {
	name := servertest.S3Bucket(t)
	var mu sync.Mutex
	prefixes := map[*testing.T]string{}
	return statetest.Backend{
		New: func(t *testing.T) state.Store {
			mu.Lock()
			defer mu.Unlock()
			p, ok := prefixes[t]
			if !ok {
				p = servertest.UniqueName()
				prefixes[t] = p
			}
			return objstore.New(open(t, name, p))
		},
		Corrupt: func(t *testing.T, s state.Store, rec string) {
			if _, err := s.(*objstore.Store).Bucket().Put(context.Background(), objstore.RecordKey(rec), []byte("{not json"), objstore.Cond{}); err != nil {
				t.Fatal(err)
			}
		},
	}
}

func TestIntegrationStore(t *testing.T) { statetest.Run(t, backend(t)) }

func TestIntegrationHistory(t *testing.T) {
	ctx := context.Background()
	h, err := history.ForState(objstore.New(open(t, servertest.S3Bucket(t), servertest.UniqueName())))
	if err != nil || h == nil {
		t.Fatalf("ForState: %v %v", h, err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h.Add(ctx, "local", history.Sample{Kind: "node", Action: "create", Seconds: float64(i)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got, err := h.Load(ctx, "local"); err != nil || len(got) != 6 {
		t.Fatalf("after 6 adds at once: %d samples, %v", len(got), err)
	}
}

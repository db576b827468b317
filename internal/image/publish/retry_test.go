package publish

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcr "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/nuv-dev/nuv/internal/cli"
)

// flaky answers 503 to the first upload attempts, then serves a real (in-process) registry.
type flaky struct {
	inner http.Handler
	fails atomic.Int32
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if (r.Method == http.MethodPost || r.Method == http.MethodPut) && f.fails.Add(-1) >= 0 {
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	f.inner.ServeHTTP(w, r)
}

func TestPushRetriesTransientFailuresAndReportsLayers(t *testing.T) {
	f := &flaky{inner: ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0)))}
	f.fails.Store(2)
	srv := httptest.NewServer(f)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	idx := twoPlatformIndex(t)
	ref, err := name.NewTag(host + "/nuv/retry:1")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	out, err := (&Remote{Log: cli.NewLogger(&logs, 0), Jobs: 1}).Publish(context.Background(), idx, ref)
	if err != nil {
		t.Fatalf("push through two 503s: %v", err)
	}
	if f.fails.Load() >= 0 {
		t.Fatalf("the registry never failed (fails left %d): the retry path was not exercised", f.fails.Load())
	}
	want, _ := idx.Digest()
	if !strings.HasSuffix(out, "@"+want.String()) {
		t.Errorf("Publish returned %s, want digest %s", out, want)
	}
	if got, err := remote.Index(ref); err != nil {
		t.Errorf("pushed index not readable: %v", err)
	} else if d, _ := got.Digest(); d != want {
		t.Errorf("registry has %s, pushed %s", d, want)
	}
	if n := strings.Count(logs.String(), "pushed layer"); n != 2 {
		t.Errorf("want one progress line per layer (2), got %d:\n%s", n, logs.String())
	}
}

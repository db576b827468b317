package awsmachines

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestProberCounts runs the roll's API prober against a real HTTP server on loopback that stops
// answering /readyz for a while: every request is counted, the failed ones too, and the longest
// gap covers the outage.
func TestProberCounts(t *testing.T) {
	var down atomic.Bool
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		served.Add(1)
		if down.Load() {
			http.Error(w, "etcd: not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	kc := []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + srv.URL + `"}}]
users: [{name: u, user: {token: secret}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`)
	every := rollProbeEvery
	rollProbeEvery = 20 * time.Millisecond
	defer func() { rollProbeEvery = every }()
	pr, err := startProber(t.Context(), kc)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	down.Store(true)
	time.Sleep(500 * time.Millisecond)
	down.Store(false)
	time.Sleep(200 * time.Millisecond)
	rep := pr.stop()
	if again := pr.stop(); again != rep {
		t.Errorf("a second stop says %v, the first %v", again, rep)
	}
	if rep.Requests < 5 || int64(rep.Requests) > served.Load() {
		t.Errorf("%d requests counted, %d served", rep.Requests, served.Load())
	}
	if rep.Failed == 0 || rep.Failed >= rep.Requests {
		t.Errorf("%d of %d requests failed; want some during the outage only", rep.Failed, rep.Requests)
	}
	if rep.LongestGap < 500*time.Millisecond || rep.LongestGap > 5*time.Second {
		t.Errorf("longest gap %s; want the 500ms outage and a little", rep.LongestGap)
	}
	t.Logf("probe: %s", rep)
}

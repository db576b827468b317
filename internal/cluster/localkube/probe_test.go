package localkube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestProbeBoundedByDeadline: a cluster whose API accepts connections and never answers (a
// stopped or wedged kube-apiserver) costs its probe the deadline, not the client's retries: the
// probe returns a timeout, and status reports the nodes as unknown.
func TestProbeBoundedByDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never read from or answered
			mu.Unlock()
			accepted <- struct{}{}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	dir := t.TempDir()
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: wedged
  cluster: {server: "https://%s", insecure-skip-tls-verify: true}
contexts:
- name: wedged
  context: {cluster: wedged, user: admin}
current-context: wedged
users:
- name: admin
  user: {token: probe}
`, ln.Addr())
	if err := os.MkdirAll(filepath.Join(dir, "config"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config", "admin.kubeconfig"), []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}

	type result struct{ err error }
	done := make(chan result, 1)
	const deadline = 300 * time.Millisecond
	go func() {
		_, _, err := probeNodes(context.Background(), dir, deadline)
		done <- result{err}
	}()
	select {
	case r := <-done:
		if r.err == nil {
			t.Fatal("probe of an API that never answers succeeded")
		}
		var ne net.Error
		if !errors.Is(r.err, context.DeadlineExceeded) && !(errors.As(r.err, &ne) && ne.Timeout()) {
			t.Fatalf("probe error = %v, want a timeout", r.err)
		}
	case <-time.After(time.Minute): // a hang, not a timing: the deadline and the admin config's 10 s are far shorter
		t.Fatal("probe of an API that never answers did not return")
	}
	select {
	case <-accepted:
	default:
		t.Fatal("the probe never connected to the listener (the test proves nothing)")
	}
}

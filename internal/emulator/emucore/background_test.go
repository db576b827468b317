package emucore

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// testEmulator counts its reconcile ticks and records its start and close.
type testEmulator struct {
	mu     sync.Mutex
	bg     *Background
	addr   string
	ticks  int
	saves  int
	closed bool
}

func (e *testEmulator) Start(addr string) error {
	e.mu.Lock()
	e.addr = addr
	e.mu.Unlock()
	e.bg.Every(5*time.Millisecond, func() { e.mu.Lock(); e.ticks++; e.mu.Unlock() })
	return nil
}

func (e *testEmulator) Close() error {
	return e.bg.StopAndSave(&e.mu, func() error { e.saves++; e.closed = true; return nil })
}

func TestServeStartsServesAndCloses(t *testing.T) {
	e := &testEmulator{bg: NewBackground()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), ReadHeaderTimeout: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, e, srv) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err == nil {
			resp.Body.Close()
			e.mu.Lock()
			ticks := e.ticks
			e.mu.Unlock()
			if ticks > 1 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the emulator did not serve and tick: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve after cancel: %v", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.addr != ln.Addr().String() || !e.closed || e.saves != 1 || e.bg.Ctx().Err() == nil {
		t.Fatalf("after serve: addr %q closed %v saves %d", e.addr, e.closed, e.saves)
	}
}

func TestServeFailureCloses(t *testing.T) {
	e := &testEmulator{bg: NewBackground()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // serving fails at once
	err = Serve(context.Background(), ln, e, &http.Server{ReadHeaderTimeout: time.Second})
	if err == nil || !e.closed {
		t.Fatalf("serve on a closed listener: %v, closed %v", err, e.closed)
	}
}

func TestSpawn(t *testing.T) {
	var mu sync.Mutex
	jobs := map[string]bool{}
	b := NewBackground()
	release := make(chan struct{})
	applied := make(chan string, 4)
	mu.Lock()
	b.Spawn(&mu, jobs, "k", func(ctx context.Context) func() {
		<-release
		return func() { applied <- "first" }
	})
	b.Spawn(&mu, jobs, "k", func(ctx context.Context) func() { return func() { applied <- "second" } }) // k runs: not started
	if !jobs["k"] {
		t.Fatal("a running job is not recorded")
	}
	mu.Unlock()
	close(release)
	if got := <-applied; got != "first" {
		t.Fatalf("applied %s", got)
	}
	// The key is free once the work is applied (under the lock).
	mu.Lock()
	running := jobs["k"]
	mu.Unlock()
	if running {
		t.Fatal("the key stays taken after the work ended")
	}

	// Work that ends after Stop is not applied; Stop waits for it.
	started := make(chan struct{})
	mu.Lock()
	b.Spawn(&mu, jobs, "late", func(ctx context.Context) func() {
		close(started)
		<-ctx.Done()
		return func() { applied <- "late" }
	})
	mu.Unlock()
	<-started
	b.Stop()
	select {
	case got := <-applied:
		t.Fatalf("work applied after stop: %s", got)
	default:
	}
	mu.Lock()
	b.Spawn(&mu, jobs, "after", func(ctx context.Context) func() { return func() { applied <- "after" } })
	mu.Unlock()
	if jobs["after"] {
		t.Fatal("a stopped Background started work")
	}
	if !errors.Is(b.Ctx().Err(), context.Canceled) {
		t.Fatalf("ctx after stop: %v", b.Ctx().Err())
	}
}

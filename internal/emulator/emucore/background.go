package emucore

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// Background is an emulator server's background work: a reconcile loop and keyed jobs (a control
// plane being started, a cluster being deleted), all stopped together when the server closes.
type Background struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewBackground is background work not yet stopped.
func NewBackground() *Background {
	b := &Background{}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	return b
}

// Ctx ends when the work is stopped.
func (b *Background) Ctx() context.Context { return b.ctx }

// Every calls f every d until the work is stopped.
func (b *Background) Every(d time.Duration, f func()) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-b.ctx.Done():
				return
			case <-t.C:
				f()
			}
		}
	}()
}

// Spawn runs work in the background unless work of the same key runs (jobs, guarded by mu, which
// the caller holds) or the work is stopped. The function work returns (nil: nothing) is then
// applied with mu held, unless the work was stopped meanwhile (the next start of the emulator does
// it again); the key is free again either way.
func (b *Background) Spawn(mu *sync.Mutex, jobs map[string]bool, key string, work func(ctx context.Context) func()) {
	if jobs[key] || b.ctx.Err() != nil {
		return
	}
	jobs[key] = true
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		apply := work(b.ctx)
		mu.Lock()
		defer mu.Unlock()
		delete(jobs, key)
		if apply != nil && b.ctx.Err() == nil {
			apply()
		}
	}()
}

// Stop ends the work and waits for it.
func (b *Background) Stop() {
	b.cancel()
	b.wg.Wait()
}

// ServeUntil runs serve (srv's Serve or ServeTLS on a listener) until ctx ends, then shuts srv
// down (5s at most) and closes the emulator with closeFn; when serve fails first it closes the
// emulator and returns serve's error.
func ServeUntil(ctx context.Context, srv *http.Server, serve func() error, closeFn func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return closeFn()
	case err := <-errc:
		_ = closeFn()
		return err
	}
}

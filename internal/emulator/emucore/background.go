package emucore

import (
	"context"
	"net"
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

// StopAndSave ends the work, waits for it, then calls save with mu held: what an emulator's Close
// does (work still running is left for its next start).
func (b *Background) StopAndSave(mu *sync.Mutex, save func() error) error {
	b.Stop()
	mu.Lock()
	defer mu.Unlock()
	return save()
}

// Emulator is a server Serve runs: Start records the address it listens on and starts its
// background work; Close stops that work and saves its state.
type Emulator interface {
	Start(addr string) error
	Close() error
}

// Serve starts e on ln's address and serves srv on ln (TLS when srv has a TLSConfig) until ctx
// ends, then shuts srv down (5s at most) and closes e; when serving fails first it closes e and
// returns that error.
func Serve(ctx context.Context, ln net.Listener, e Emulator, srv *http.Server) error {
	if err := e.Start(ln.Addr().String()); err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		if srv.TLSConfig != nil {
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return e.Close()
	case err := <-errc:
		_ = e.Close()
		return err
	}
}

package emucore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
)

// Spec says what makes one emulator: its names, where it keeps its state, how a fresh state is
// made and a loaded one checked, how it writes JSON, what its health answers and what its
// reconcile loop does. S is its state (saved whole to <Dir>/state.json), F its fault type.
type Spec[S any, F any] struct {
	// Name starts the answers of the admin endpoints ("nuv emulator", "nuv GKE emulator").
	Name string
	// What names the emulator in logs and errors ("emulator", "azure emulator", "GKE emulator").
	What string
	// Dir holds state.json, faults.json, the admin token and the control planes.
	Dir string
	// Delay is how long resources stay in their transitional statuses at least.
	Delay time.Duration
	// Log receives what the emulator does (never secrets); nil is quiet.
	Log cli.Logger
	// Scheme is how clients reach it: "http", or "https" with TLS set.
	Scheme string
	TLS    *tls.Config

	// State opens and checks the persisted state.
	State StateSpec[S]
	// SetAddr records in the state the address the emulator listens on.
	SetAddr func(st *S, addr string)
	// OnStart runs once the address is known (Base set), with Mu held, before the state is saved.
	OnStart func(addr string) error
	// Reconcile moves what is due at t to its next status, with Mu held; true saves the state.
	Reconcile func(t time.Time) bool
	// Health is what /_nuv/health answers (never a secret).
	Health func(st *S) any
	// DecodeFaults reads faults (one object or a list) for /_nuv/faults and faults.json.
	DecodeFaults func([]byte) ([]*F, error)
	// WriteJSON writes the emulator's JSON answers.
	WriteJSON func(w http.ResponseWriter, status int, v any)
}

// Kernel is what every emulator server is made of: its state under one lock, saved atomically
// (0600) after each change; the faults injected and the calls counted per operation; the jobs
// running in the background and its reconcile loop; its admin endpoints; and its lifecycle (New,
// Start, Close, Serve). An emulator's Server embeds it and adds its services' operations.
type Kernel[S any, F any] struct {
	Dir   string
	Delay time.Duration
	Log   cli.Logger
	TLS   *tls.Config

	// Mu guards everything below.
	Mu sync.Mutex
	// St is the state; every change is saved (Save) before it is answered.
	St *S
	// Faults are the injected faults; Calls counts the calls per operation (HitFault).
	Faults []*F
	Calls  map[string]int
	// Jobs are the keys of the background work running (Spawn) and of what a job marked done.
	Jobs map[string]bool
	// Base is the URL the emulator answers at (scheme://127.0.0.1:port) once started.
	Base string

	// BG is the reconcile loop and the jobs, stopped together by Close.
	BG *Background
	// AdminToken is what the admin endpoints require (AdminAllowed).
	AdminToken string

	spec Spec[S, F]
}

// NewKernel opens (or initialises) the state in spec.Dir, makes the admin token if there is none
// and reads <dir>/faults.json if present.
func NewKernel[S any, F any](spec Spec[S, F]) (*Kernel[S, F], error) {
	if spec.Dir == "" {
		return nil, errors.New(spec.What + ": no state directory")
	}
	if spec.Log == nil {
		spec.Log = cli.Quiet()
	}
	if spec.Scheme == "" {
		spec.Scheme = "http"
	}
	if spec.State.What == "" {
		spec.State.What = spec.What
	}
	st, err := spec.State.Open(spec.Dir)
	if err != nil {
		return nil, err
	}
	k := &Kernel[S, F]{Dir: spec.Dir, Delay: spec.Delay, Log: spec.Log, TLS: spec.TLS, St: st,
		Calls: map[string]int{}, Jobs: map[string]bool{}, BG: NewBackground(), spec: spec}
	if k.AdminToken, err = EnsureAdminToken(spec.Dir); err != nil {
		return nil, err
	}
	if k.Faults, err = ReadFaultsFile(filepath.Join(spec.Dir, "faults.json"), spec.DecodeFaults); err != nil {
		return nil, err
	}
	return k, nil
}

// Save writes the state atomically, 0600. Mu is held.
func (k *Kernel[S, F]) Save() error { return k.spec.State.Save(k.Dir, k.St) }

// saveOrWarn saves the state from background work, which has no caller to return an error to.
func (k *Kernel[S, F]) saveOrWarn() {
	if err := k.Save(); err != nil {
		k.Log.Warnf("%s: %v", k.spec.What, err)
	}
}

// BaseURL is Base read under the lock.
func (k *Kernel[S, F]) BaseURL() string {
	k.Mu.Lock()
	defer k.Mu.Unlock()
	return k.Base
}

// Start records the address the emulator answers at (Base, and in the state: a restart takes it
// again), runs the emulator's OnStart and starts the reconcile loop.
func (k *Kernel[S, F]) Start(addr string) error {
	k.Mu.Lock()
	k.Base = k.spec.Scheme + "://" + addr
	var err error
	if k.spec.OnStart != nil {
		err = k.spec.OnStart(addr)
	}
	if k.spec.SetAddr != nil {
		k.spec.SetAddr(k.St, addr)
	}
	if err == nil {
		err = k.Save()
	}
	k.Mu.Unlock()
	if err != nil {
		return err
	}
	if k.spec.Reconcile != nil {
		k.BG.Every(100*time.Millisecond, func() {
			k.Mu.Lock()
			defer k.Mu.Unlock()
			if k.spec.Reconcile(time.Now()) {
				k.saveOrWarn()
			}
		})
	}
	return nil
}

// Close stops the background work (what is in progress is picked up by the next start) and
// saves the state.
func (k *Kernel[S, F]) Close() error { return k.BG.StopAndSave(&k.Mu, k.Save) }

// Serve serves handler on ln until ctx ends (TLS when the emulator has it; configure, if not
// nil, adjusts the http.Server), then shuts down and closes the kernel.
func (k *Kernel[S, F]) Serve(ctx context.Context, ln net.Listener, handler http.Handler, configure func(*http.Server)) error {
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, TLSConfig: k.TLS}
	if configure != nil {
		configure(srv)
	}
	return Serve(ctx, ln, k, srv)
}

// Spawn runs work in the background unless work of the same key runs; the function work returns
// is applied under the lock, then the state is saved. Mu is held.
func (k *Kernel[S, F]) Spawn(key string, work func(ctx context.Context) func()) {
	k.BG.Spawn(&k.Mu, k.Jobs, key, func(ctx context.Context) func() {
		apply := work(ctx)
		if apply == nil {
			return nil
		}
		return func() {
			apply()
			k.saveOrWarn()
		}
	})
}

// HitFault counts a call of op and returns the first fault that applies to it and fires by its
// limits (nil: none). Mu is held.
func (k *Kernel[S, F]) HitFault(op string, applies func(*F) bool) *F {
	k.Calls[op]++
	return Hit(k.Faults, k.Calls[op], applies)
}

// FaultsEndpoint is /_nuv/faults over the kernel's faults.
func (k *Kernel[S, F]) FaultsEndpoint() FaultsEndpoint[F] {
	return FaultsEndpoint[F]{Name: k.spec.Name, Mu: &k.Mu, List: &k.Faults, Decode: k.spec.DecodeFaults, WriteJSON: k.spec.WriteJSON, AdminToken: k.AdminToken}
}

// FaultList copies the faults (with their counts).
func (k *Kernel[S, F]) FaultList() []F { return k.FaultsEndpoint().Snapshot() }

// ServeAdmin serves the emulator's own endpoints under /_nuv/: health, faults and, when
// tokenReview is set, the token webhook of its control planes (/_nuv/<reviewPath><control plane>).
func (k *Kernel[S, F]) ServeAdmin(w http.ResponseWriter, r *http.Request, reviewPath string, tokenReview func(w http.ResponseWriter, r *http.Request, name string)) {
	p := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/"), "_nuv/")
	switch {
	case p == "health":
		k.Mu.Lock()
		h := k.spec.Health(k.St)
		k.Mu.Unlock()
		k.spec.WriteJSON(w, http.StatusOK, h)
	case p == "faults":
		k.FaultsEndpoint().ServeHTTP(w, r)
	case tokenReview != nil && strings.HasPrefix(p, reviewPath):
		tokenReview(w, r, strings.TrimPrefix(p, reviewPath))
	default:
		http.Error(w, fmt.Sprintf("%s: no admin endpoint %s (health, faults, %s<cluster>)", k.spec.Name, r.URL.Path, reviewPath), http.StatusNotFound)
	}
}

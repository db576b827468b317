// Package state is the lifecycle engine's state store: one record per cluster (its spec, its
// lifecycle phase, every resource made for it with its identifier) and one lock per cluster.
//
// Two backends implement Store and pass the same conformance suite (statetest): a directory under
// NUV_HOME (the default; one JSON file per cluster, written atomically) and Kubernetes (one Secret
// per cluster and a Lease as its lock, in a namespace of a cluster the team shares). Records are
// written after every step of an apply, so an interrupted apply resumes from them.
package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/proc"
)

// Phase is where a cluster is in its lifecycle.
type Phase string

// Lifecycle phases (ksctl's): what an operation may do depends on them.
const (
	Creating       Phase = "creating"
	CreationFailed Phase = "creation_failed"
	Running        Phase = "running"
	Updating       Phase = "updating"
	UpdateFailed   Phase = "update_failed"
	Deleting       Phase = "deleting"
	DeletionFailed Phase = "deletion_failed"
)

// Failed returns the failure phase of an operation that started in phase p.
func (p Phase) Failed() Phase {
	switch p {
	case Creating:
		return CreationFailed
	case Deleting:
		return DeletionFailed
	}
	return UpdateFailed
}

// Record is what the store keeps about one cluster.
type Record struct {
	Name     string `json:"name"`
	Provider string `json:"provider"`
	Phase    Phase  `json:"phase"`
	// Spec is the spec last applied (or being applied).
	Spec *spec.Cluster `json:"spec,omitempty"`
	// Resources lists every resource made for the cluster, in the order they were made.
	Resources []cluster.Resource `json:"resources,omitempty"`
	// ExpiresAt, if set, is when `nuv cluster gc` may delete the cluster: set from spec.ttl when a
	// cluster is created or its ttl changes, moved by `nuv cluster extend`.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	// Error is the last failure, until an operation succeeds.
	Error   string    `json:"error,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Generation counts writes; a backend refuses a write based on an older generation.
	Generation int64 `json:"generation"`
	// Data is what the provider keeps about the cluster beyond its spec and resources, in the
	// provider's own typed form (SetData, DataInto): the local provider's control plane records
	// its ports, binaries and API address here.
	Data json.RawMessage `json:"data,omitempty"`
}

// SetData stores v (a provider's own type) as the record's provider data.
func (r *Record) SetData(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("provider data of cluster %s: %w", r.Name, err)
	}
	r.Data = b
	return nil
}

// DataInto decodes the record's provider data into v; a record without any leaves v as it is.
func (r *Record) DataInto(v any) error {
	if len(r.Data) == 0 {
		return nil
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		return fmt.Errorf("provider data of cluster %s: %w", r.Name, err)
	}
	return nil
}

// WriteFile writes r to path atomically (0600), as its next version (generation bumped,
// timestamps set), and updates r to it: for a provider that keeps a record of its own beside
// what it runs (the local provider, in its cluster's directory). The caller serialises writers.
func WriteFile(path string, r *Record) error {
	next, b, err := nextVersion(r)
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("save state of cluster %s: %w", r.Name, err)
	}
	*r = next
	return nil
}

// Expired reports whether the record's expiry passed at now.
func (r *Record) Expired(now time.Time) bool { return r.ExpiresAt != nil && !now.Before(*r.ExpiresAt) }

// Set records r (replacing the resource with the same key).
func (r *Record) Set(res cluster.Resource) {
	for i := range r.Resources {
		if r.Resources[i].Key() == res.Key() {
			r.Resources[i] = res
			return
		}
	}
	r.Resources = append(r.Resources, res)
}

// Remove forgets the resource with key.
func (r *Record) Remove(key string) {
	for i := range r.Resources {
		if r.Resources[i].Key() == key {
			r.Resources = append(r.Resources[:i], r.Resources[i+1:]...)
			return
		}
	}
}

// Holder identifies who holds a cluster's lock.
type Holder struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Start   uint64    `json:"start,omitempty"` // process start time (proc.Record), against PID reuse
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
	// ID is unique to one taking of the lock (set by the backend), so two takings by the same
	// process are told apart.
	ID string `json:"id,omitempty"`
	// Version names the very lock instance this holder was read from (the backend's
	// compare-and-swap token: the lock file's bytes, the Lease's resourceVersion); not stored.
	Version string `json:"-"`
}

func (h Holder) String() string {
	return fmt.Sprintf("%q (pid %d on %s, since %s)", h.Command, h.PID, h.Host, h.Since.Local().Format(time.TimeOnly))
}

// Gone reports whether the holder is known to have exited: it ran on this host and its process is
// gone (or is another process with its PID). A holder on another host is never known to be gone.
func (h Holder) Gone() bool {
	host, _ := os.Hostname()
	if h.Host != host {
		return false
	}
	return !proc.Record{PID: h.PID, Start: h.Start}.Alive()
}

// Me is the holder describing this process running command.
func Me(command string) Holder {
	host, _ := os.Hostname()
	_, start, _ := proc.Stat(os.Getpid())
	return Holder{Host: host, PID: os.Getpid(), Start: start, Command: command, Since: time.Now().UTC()}
}

// Store keeps records and locks. Implementations are safe for concurrent use by several processes.
type Store interface {
	// Check fails if the backend cannot be reached (before anything is changed).
	Check(ctx context.Context) error
	// Load returns the record of a cluster; ErrNoRecord if there is none; ErrCorrupt (wrapped, with
	// the record's location) if it cannot be read.
	Load(ctx context.Context, name string) (*Record, error)
	// Save writes a record atomically and bumps its Generation; ErrConflict if the stored record's
	// generation is not the one r was loaded with.
	Save(ctx context.Context, r *Record) error
	// Remove deletes a record (no error if absent).
	Remove(ctx context.Context, name string) error
	// List returns every record, sorted by name; corrupt ones are returned as errors beside them.
	List(ctx context.Context) ([]*Record, []error)
	// TryLock takes a cluster's lock for h, or returns the current holder (ErrLocked).
	TryLock(ctx context.Context, name string, h Holder) (unlock func() error, holder *Holder, err error)
	// Holder returns the lock's holder, nil if unlocked.
	Holder(ctx context.Context, name string) (*Holder, error)
	// TakeOver replaces the lock held by was (as TryLock or Holder returned it) with one held by h,
	// only if the lock is still that very instance: a compare-and-swap, so of any number of
	// contenders that saw the same holder exactly one wins. The others get ErrLocked and the
	// current holder (nil if the lock was released meanwhile).
	TakeOver(ctx context.Context, name string, was *Holder, h Holder) (unlock func() error, holder *Holder, err error)
	// Break removes a lock whatever its holder (`nuv cluster state unlock`).
	Break(ctx context.Context, name string) error
	// Where describes the backend for messages ("/home/u/.nuv/state", "kube:nuv-state@team").
	Where() string
}

// Errors of stores; test with errors.Is.
var (
	ErrNoRecord = errors.New("no state record")
	ErrCorrupt  = errors.New("state record is corrupt")
	ErrConflict = errors.New("state record was changed by someone else")
	ErrLocked   = errors.New("cluster is locked")
)

// Lock takes a cluster's lock, waiting at most wait for a live holder. A holder that is gone (a
// nuv killed on this host) is taken over at once (compare-and-swap on that holder's lock, so two
// nuvs that found the same dead holder never both get it) and note is told. On timeout the error
// names the holder.
func Lock(ctx context.Context, s Store, name string, h Holder, wait time.Duration, note func(string)) (func() error, error) {
	deadline := time.Now().Add(wait)
	told := false
	for {
		unlock, holder, err := s.TryLock(ctx, name, h)
		if err == nil {
			return unlock, nil
		}
		if !errors.Is(err, ErrLocked) || holder == nil {
			return nil, err
		}
		if holder.Gone() {
			unlock, cur, err := s.TakeOver(ctx, name, holder, h)
			if err == nil {
				if note != nil {
					note(fmt.Sprintf("the lock of cluster %s was held by %s, which is gone: taking it over", name, holder))
				}
				return unlock, nil
			}
			if !errors.Is(err, ErrLocked) {
				return nil, err
			}
			if cur == nil || cur.Gone() {
				continue // released meanwhile, or another dead holder: look again
			}
			holder = cur // someone else took it over first
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("cluster %s: %w by %s; waited %s (if that nuv is gone for good, `nuv cluster state unlock %s` releases it)",
				name, ErrLocked, holder, wait.Round(time.Second), name)
		}
		if !told && note != nil {
			note(fmt.Sprintf("waiting for %s, which holds the lock of cluster %s", holder, name))
			told = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Open returns the store a location names: "" or "dir:PATH" or a plain path is the directory
// backend (default home/state); "kube:NAMESPACE@KUBECONFIG" (or "kube:NAMESPACE" with the selected
// cluster's kubeconfig, given as defaultKubeconfig) is the Kubernetes backend.
func Open(location, home, defaultKubeconfig string) (Store, error) {
	switch {
	case location == "":
		return Dir{Path: paths.Locator{Home: home}.StateStore()}, nil
	case strings.HasPrefix(location, "kube:"):
		ns, kc, _ := strings.Cut(strings.TrimPrefix(location, "kube:"), "@")
		if kc == "" {
			kc = defaultKubeconfig
		}
		if ns == "" || kc == "" {
			return nil, &LocationError{location, "want kube:NAMESPACE@KUBECONFIG"}
		}
		return NewKube(kc, ns)
	case strings.HasPrefix(location, "dir:"):
		return Dir{Path: strings.TrimPrefix(location, "dir:")}, nil
	case strings.Contains(location, ":") && !strings.HasPrefix(location, "/"):
		return nil, &LocationError{location, "unknown kind (valid: dir:PATH, kube:NAMESPACE@KUBECONFIG)"}
	}
	return Dir{Path: location}, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// LocationError is a state store location that does not parse (bad input, not a failure).
type LocationError struct{ Location, Msg string }

func (e *LocationError) Error() string { return fmt.Sprintf("state store %q: %s", e.Location, e.Msg) }

// nextVersion is r as the next write stores it (generation bumped, timestamps set) and its JSON.
func nextVersion(r *Record) (Record, []byte, error) {
	next := *r
	next.Generation++
	next.Updated = time.Now().UTC()
	if next.Created.IsZero() {
		next.Created = next.Updated
	}
	b, err := json.MarshalIndent(&next, "", "  ")
	return next, b, err
}

// DecodeRecord decodes a stored record of cluster name read from where (for messages); ErrCorrupt
// (wrapped, naming where) if it cannot be read or names another cluster. For stores outside this
// package.
func DecodeRecord(where, name string, b []byte) (*Record, error) { return decodeRecord(where, name, b) }

// NextVersion is r as its next write stores it (generation bumped, timestamps set) and its JSON.
// For stores outside this package: they write the JSON and, once it is stored, set *r to it.
func NextVersion(r *Record) (Record, []byte, error) { return nextVersion(r) }

// NewLockID is a random identifier of one taking of a lock (Holder.ID).
func NewLockID() string { return newID() }

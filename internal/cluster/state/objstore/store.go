package objstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// The keys of a Store in its bucket.
const (
	recordsPrefix = "records/"
	locksPrefix   = "locks/"
	historyPrefix = "history/"
)

// RecordKey is the key of a cluster's record: records/NAME.json.
func RecordKey(name string) string { return recordsPrefix + name + ".json" }

// LockKey is the key of a cluster's lock: locks/NAME.json, the holder as JSON, present while held.
func LockKey(name string) string { return locksPrefix + name + ".json" }

// HistoryKey is the key of a provider's apply history: history/PROVIDER.json.
func HistoryKey(provider string) string { return historyPrefix + provider + ".json" }

// Store is the state.Store over a Bucket. Every record write is conditional: a new record is
// written only if absent, a changed one only if the stored object is still at the version its
// generation was read at, so two nuvs never lose each other's update (the loser gets
// state.ErrConflict). A lock is an object created only if absent; it is taken over by a write
// conditional on the version of the dead holder's object (so of many contenders exactly one
// wins) and released by a delete conditional on the version of one's own taking (so a lock taken
// over or broken meanwhile is never released by its former holder).
type Store struct {
	b Bucket

	mu   sync.Mutex
	seen map[string]seen // record name -> the version last read or written and its generation
}

type seen struct {
	generation int64
	version    string
}

// New is the Store over b.
func New(b Bucket) *Store { return &Store{b: b, seen: map[string]seen{}} }

var _ state.Store = (*Store)(nil)

// Bucket is the bucket the store keeps its objects in.
func (s *Store) Bucket() Bucket { return s.b }

// Where names the bucket ("s3://team-state/nuv").
func (s *Store) Where() string { return s.b.Where() }

// Check fails if the bucket cannot be reached or does not exist.
func (s *Store) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := s.b.Check(ctx); err != nil {
		return fmt.Errorf("state store %s cannot be used: %w", s.Where(), err)
	}
	return nil
}

func (s *Store) remember(name string, generation int64, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if version == "" {
		delete(s.seen, name)
		return
	}
	s.seen[name] = seen{generation, version}
}

func (s *Store) recall(name string) (seen, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.seen[name]
	return v, ok
}

func (s *Store) where(key string) string { return s.Where() + " (object " + key + ")" }

// Load reads a record.
func (s *Store) Load(ctx context.Context, name string) (*state.Record, error) {
	r, _, err := s.load(ctx, name)
	return r, err
}

func (s *Store) load(ctx context.Context, name string) (*state.Record, string, error) {
	key := RecordKey(name)
	b, version, err := s.b.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return nil, "", fmt.Errorf("cluster %s: %w", name, state.ErrNoRecord)
	}
	if err != nil {
		return nil, "", fmt.Errorf("state of cluster %s in %s: %w", name, s.Where(), err)
	}
	r, err := state.DecodeRecord(s.where(key), name, b)
	if err != nil {
		return nil, "", err
	}
	s.remember(name, r.Generation, version)
	return r, version, nil
}

// Save writes a record if the stored one is still at the generation r was loaded with.
func (s *Store) Save(ctx context.Context, r *state.Record) error {
	next, b, err := state.NextVersion(r)
	if err != nil {
		return err
	}
	var c Cond
	if r.Generation == 0 {
		c.Absent = true
	} else {
		at, ok := s.recall(r.Name)
		if !ok || at.generation != r.Generation {
			cur, version, err := s.load(ctx, r.Name)
			if errors.Is(err, state.ErrNoRecord) {
				return fmt.Errorf("cluster %s: %w (the record was removed meanwhile)", r.Name, state.ErrConflict)
			}
			if err != nil {
				return err
			}
			if cur.Generation != r.Generation {
				return fmt.Errorf("cluster %s: %w (stored generation %d, ours %d)", r.Name, state.ErrConflict, cur.Generation, r.Generation)
			}
			at = seen{cur.Generation, version}
		}
		c.Version = at.version
	}
	version, err := s.b.Put(ctx, RecordKey(r.Name), append(b, '\n'), c)
	if errors.Is(err, ErrPrecondition) || (c.Version != "" && errors.Is(err, ErrNotFound)) {
		if c.Absent {
			return fmt.Errorf("cluster %s: %w (a record was created meanwhile)", r.Name, state.ErrConflict)
		}
		return fmt.Errorf("cluster %s: %w (the record changed since generation %d was read)", r.Name, state.ErrConflict, r.Generation)
	}
	if err != nil {
		return fmt.Errorf("save state of cluster %s in %s: %w", r.Name, s.where(RecordKey(r.Name)), err)
	}
	s.remember(r.Name, next.Generation, version)
	*r = next
	return nil
}

// Remove deletes a record.
func (s *Store) Remove(ctx context.Context, name string) error {
	err := s.b.Delete(ctx, RecordKey(name), "")
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("remove state of cluster %s from %s: %w", name, s.Where(), err)
	}
	s.remember(name, 0, "")
	return nil
}

// listParallel is how many records List reads at once.
const listParallel = 8

// List reads every record, several at once.
func (s *Store) List(ctx context.Context) ([]*state.Record, []error) {
	keys, err := s.b.List(ctx, recordsPrefix)
	if err != nil {
		return nil, []error{fmt.Errorf("list state in %s: %w", s.Where(), err)}
	}
	var names []string
	for _, k := range keys {
		n := strings.TrimPrefix(k, recordsPrefix)
		if strings.HasSuffix(n, ".json") && !strings.Contains(n, "/") {
			names = append(names, strings.TrimSuffix(n, ".json"))
		}
	}
	records := make([]*state.Record, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, listParallel)
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			records[i], errs[i] = s.Load(ctx, n)
		}()
	}
	wg.Wait()
	var out []*state.Record
	var bad []error
	for i := range names {
		switch {
		case errors.Is(errs[i], state.ErrNoRecord): // removed since listed
		case errs[i] != nil:
			bad = append(bad, errs[i])
		default:
			out = append(out, records[i])
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, bad
}

func holderJSON(h state.Holder) []byte {
	h.ID = state.NewLockID()
	b, _ := json.Marshal(h)
	return append(b, '\n')
}

// TryLock creates the lock object if absent.
func (s *Store) TryLock(ctx context.Context, name string, h state.Holder) (func() error, *state.Holder, error) {
	key := LockKey(name)
	for {
		version, err := s.b.Put(ctx, key, holderJSON(h), Cond{Absent: true})
		if err == nil {
			return s.unlocker(ctx, name, version), nil, nil
		}
		if !errors.Is(err, ErrPrecondition) {
			return nil, nil, fmt.Errorf("lock cluster %s in %s: %w", name, s.where(key), err)
		}
		cur, err := s.Holder(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		if cur != nil {
			return nil, cur, state.ErrLocked
		}
		if err := ctx.Err(); err != nil { // released meanwhile: try again
			return nil, nil, err
		}
	}
}

// TakeOver rewrites the lock object only if it is still at the version was was read at.
func (s *Store) TakeOver(ctx context.Context, name string, was *state.Holder, h state.Holder) (func() error, *state.Holder, error) {
	key := LockKey(name)
	if was != nil && was.Version != "" {
		version, err := s.b.Put(ctx, key, holderJSON(h), Cond{Version: was.Version})
		if err == nil {
			return s.unlocker(ctx, name, version), nil, nil
		}
		if !errors.Is(err, ErrPrecondition) && !errors.Is(err, ErrNotFound) {
			return nil, nil, fmt.Errorf("take over lock of cluster %s in %s: %w", name, s.where(key), err)
		}
	}
	cur, err := s.Holder(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	return nil, cur, state.ErrLocked
}

// unlocker deletes the lock object only while it is at version, our own taking.
func (s *Store) unlocker(ctx context.Context, name, version string) func() error {
	return func() error {
		err := s.b.Delete(context.WithoutCancel(ctx), LockKey(name), version)
		if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrPrecondition) {
			return fmt.Errorf("unlock cluster %s in %s: %w", name, s.where(LockKey(name)), err)
		}
		return nil
	}
}

// Holder reads the lock object.
func (s *Store) Holder(ctx context.Context, name string) (*state.Holder, error) {
	key := LockKey(name)
	b, version, err := s.b.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read lock of cluster %s in %s: %w", name, s.Where(), err)
	}
	var h state.Holder
	if json.Unmarshal(b, &h) != nil {
		h = state.Holder{Command: "unknown (" + s.where(key) + " holds no nuv holder)"}
	}
	h.Version = version
	return &h, nil
}

// Break deletes the lock object whatever its holder.
func (s *Store) Break(ctx context.Context, name string) error {
	err := s.b.Delete(ctx, LockKey(name), "")
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("release lock of cluster %s in %s: %w", name, s.Where(), err)
	}
	return nil
}

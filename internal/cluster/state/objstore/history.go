package objstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/history"
)

// History keeps each provider's apply history in the object history/PROVIDER.json of a bucket.
// Add reads, merges and writes back conditionally on the version read (only if absent for a
// first write), retrying when another nuv wrote between, so two nuvs adding at once both land.
type History struct{ B Bucket }

var _ history.Store = History{}

// HistoryStore is the history beside the store's records (history.ForState finds it).
func (s *Store) HistoryStore() history.Store { return History{B: s.b} }

var _ history.Keeper = (*Store)(nil)

// Load reads a provider's samples.
func (h History) Load(ctx context.Context, provider string) ([]history.Sample, error) {
	samples, _, err := h.load(ctx, provider)
	return samples, err
}

func (h History) load(ctx context.Context, provider string) ([]history.Sample, string, error) {
	key := HistoryKey(provider)
	b, version, err := h.B.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("apply history in %s: %w", h.B.Where(), err)
	}
	s, err := history.Decode(h.B.Where()+" (object "+key+")", b)
	return s, version, err
}

// addAttempts is how many read-merge-write rounds Add tries before giving up.
const addAttempts = 20

// Add records samples.
func (h History) Add(ctx context.Context, provider string, add ...history.Sample) error {
	key := HistoryKey(provider)
	for attempt := 0; ; attempt++ {
		have, version, err := h.load(ctx, provider)
		if err != nil && version == "" {
			return err
		}
		// an unreadable history is replaced, not a reason to fail an apply
		b, err := history.Encode(provider, history.Merge(have, add...))
		if err != nil {
			return err
		}
		c := Cond{Version: version, Absent: version == ""}
		_, err = h.B.Put(ctx, key, append(b, '\n'), c)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrPrecondition) && !errors.Is(err, ErrNotFound) || attempt == addAttempts-1 {
			return fmt.Errorf("apply history in %s: %w", h.B.Where(), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(10+rand.IntN(40)) * time.Millisecond):
		}
	}
}

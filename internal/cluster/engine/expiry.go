package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// Expired returns the records of the store whose expiry passed at now, of provider (every
// provider when ""), sorted by name, with the records that could not be read beside them.
func (e *Engine) Expired(ctx context.Context, now time.Time, provider string) ([]*state.Record, []error) {
	recs, errs := e.Store.List(ctx)
	var out []*state.Record
	for _, r := range recs {
		if r.Expired(now) && (provider == "" || r.Provider == provider) {
			out = append(out, r)
		}
	}
	return out, errs
}

// Extend moves the expiry of cluster name to by after the later of now and its current expiry
// (a cluster without one gets one: now + by), under the cluster's lock, and returns it.
func (e *Engine) Extend(ctx context.Context, name string, by time.Duration, now time.Time) (time.Time, error) {
	if by <= 0 || by > spec.MaxTTL {
		return time.Time{}, fmt.Errorf("extend by %s: want a positive duration of at most %dd", by, spec.MaxTTL/(24*time.Hour))
	}
	unlock, err := e.begin(ctx, name)
	if err != nil {
		return time.Time{}, err
	}
	defer unlock()
	rec, err := e.Store.Load(ctx, name)
	if err != nil {
		return time.Time{}, fmt.Errorf("cluster %s: %w", name, err)
	}
	from := now
	if rec.ExpiresAt != nil && rec.ExpiresAt.After(now) {
		from = *rec.ExpiresAt
	}
	t := from.Add(by).UTC().Truncate(time.Second)
	rec.ExpiresAt = &t
	if err := e.save(ctx, rec); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
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

// Owner is the id of this engine's state store in the nuv.dev/owner mark (state.OwnerOf).
func (e *Engine) Owner() string { return state.OwnerOf(e.Store) }

// marks are what the provider of the cluster rec records writes on its cloud resources.
func (e *Engine) marks(rec *state.Record) spec.Marks {
	return spec.Marks{ExpiresAt: rec.ExpiresAt, Owner: e.Owner()}
}

// remark writes the record's marks on the resources of a cluster that existed before (an Expirer's).
func (e *Engine) remark(ctx context.Context, p cluster.Provider, c *spec.Cluster, rec *state.Record) error {
	x, ok := p.(cluster.Expirer)
	if !ok {
		return nil
	}
	c.Marks = e.marks(rec)
	if err := x.Mark(context.WithoutCancel(ctx), c); err != nil {
		return fmt.Errorf("cluster %s is applied, but its cloud resources still carry the old expiry (run `nuv cluster extend` to tag them again): %w", c.Metadata.Name, err)
	}
	return nil
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// Extend moves the expiry of cluster name to by after the later of now and its current expiry
// (a cluster without one gets one: now + by), under the cluster's lock, and returns it. A cloud
// provider's cluster is tagged with the new expiry first (cluster.Expirer): if that fails the
// record keeps the old one, so the record never says later than the tags.
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
	p, err := e.Provider(rec.Provider)
	if err != nil {
		return time.Time{}, fmt.Errorf("cluster %s: %w", name, err)
	}
	if x, ok := p.(cluster.Expirer); ok && rec.Spec != nil {
		c := rec.Spec.Clone()
		c.Marks = spec.Marks{ExpiresAt: &t, Owner: e.Owner()}
		if err := x.Mark(ctx, c); err != nil {
			return time.Time{}, fmt.Errorf("extend %s: tag its cloud resources with the new expiry (the record keeps %s): %w", name, rec.ExpiresAt, err)
		}
	}
	rec.ExpiresAt = &t
	if err := e.save(ctx, rec); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// Lost is a cluster a provider found by nuv's tag that has no record in the store, or one gc
// leaves alone.
type Lost struct {
	cluster.Tagged
	Provider string
	// Skip, if set, says why gc leaves it alone (another owner, no owner, not expired, a record
	// of the same name for another provider); empty: gc deletes it (DeleteLost).
	Skip string
}

// Lost asks every cloud provider (cluster.Expirer; only provider when not "") for the clusters
// carrying nuv's tag and returns those the store has no record of, sorted by provider and name:
// the ones this store owns whose expiry passed at now to delete (DeleteLost), and with Skip set
// the ones gc must leave alone and says so: expired but owned by another store or by none, and
// this store's own that are not expired yet. A cluster of another owner that is not expired is no
// business of this gc and is left out. Providers that could not look are returned as errors.
func (e *Engine) Lost(ctx context.Context, now time.Time, provider string) ([]Lost, []error) {
	var out []Lost
	var errs []error
	owner := e.Owner()
	for _, pn := range e.ProviderNames() {
		if provider != "" && pn != provider {
			continue
		}
		x, ok := e.Providers[pn].(cluster.Expirer)
		if !ok {
			continue
		}
		found, err := x.Tagged(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: find clusters by tag: %w", pn, err))
			continue
		}
		for _, f := range found {
			rec, err := e.load(ctx, f.Name)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if rec != nil && rec.Provider == pn {
				continue // its record governs it
			}
			l := Lost{Tagged: f, Provider: pn}
			l.Skip = skipReason(f, rec, owner, now)
			if l.Skip == "" || l.ExpiresAt != nil && !now.Before(*l.ExpiresAt) || l.Owner == owner {
				out = append(out, l)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].Name < out[j].Name
	})
	return out, errs
}

// skipReason says why gc must not delete a cluster found by tag ("" if it may): this is gc's one
// safety rule for clusters without a record, checked when listing and again under the lock.
func skipReason(f cluster.Tagged, rec *state.Record, owner string, now time.Time) string {
	switch {
	case f.Err != nil:
		return fmt.Sprintf("its tags cannot be read: %v", f.Err)
	case rec != nil:
		return fmt.Sprintf("the store's record of %s is a %s cluster's", f.Name, rec.Provider)
	case f.Owner == "":
		return "no nuv.dev/owner tag: nuv cannot tell whose it is"
	case f.Owner != owner:
		return fmt.Sprintf("owned by another state store (%s; this one is %s)", f.Owner, owner)
	case f.ExpiresAt == nil:
		return "record lost; no expiry tag: it never expires"
	case now.Before(*f.ExpiresAt):
		return fmt.Sprintf("record lost; not expired: expires at %s", f.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return ""
}

// ErrNotReapable is DeleteLost's answer for a cluster that, under its lock, is no longer one gc
// may delete by tag (it got a record, another owner, or a later expiry); the error says why.
var ErrNotReapable = errors.New("gc leaves it alone")

// DeleteLost deletes a cluster of provider that has no record, found by its tags, only if, under
// its lock, the provider still finds it with this store as owner and an expiry passed at now, and
// the store still has no record of it: then it adopts the cluster (cluster.Adopter) and deletes
// everything nuv made for it as Delete does. The record it writes while deleting carries the
// expiry, so an interrupted gc is finished by the next one. A cluster gone meanwhile (deleted by
// another gc) is cluster.ErrNotFound.
func (e *Engine) DeleteLost(ctx context.Context, provider, name string, now time.Time) (*cluster.Plan, error) {
	p, err := e.Provider(provider)
	if err != nil {
		return nil, err
	}
	x, ok := p.(cluster.Expirer)
	a, ok2 := p.(cluster.Adopter)
	if !ok || !ok2 {
		return nil, fmt.Errorf("cluster %s: %w: %s finds no clusters by tag", name, cluster.ErrUnsupported, provider)
	}
	unlock, err := e.begin(ctx, name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, err := e.load(ctx, name)
	if err != nil {
		return nil, err
	}
	if rec != nil && rec.Provider == provider {
		// A gc that was interrupted, or ran at the same time: the record path decides.
		if !rec.Expired(now) {
			return nil, fmt.Errorf("cluster %s: %w", name, ErrNotExpired)
		}
		return e.deleteTargeted(ctx, name, rec.Spec, p, rec)
	}
	found, err := x.Tagged(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: find clusters by tag: %w", provider, err)
	}
	var f *cluster.Tagged
	for i := range found {
		if found[i].Name == name {
			f = &found[i]
		}
	}
	if f == nil {
		return nil, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	if why := skipReason(*f, rec, e.Owner(), now); why != "" {
		return nil, fmt.Errorf("cluster %s: %w: %s", name, ErrNotReapable, why)
	}
	c, err := a.Adopt(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: adopt it to delete it: %w", name, err)
	}
	rec = &state.Record{Name: name, Provider: provider, Spec: c, ExpiresAt: f.ExpiresAt, Phase: state.Deleting}
	return e.deleteTargeted(ctx, name, c, p, rec)
}

package clustercmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/history"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// migrate is `nuv cluster state migrate --to LOCATION`: it moves every record of e's store to the
// store at to, each under the cluster's lock in both stores: the record is written to the target
// (as a new record there), then removed from the source. A run that was interrupted is resumed by
// running it again: a record the target already has with the same content (a copy a killed run
// made) is only removed from the source; one the target has with other content is refused, named,
// and left in both stores. The apply history is merged into the target's (samples it already has
// are not added twice) and kept in the source.
func migrate(ctx context.Context, c *cmdCtx, e *engine.Engine, to string) error {
	dst, err := c.engineFor(to, "nuv cluster state migrate")
	if err != nil {
		return err
	}
	if dst.Store.Where() == e.Store.Where() {
		return cli.Usagef("nuv cluster state migrate: --to %s is the store the records are in", to)
	}
	if err := dst.Store.Check(ctx); err != nil {
		return err
	}
	recs, errs := e.Store.List(ctx)
	if len(errs) > 0 {
		return fmt.Errorf("nothing migrated: the source store %s has records that cannot be read (`nuv cluster state rm NAME` removes one):\n%w", e.Store.Where(), errors.Join(errs...))
	}
	me := state.Me("nuv cluster state migrate --to " + to)
	note := func(s string) { c.env.Log.Infof("%s", s) }
	var failed []error
	moved, resumed := 0, 0
	for _, r := range recs {
		was, err := migrateOne(ctx, e, dst, r.Name, me, note)
		switch {
		case err != nil:
			failed = append(failed, err)
		case was:
			resumed++
		default:
			moved++
		}
	}
	if err := migrateHistory(ctx, c, e, dst); err != nil {
		failed = append(failed, err)
	}
	fmt.Fprintf(c.env.Out, "moved %d records from %s to %s", moved, e.Store.Where(), dst.Store.Where())
	if resumed > 0 {
		fmt.Fprintf(c.env.Out, " (%d more had been copied by an interrupted run)", resumed)
	}
	fmt.Fprintln(c.env.Out)
	if len(failed) > 0 {
		return fmt.Errorf("%d records not moved (run the command again once fixed):\n%w", len(failed), errors.Join(failed...))
	}
	return nil
}

// migrateOne moves one record under both locks; resumed: the target already had it.
func migrateOne(ctx context.Context, src, dst *engine.Engine, name string, me state.Holder, note func(string)) (resumed bool, err error) {
	unlockSrc, err := state.Lock(ctx, src.Store, name, me, src.LockWait, note)
	if err != nil {
		return false, err
	}
	defer unlockSrc()
	unlockDst, err := state.Lock(ctx, dst.Store, name, me, dst.LockWait, note)
	if err != nil {
		return false, err
	}
	defer unlockDst()
	r, err := src.Store.Load(ctx, name)
	if errors.Is(err, state.ErrNoRecord) {
		return false, nil // removed meanwhile
	}
	if err != nil {
		return false, err
	}
	have, err := dst.Store.Load(ctx, name)
	switch {
	case errors.Is(err, state.ErrNoRecord):
		cp := *r
		cp.Generation = 0
		if err := dst.Store.Save(ctx, &cp); err != nil {
			return false, fmt.Errorf("cluster %s: copy to %s: %w (its record is still in %s)", name, dst.Store.Where(), err, src.Store.Where())
		}
	case err != nil:
		return false, err
	case !sameRecord(r, have):
		return false, fmt.Errorf("cluster %s: %s has another record of that name (created %s); left in both stores",
			name, dst.Store.Where(), have.Created.Local().Format(time.DateTime))
	default:
		resumed = true
	}
	if err := src.Store.Remove(ctx, name); err != nil {
		return resumed, fmt.Errorf("cluster %s: copied to %s, but not removed from %s: %w", name, dst.Store.Where(), src.Store.Where(), err)
	}
	return resumed, nil
}

// sameRecord: b is a copy of a (all but what a store sets on a write: generation, update time).
func sameRecord(a, b *state.Record) bool {
	x, y := *a, *b
	x.Generation, y.Generation = 0, 0
	x.Updated, y.Updated = time.Time{}, time.Time{}
	ja, err1 := json.Marshal(x)
	jb, err2 := json.Marshal(y)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// migrateHistory adds each provider's samples the target does not have yet.
func migrateHistory(ctx context.Context, c *cmdCtx, src, dst *engine.Engine) error {
	if src.History == nil || dst.History == nil {
		return nil
	}
	names := make([]string, 0, len(c.providers))
	for n := range c.providers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, p := range names {
		samples, err := src.History.Load(ctx, p)
		if err != nil || len(samples) == 0 {
			continue // an unreadable history is not worth failing a migration for
		}
		have, _ := dst.History.Load(ctx, p)
		seen := map[string]bool{}
		for _, s := range have {
			seen[sampleKey(s)] = true
		}
		var add []history.Sample
		for _, s := range samples {
			if !seen[sampleKey(s)] {
				add = append(add, s)
			}
		}
		if len(add) == 0 {
			continue
		}
		if err := dst.History.Add(ctx, p, add...); err != nil {
			return fmt.Errorf("apply history of %s: %w", p, err)
		}
	}
	return nil
}

func sampleKey(s history.Sample) string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%g\x00%s", s.Kind, s.Action, s.At.UTC().Format(time.RFC3339Nano), s.Seconds, s.Cluster)
}

package clustercmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// runGC is `nuv cluster gc`: delete the clusters of the state store whose expiry (spec.ttl, `nuv
// cluster extend`) passed. Each is deleted through the engine under its lock and only if, there,
// its record still says it expired, so a gc never deletes a cluster extended or re-created since
// it listed it, and two gcs at once delete each cluster once.
func runGC(ctx context.Context, c *cmdCtx, args []string) error {
	fs := flags(c.env, "gc")
	dryRun := fs.Bool("dry-run", false, "list the expired clusters and delete nothing")
	provider := fs.String("provider", "", "only clusters of this provider")
	waitFlag(fs, c)
	stateLoc := stateFlag(fs, c)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("nuv cluster gc: unexpected arguments %q", fs.Args())
	}
	if *provider != "" {
		if _, ok := c.providers[*provider]; !ok {
			e := engine.Engine{Providers: c.providers}
			return cli.Usagef("nuv cluster gc: unknown provider %q (valid: %s)", *provider, strings.Join(e.ProviderNames(), ", "))
		}
	}
	e, err := c.engineFor(*stateLoc, "nuv cluster gc")
	if err != nil {
		return err
	}
	now := time.Now()
	expired, unreadable := e.Expired(ctx, now, *provider)
	for _, err := range unreadable {
		c.env.Log.Warnf("%v", err)
	}
	if len(expired) == 0 {
		fmt.Fprintf(c.env.Out, "no expired clusters in %s\n", e.Store.Where())
		return nil
	}
	if *dryRun {
		for _, r := range expired {
			fmt.Fprintf(c.env.Out, "would delete %s (%s): %s\n", r.Name, r.Provider, expiredText(*r.ExpiresAt, now))
		}
		return nil
	}
	e.Out = nil
	results := make([]error, len(expired))
	var wg sync.WaitGroup
	for i, r := range expired {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, results[i] = e.DeleteExpired(ctx, r.Name, now)
		}()
	}
	wg.Wait()
	var errs []error
	deleted := 0
	for i, r := range expired {
		switch err := results[i]; {
		case err == nil:
			deleted++
			fmt.Fprintf(c.env.Out, "deleted %s (%s): %s\n", r.Name, r.Provider, expiredText(*r.ExpiresAt, now))
		case errors.Is(err, cluster.ErrNotFound):
			fmt.Fprintf(c.env.Out, "%s (%s): already deleted (by another nuv)\n", r.Name, r.Provider)
		case errors.Is(err, engine.ErrNotExpired):
			fmt.Fprintf(c.env.Out, "%s (%s): left alone: extended or re-created since it was listed\n", r.Name, r.Provider)
		default:
			errs = append(errs, fmt.Errorf("gc %s: %w", r.Name, err))
		}
	}
	fmt.Fprintf(c.env.Out, "gc: %d deleted, %d failed\n", deleted, len(errs))
	return errors.Join(errs...)
}

// expiredText is "expired 2h ago (2026-12-01T10:00:00Z)".
func expiredText(at, now time.Time) string {
	return fmt.Sprintf("expired %s ago (%s)", humanAge(now.Sub(at)), at.UTC().Format(time.RFC3339))
}

// runExtend is `nuv cluster extend NAME DURATION`: the cluster's expiry moves DURATION after the
// later of now and its current expiry.
func runExtend(ctx context.Context, c *cmdCtx, args []string) error {
	fs := flags(c.env, "extend")
	stateLoc := stateFlag(fs, c)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return fs.usage.Errorf("nuv cluster extend: want a cluster and a duration, got %d argument(s)", fs.NArg())
	}
	name := fs.Arg(0)
	by, err := spec.ParseTTL(fs.Arg(1))
	if err != nil {
		return fs.usage.Errorf("nuv cluster extend: %v", err)
	}
	e, err := c.engineFor(*stateLoc, "nuv cluster extend "+name)
	if err != nil {
		return err
	}
	at, err := e.Extend(ctx, name, by, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(c.env.Out, "cluster %s now expires at %s (in %s)\n", name, at.Format(time.RFC3339), humanAge(time.Until(at)))
	return nil
}

package clustercmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// runGC is `nuv cluster gc`: delete the clusters whose expiry (spec.ttl, `nuv cluster extend`)
// passed: those of the state store, and, for cloud providers, those found by nuv's tags whose
// record was lost (engine.Lost: only this store's own, never one without nuv's tag or owned by
// another store). Each is deleted through the engine under its lock and only if, there, it is
// still expired, so a gc never deletes a cluster extended or re-created since it listed it, and
// two gcs at once delete each cluster once. It reports what it deleted and left alone, as a
// table or -o json|yaml; --dry-run deletes nothing.
func runGC(ctx context.Context, c *cmdCtx, args []string) error {
	fs := flags(c.env, "gc")
	dryRun := fs.Bool("dry-run", false, "list the expired clusters and delete nothing")
	provider := fs.String("provider", "", "only clusters of this provider")
	var output cli.OutputOption
	output.AddFlags(fs.FlagSet, cli.FormatTable, cli.FormatJSON, cli.FormatYAML)
	waitFlag(fs, c)
	stateLoc := stateFlag(fs, c)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("nuv cluster gc: unexpected arguments %q", fs.Args())
	}
	_ = output.Validate(fs.usage)
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
	lost, lookErrs := e.Lost(ctx, now, *provider)
	for _, err := range lookErrs {
		c.env.Log.Warnf("%v", err)
	}
	var rows []gcRow
	var jobs []func() error
	for _, r := range expired {
		rows = append(rows, gcRow{Name: r.Name, Provider: r.Provider, ExpiresAt: r.ExpiresAt, Result: gcWouldDelete, Reason: expiredText(*r.ExpiresAt, now)})
		jobs = append(jobs, func() error { _, err := e.DeleteExpired(ctx, r.Name, now); return err })
	}
	for _, l := range lost {
		row := gcRow{Name: l.Name, Provider: l.Provider, ExpiresAt: l.ExpiresAt, Where: l.Where, Result: gcSkipped, Reason: l.Skip}
		if l.Skip == "" {
			row.Result, row.Reason = gcWouldDelete, "record lost, found by tag; "+expiredText(*l.ExpiresAt, now)
			jobs = append(jobs, func() error { _, err := e.DeleteLost(ctx, l.Provider, l.Name, now); return err })
		} else {
			jobs = append(jobs, nil)
		}
		rows = append(rows, row)
	}
	if !*dryRun {
		e.Out = nil
		results := make([]error, len(jobs))
		var wg sync.WaitGroup
		for i, job := range jobs {
			if job == nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = job()
			}()
		}
		wg.Wait()
		for i, job := range jobs {
			if job != nil {
				rows[i].settle(results[i])
			}
		}
	}
	if !output.Machine() && len(rows) == 0 {
		fmt.Fprintf(c.env.Out, "no expired clusters in %s\n", e.Store.Where())
		return errors.Join(lookErrs...)
	}
	if err := writeGC(c.env.Out, &output, rows, *dryRun); err != nil {
		return err
	}
	var errs []error
	for _, r := range rows {
		if r.Result == gcFailed {
			errs = append(errs, fmt.Errorf("gc %s (%s): %s", r.Name, r.Provider, r.Reason))
		}
	}
	return errors.Join(append(errs, lookErrs...)...)
}

// What gc did with a cluster (gcRow.Result).
const (
	gcWouldDelete = "would delete" // --dry-run; before the delete
	gcDeleted     = "deleted"
	gcSkipped     = "skipped"
	gcFailed      = "failed"
)

// gcRow is one cluster of gc's report.
type gcRow struct {
	Name      string     `json:"name"`
	Provider  string     `json:"provider"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	// Where is where a cluster without a record was found (its region, resource group, project).
	Where  string `json:"where,omitempty"`
	Result string `json:"result"`
	Reason string `json:"reason"`
}

// settle records the outcome of the row's delete.
func (r *gcRow) settle(err error) {
	var why string
	switch {
	case err == nil:
		r.Result = gcDeleted
		return
	case errors.Is(err, cluster.ErrNotFound):
		why = "already deleted (by another nuv)"
	case errors.Is(err, engine.ErrNotExpired):
		why = "extended or re-created since it was listed"
	case errors.Is(err, engine.ErrNotReapable):
		why = err.Error()
		if i := strings.LastIndex(why, engine.ErrNotReapable.Error()+": "); i >= 0 {
			why = why[i+len(engine.ErrNotReapable.Error())+2:]
		}
	case errors.Is(err, state.ErrLocked):
		why = "another nuv holds its lock: " + err.Error()
	default:
		r.Result, r.Reason = gcFailed, err.Error()
		return
	}
	r.Result, r.Reason = gcSkipped, why
}

// writeGC prints gc's report: a table and a count, or -o json|yaml (an object with the clusters
// and the counts).
func writeGC(w io.Writer, o *cli.OutputOption, rows []gcRow, dryRun bool) error {
	count := map[string]int{}
	for _, r := range rows {
		count[r.Result]++
	}
	if done, err := o.Write(w, struct {
		DryRun   bool    `json:"dryRun"`
		Clusters []gcRow `json:"clusters"`
		Deleted  int     `json:"deleted"`
		Skipped  int     `json:"skipped"`
		Failed   int     `json:"failed"`
	}{dryRun, append([]gcRow{}, rows...), count[gcDeleted], count[gcSkipped], count[gcFailed]}); done {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPROVIDER\tEXPIRES AT\tRESULT\tREASON")
	for _, r := range rows {
		at := "-"
		if r.ExpiresAt != nil {
			at = r.ExpiresAt.UTC().Format(time.RFC3339)
		}
		reason := r.Reason
		if r.Where != "" {
			reason += " [" + r.Where + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Provider, at, r.Result, reason)
	}
	_ = tw.Flush()
	if dryRun {
		fmt.Fprintf(w, "gc --dry-run: %d would be deleted, %d skipped\n", count[gcWouldDelete], count[gcSkipped])
		return nil
	}
	fmt.Fprintf(w, "gc: %d deleted, %d skipped, %d failed\n", count[gcDeleted], count[gcSkipped], count[gcFailed])
	return nil
}

// expiredText is "expired 2h ago".
func expiredText(at, now time.Time) string {
	return fmt.Sprintf("expired %s ago", humanAge(now.Sub(at)))
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

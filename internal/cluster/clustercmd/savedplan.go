package clustercmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// terraformSpelling accepts terraform's single-dash long flags (-out FILE, -auto-approve,
// -detailed-exitcode) by rewriting them to pflag's double dash; pflag would read "-out" as -o ut.
func terraformSpelling(args []string, names ...string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		for _, n := range names {
			if a == "-"+n || strings.HasPrefix(a, "-"+n+"=") {
				a = "-" + a
				break
			}
		}
		out = append(out, a)
	}
	return out
}

// savePlans plans specs, writes the saved plan to file and prints the plans as printPlans does.
func (c *cmdCtx) savePlans(ctx context.Context, e *engine.Engine, specs []*spec.Cluster, file string, output *cli.OutputOption, detailed bool) error {
	saved, err := eachSpec(specs, func(s *spec.Cluster) (engine.SavedCluster, error) { return e.SavePlan(ctx, s) })
	if err != nil {
		return err
	}
	sp := &engine.SavedPlan{Created: time.Now().UTC(), Store: e.Store.Where(), Clusters: saved}
	if err := engine.WriteSavedPlan(file, sp); err != nil {
		return err
	}
	plans := make([]*cluster.Plan, len(saved))
	for i, s := range saved {
		plans[i] = s.Plan
	}
	if err := c.writePlans(plans, output); err != nil {
		return err
	}
	c.writeEstimates(ctx, e, specs, plans, output)
	note := fmt.Sprintf("\nSaved the plan to %s. `nuv cluster apply %s` carries out exactly this plan, and refuses it if the clusters or their state records change before.\n", file, file)
	if output.Machine() {
		fmt.Fprint(c.env.Err, note[1:])
	} else {
		fmt.Fprint(c.env.Out, note)
	}
	for _, p := range plans {
		if !p.Empty() && detailed {
			return errChanges
		}
	}
	return nil
}

// applySaved carries out a saved plan: every cluster's is checked first (no cluster is touched when
// any is stale), then each is applied under its lock, checked again there.
func (c *cmdCtx) applySaved(ctx context.Context, stateLoc, file string) error {
	sp, err := engine.ReadSavedPlan(file)
	if err != nil {
		return err
	}
	e, err := c.engineFor(stateLoc, "nuv cluster apply "+file)
	if err != nil {
		return err
	}
	if w := e.Store.Where(); w != sp.Store {
		return fmt.Errorf("%s was planned against the state in %s, this apply uses %s (--state or NUV_STATE); nothing was changed", file, sp.Store, w)
	}
	for _, sc := range sp.Clusters {
		if err := e.CheckSaved(ctx, sc); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	var errs []error
	for _, sc := range sp.Clusters {
		plan, err := e.ApplySaved(ctx, sc)
		if errors.Is(err, engine.ErrStalePlan) {
			err = fmt.Errorf("%s: %w", file, err)
		}
		if err := c.applied(sc.Spec.Metadata.Name, plan, err); err != nil {
			if cli.ExitCode(err) == cli.ExitInterrupted {
				return err
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

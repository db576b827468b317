package clustercmd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/pricing"
	"github.com/nuv-dev/nuv/internal/cluster/providers"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
)

// readSpecs reads -f FILE and keeps the clusters --only names.
func readSpecs(verb, file, only string) ([]*spec.Cluster, error) {
	if file == "" {
		return nil, cli.Usagef("nuv cluster %s: give a spec file with -f FILE (by convention in clusters/specs/)", verb)
	}
	cs, err := providers.Registry().Decoder().ReadFile(file)
	if err != nil {
		return nil, err
	}
	if only == "" {
		return cs, nil
	}
	var names []string
	for _, c := range cs {
		if c.Metadata.Name == only {
			return []*spec.Cluster{c}, nil
		}
		names = append(names, c.Metadata.Name)
	}
	return nil, cli.Usagef("nuv cluster %s: %s has no cluster %q (it has: %s)", verb, file, only, strings.Join(names, ", "))
}

func runPlan(ctx context.Context, c *cmdCtx, args []string) error {
	fs := flags(c.env, "plan")
	file := fs.StringP("file", "f", "", "spec file (several Cluster documents allowed)")
	only := fs.String("only", "", "plan only the cluster of this name")
	detailed := fs.Bool("detailed-exitcode", false, "exit 0 when nothing would change, 2 when something would, 1 on any error")
	var output cli.OutputOption
	output.AddFlags(fs.FlagSet, formatText, cli.FormatJSON, cli.FormatYAML)
	tfDir := fs.String("terraform", "", "write a Terraform module per cluster into `DIR` (DIR/NAME when the file has several) instead of printing the plan")
	out := fs.String("out", "", "also save the plan to `FILE` (0600), for `nuv cluster apply FILE` to carry out as it is (terraform's -out)")
	stateLoc := stateFlag(fs, c)
	args = terraformSpelling(args, "out", "detailed-exitcode")
	err := parse(fs, args)
	if err == nil && fs.NArg() > 0 {
		err = cli.Usagef("nuv cluster plan: unexpected arguments %q (the spec file goes after -f)", fs.Args())
	}
	if err == nil && *tfDir != "" && *out != "" {
		err = cli.Usagef("nuv cluster plan: --terraform and -out: give one")
	}
	if err == nil {
		err = output.Validate(fs.usage)
	}
	var e *engine.Engine
	if err == nil {
		e, err = c.engineFor(*stateLoc, "nuv cluster plan")
	}
	var specs []*spec.Cluster
	if err == nil {
		specs, err = readSpecs("plan", *file, *only)
	}
	if err == nil && *tfDir != "" {
		return c.writeTerraform(e, specs, *tfDir)
	}
	if err == nil && *out != "" {
		err = c.savePlans(ctx, e, specs, *out, &output, *detailed)
	} else if err == nil {
		err = c.printPlans(ctx, e, specs, &output, *detailed)
	}
	if (*detailed || slices.Contains(args, "--detailed-exitcode")) && err != nil && err != errChanges && err != errHelp {
		return cli.Exit(cli.ExitFailure, err) // usage errors too: with -detailed-exitcode, 2 means "changes"
	}
	return err
}

// writeTerraform writes each spec's Terraform module: into dir for one cluster, into dir/NAME for
// several. Every module is made before any is written, so a spec the provider cannot render leaves
// the directory as it was.
func (c *cmdCtx) writeTerraform(e *engine.Engine, specs []*spec.Cluster, dir string) error {
	modules := make([]map[string][]byte, len(specs))
	for i, s := range specs {
		files, err := e.Terraform(s)
		if err != nil {
			return err
		}
		modules[i] = files
	}
	for i, s := range specs {
		d := dir
		if len(specs) > 1 {
			d = filepath.Join(dir, s.Metadata.Name)
		}
		paths, err := tfgen.Write(d, modules[i])
		if err != nil {
			return fmt.Errorf("cluster %s: %w", s.Metadata.Name, err)
		}
		fmt.Fprintf(c.env.Out, "cluster %s: wrote a Terraform module to %s (%s)\n", s.Metadata.Name, d, strings.Join(baseNames(paths), ", "))
	}
	return nil
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// errChanges is --detailed-exitcode's "something would change".
var errChanges = cli.Exit(exitChanges, nil)

// eachSpec runs f for every spec in parallel (each reads or plans its own cluster) and returns
// the results in the specs' order, or every error joined.
func eachSpec[T any](specs []*spec.Cluster, f func(*spec.Cluster) (T, error)) ([]T, error) {
	out := make([]T, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = f(s)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// exitChanges is `plan --detailed-exitcode`'s code for "something would change" (terraform's).
const exitChanges = 2

// printPlans plans every spec (in parallel: each reads its own cluster) and prints them in order.
func (c *cmdCtx) printPlans(ctx context.Context, e *engine.Engine, specs []*spec.Cluster, output *cli.OutputOption, detailed bool) error {
	plans, err := eachSpec(specs, func(s *spec.Cluster) (*cluster.Plan, error) { return e.Plan(ctx, s) })
	if err != nil {
		return err
	}
	if err := c.writePlans(plans, output); err != nil {
		return err
	}
	c.writeEstimates(ctx, e, specs, plans, output)
	for _, p := range plans {
		if !p.Empty() && detailed {
			return errChanges
		}
	}
	return nil
}

// writeEstimates prints, on stderr, how long applying each plan is expected to take (from the
// state store's apply history) and what the machines it runs cost by the hour (from the clouds'
// price APIs): advice that changes with every apply and every price list, so it stays out of the
// plan document on stdout, which a team diffs and scripts read. Machine forms (-o json|yaml) get
// none. specs[i] is the spec of plans[i]. The cost estimates of all plans are looked up at once,
// each within the price lookup's time limit.
func (c *cmdCtx) writeEstimates(ctx context.Context, e *engine.Engine, specs []*spec.Cluster, plans []*cluster.Plan, output *cli.OutputOption) {
	if output.Machine() {
		return
	}
	costs := make([]pricing.Estimate, len(plans))
	var wg sync.WaitGroup
	for i, p := range plans {
		if i < len(specs) && !p.Empty() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				costs[i] = e.Costs(ctx, specs[i], p)
			}()
		}
	}
	wg.Wait()
	for i, p := range plans {
		est, total, err := e.Estimates(ctx, p)
		if err != nil {
			c.env.Log.Warnf("cluster %s: no expected apply time: %v", p.Cluster, err)
		} else {
			engine.WriteEstimates(c.env.Err, p, est, total)
		}
		engine.WriteCosts(c.env.Err, p, costs[i], time.Now())
	}
}

// formatText is plan's human form (-o text, the default): terraform-like lines, not a table.
const formatText = "text"

// writePlans prints plans as text, or in their machine form (-o json|yaml) through the one output
// helper.
func (c *cmdCtx) writePlans(plans []*cluster.Plan, output *cli.OutputOption) error {
	if done, err := output.Write(c.env.Out, engine.PlansMachine(plans)); done {
		return err
	}
	for i, p := range plans {
		if i > 0 {
			fmt.Fprintln(c.env.Out)
		}
		engine.WritePlan(c.env.Out, p)
	}
	return nil
}

func runApply(ctx context.Context, c *cmdCtx, args []string) error {
	fs := flags(c.env, "apply")
	file := fs.StringP("file", "f", "", "spec file (several Cluster documents allowed)")
	only := fs.String("only", "", "apply only the cluster of this name")
	var yes cli.YesOption
	yes.AddFlags(fs.FlagSet, "deleting or replacing what the plan destroys")
	waitFlag(fs, c)
	stateLoc := stateFlag(fs, c)
	if err := parse(fs, terraformSpelling(args, "auto-approve")); err != nil {
		return err
	}
	if fs.NArg() > 1 || (fs.NArg() == 1 && *file != "") {
		return cli.Usagef("nuv cluster apply: give a spec file with -f FILE or one saved plan (apply PLANFILE), not %q", fs.Args())
	}
	if fs.NArg() == 1 {
		if *only != "" {
			return cli.Usagef("nuv cluster apply: a saved plan is applied as it is; --only belongs to `nuv cluster plan -out`")
		}
		return c.applySaved(ctx, *stateLoc, fs.Arg(0))
	}
	specs, err := readSpecs("apply", *file, *only)
	if err != nil {
		return err
	}
	e, err := c.engineFor(*stateLoc, "nuv cluster apply -f "+*file)
	if err != nil {
		return err
	}
	for _, s := range specs {
		if _, err := e.Validate(s); err != nil {
			return err
		}
	}
	check, err := c.approveApply(ctx, e, specs, yes.Yes)
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range specs {
		plan, err := e.Apply(ctx, s, engine.ApplyOptions{Check: check})
		if err := c.applied(s.Metadata.Name, plan, err); err != nil {
			if cli.ExitCode(err) == cli.ExitInterrupted {
				return err
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// applied reports one cluster's apply: its summary, or the error (an interrupt exits 130).
func (c *cmdCtx) applied(name string, plan *cluster.Plan, err error) error {
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return cli.Exit(cli.ExitInterrupted, fmt.Errorf("apply of %s interrupted: what was done is recorded; apply again to resume", name))
		}
		return err
	}
	if plan.Empty() {
		fmt.Fprintf(c.env.Out, "cluster %s: no changes; it matches the spec\n", name)
	} else {
		fmt.Fprintln(c.env.Out, engine.Summary(plan))
	}
	return nil
}

func runDelete(ctx context.Context, c *cmdCtx, args []string) error {
	fs := flags(c.env, "delete")
	all := fs.Bool("all", false, "every cluster (asks first)")
	dryRun := fs.Bool("dry-run", false, "print what would be deleted and change nothing")
	var yes cli.YesOption
	yes.AddFlags(fs.FlagSet, "deleting every cluster (--all) or a cloud cluster (eks, aks, gke)")
	waitFlag(fs, c)
	stateLoc := stateFlag(fs, c)
	if err := parse(fs, terraformSpelling(args, "auto-approve")); err != nil {
		return err
	}
	list, err := c.names(ctx, fs.Args(), *all, "delete")
	if err != nil {
		return err
	}
	e, err := c.engineFor(*stateLoc, "nuv cluster delete")
	if err != nil {
		return err
	}
	if *dryRun {
		var errs []error
		for _, n := range list {
			p, err := e.DeletePlan(ctx, n)
			if err != nil {
				errs = append(errs, c.notFound(ctx, err))
				continue
			}
			engine.WritePlan(c.env.Out, p)
		}
		return errors.Join(errs...)
	}
	if err := c.approveDelete(ctx, e, list, *all, yes.Yes); err != nil {
		return err
	}
	// Clusters are independent: delete them in parallel, report in order.
	e.Out = nil
	results := make([]error, len(list))
	var wg sync.WaitGroup
	for i, n := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, results[i] = e.Delete(ctx, n)
		}()
	}
	wg.Wait()
	var errs []error
	for i, n := range list {
		if results[i] != nil {
			err := results[i]
			if errors.Is(err, cluster.ErrNotFound) {
				err = c.notFound(ctx, fmt.Errorf("delete %q: %w", n, cluster.ErrNotFound))
			}
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(c.env.Out, "%s deleted\n", n)
	}
	return errors.Join(errs...)
}

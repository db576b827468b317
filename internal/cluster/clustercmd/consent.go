package clustercmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// Consent, the way terraform and kind users know it: an apply that deletes or replaces anything,
// `delete --all`, and the delete of a cloud cluster show what goes and ask on a terminal (only
// "yes" consents); --yes/--auto-approve skips the question; without a terminal and without --yes
// they refuse and change nothing.

// destroys reports whether a change destroys something that exists.
func destroys(ch cluster.Change) bool {
	return ch.Action == cluster.Delete || ch.Action == cluster.Replace
}

// destroyed lists what a plan destroys, as "delete node-group/batch".
func destroyed(p *cluster.Plan) []string {
	var out []string
	for _, ch := range p.Changes {
		if destroys(ch) {
			out = append(out, string(ch.Action)+" "+ch.Key)
		}
	}
	return out
}

// notConfirmed is the exit of a refused or cancelled consent: 1, the message says why.
func notConfirmed(err error) error {
	if errors.Is(err, cli.ErrNotConfirmed) {
		return cli.Exit(cli.ExitFailure, err)
	}
	if errors.Is(err, context.Canceled) {
		return cli.Exit(cli.ExitInterrupted, fmt.Errorf("interrupted while asking; nothing was changed"))
	}
	return err
}

// approveApply plans specs (reading only) and, when any plan deletes or replaces something, shows
// the plans and asks. It returns the check each Apply runs under the cluster's lock: the plan it
// is about to carry out may destroy only what was approved (the world may have moved meanwhile).
func (c *cmdCtx) approveApply(ctx context.Context, e *engine.Engine, specs []*spec.Cluster, yes bool) (func(context.Context, *state.Record, *cluster.Plan) error, error) {
	if yes {
		return nil, nil
	}
	plans, err := eachSpec(specs, func(s *spec.Cluster) (*cluster.Plan, error) { return e.Plan(ctx, s) })
	if err != nil {
		return nil, err
	}
	approved := map[string]map[string]bool{}
	var goes []string
	for _, p := range plans {
		approved[p.Cluster] = map[string]bool{}
		for _, d := range destroyed(p) {
			approved[p.Cluster][d] = true
			goes = append(goes, d+" of cluster "+p.Cluster)
		}
	}
	if len(goes) > 0 {
		for i, p := range plans {
			if i > 0 {
				fmt.Fprintln(c.env.Out)
			}
			engine.WritePlan(c.env.Out, p)
		}
		q := "Apply these changes? What is marked - (delete) or -/+ (replace) above is destroyed; its data does not come back."
		if err := cli.Confirm(ctx, c.env, "apply ("+strings.Join(goes, ", ")+")", q, false); err != nil {
			return nil, notConfirmed(err)
		}
	}
	return func(_ context.Context, _ *state.Record, plan *cluster.Plan) error {
		for _, d := range destroyed(plan) {
			if !approved[plan.Cluster][d] {
				return fmt.Errorf("cluster %s: the plan changed since it was shown: it would now also %s, which was not approved; nothing was changed: run apply again", plan.Cluster, d)
			}
		}
		return nil
	}, nil
}

// approveDelete asks before deleting list when it is every cluster (--all) or holds cloud
// clusters. On a terminal it first shows what each of those clusters' delete removes.
func (c *cmdCtx) approveDelete(ctx context.Context, e *engine.Engine, list []string, all, yes bool) error {
	if yes || len(list) == 0 {
		return nil
	}
	var ask []string
	for _, n := range list {
		if all {
			ask = append(ask, n)
			continue
		}
		// A cloud cluster (cluster.Registration.Cloud) is never undone by a quick create.
		if _, p, _, err := e.Target(ctx, n); err == nil && c.cloud(p.Name()) {
			ask = append(ask, n)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	if cli.IsTerminal(c.env.In) {
		for i, n := range ask {
			if i > 0 {
				fmt.Fprintln(c.env.Out)
			}
			p, err := e.DeletePlan(ctx, n)
			if err != nil {
				fmt.Fprintf(c.env.Out, "cluster %s: what exists cannot be read (%v); delete removes what it finds\n", n, err)
				continue
			}
			engine.WritePlan(c.env.Out, p)
		}
	}
	what := "cluster " + ask[0]
	if len(ask) > 1 {
		what = fmt.Sprintf("%d clusters (%s)", len(ask), strings.Join(ask, ", "))
	}
	q := "Delete " + what + "? Everything listed above is destroyed, the state record and kubeconfig too."
	return notConfirmed(cli.Confirm(ctx, c.env, "delete "+what, q, false))
}

// cloud reports whether the provider's clusters are cloud resources (its registration says so).
func (c *cmdCtx) cloud(provider string) bool {
	reg, ok := c.registry.Get(provider)
	return ok && reg.Cloud
}

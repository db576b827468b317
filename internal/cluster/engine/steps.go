package engine

import (
	"context"
	"fmt"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// A spec's provider-neutral steps (cluster.Step) come after everything its provider makes, one
// change each, keyed "<kind>/<cluster>". Today there is one: the add-ons (spec.addons), whose
// handler the program that builds the engine registers (Engine.Addons: package addons'
// ClusterStep). A spec that does not ask for a step never reaches its handler.
const kindAddons = "addons"

// step is one step a spec asks for: the kind of its change and its handler (nil: none registered).
type step struct {
	kind    string
	handler cluster.Step
}

// steps lists the steps c asks for, in the order they are planned and applied.
func (e *Engine) steps(c *spec.Cluster) []step {
	var s []step
	if c.Spec.Addons != nil {
		s = append(s, step{kindAddons, e.Addons})
	}
	return s
}

// stepOf returns the step of c whose change ch is, if ch is one.
func (e *Engine) stepOf(c *spec.Cluster, ch cluster.Change) (step, bool) {
	for _, s := range e.steps(c) {
		if cluster.KindOf(ch.Key) == s.kind {
			return s, true
		}
	}
	return step{}, false
}

// planSteps adds the changes of c's steps to plan, after the provider's.
func (e *Engine) planSteps(ctx context.Context, p cluster.Provider, c *spec.Cluster, plan *cluster.Plan) error {
	for _, s := range e.steps(c) {
		if s.handler == nil {
			return fmt.Errorf("cluster %s: spec.%s: this nuv has no %s handler", c.Metadata.Name, s.kind, s.kind)
		}
		ch, unchanged, err := s.handler.Plan(ctx, p, c, plan)
		if err != nil {
			return err
		}
		plan.Unchanged += unchanged
		if ch != nil {
			ch.Key = s.kind + "/" + c.Metadata.Name
			plan.Changes = append(plan.Changes, *ch)
		}
	}
	return nil
}

package cluster

import (
	"context"
	"io"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// A Step is a part of a cluster that no provider makes but the engine plans and applies like one
// more kind of resource, after the provider's: one change of the plan, keyed "<kind>/<cluster>",
// printed, saved and carried out like any other, through the step's own handler. nuv's add-ons
// (spec.addons, package addons) are one. A step keeps its state where it puts it (the add-ons in
// the cluster itself), not in the state record.
//
// The engine reaches a step only for a spec that asks for it (a spec without spec.addons never
// reaches the add-ons handler); the program that builds the engine registers the handlers.
type Step interface {
	// Plan returns the step's change for c (nil when nothing would change; its Key is the
	// engine's to set) and how many of the step's items are already as wanted. plan holds the
	// provider's changes: a step whose cluster is made or replaced by them plans for after.
	// p is c's provider, through which a step reaches the running cluster (Status).
	Plan(ctx context.Context, p Provider, c *spec.Cluster, plan *Plan) (*Change, int, error)
	// Execute carries out the step's change ch of c, once the provider's changes before it are
	// carried out; out receives its progress.
	Execute(ctx context.Context, p Provider, c *spec.Cluster, ch Change, out io.Writer) error
}

package engine

import (
	"context"
	"fmt"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// PlanCreate is what `create --dry-run` shows: the plan of c, or the error the real create would
// fail with when the cluster already exists (cluster.ErrExists, the same message). It reads only.
func (e *Engine) PlanCreate(ctx context.Context, c *spec.Cluster) (*cluster.Plan, error) {
	plan, err := e.Plan(ctx, c)
	if err != nil {
		return nil, err
	}
	rec, err := e.load(ctx, c.Metadata.Name)
	if err != nil {
		return nil, err
	}
	if err := refuseExisting(c.Metadata.Name, rec, plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// refuseExisting is create's refusal: a cluster with a record, or any resource of it that exists
// (beyond conflicts, which apply reports on its own), already exists.
func refuseExisting(name string, rec *state.Record, plan *cluster.Plan) error {
	if rec != nil || plan.Unchanged > 0 || len(plan.Changes) > plan.Count(cluster.Create)+plan.Count(cluster.Conflict) {
		return fmt.Errorf("create %q: %w (`nuv cluster apply` converges it to a spec; `nuv cluster delete %s` removes it)", name, cluster.ErrExists, name)
	}
	return nil
}

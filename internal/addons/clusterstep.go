package addons

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"k8s.io/client-go/tools/clientcmd"
)

// ClusterStep is the handler of a cluster spec's add-ons (spec.addons) in the lifecycle engine: a
// cluster.Step whose change, "addons/<cluster>", comes after everything the provider makes. Its
// fields are the add-ons that would be installed, upgraded or removed (old -> new version), as
// MakePlan finds them against the running cluster; for a cluster that does not run yet (made or
// replaced by the same plan) they say which index and selection will be installed once it is up.
// The add-ons' state lives in the cluster itself, not in the state record.
type ClusterStep struct {
	// Project is the project root: a spec's add-ons index is relative to it.
	Project string
}

var _ cluster.Step = ClusterStep{}

// indexPath is the spec's add-ons index, relative to the project.
func (s ClusterStep) indexPath(c *spec.Cluster) string {
	p := c.Spec.Addons.Index
	if p == "" {
		p = DefaultIndex
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.Project, p)
	}
	return p
}

func stepOptions(c *spec.Cluster) Options {
	return Options{Only: c.Spec.Addons.Only, Stacks: c.Spec.Addons.Stacks}
}

// target connects to the cluster the provider made, if it runs now (nil if not).
func (s ClusterStep) target(ctx context.Context, p cluster.Provider, c *spec.Cluster) (*Target, error) {
	info, err := p.Status(ctx, c)
	if err != nil || info.Status != cluster.Running || info.Kubeconfig == "" {
		return nil, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", info.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: kubeconfig %s: %w", c.Metadata.Name, info.Kubeconfig, err)
	}
	return NewTarget(ctx, c.Metadata.Name, "", cfg)
}

// Plan is the add-on change of a plan (nil when none would change) and how many add-ons are
// already as the index says.
func (s ClusterStep) Plan(ctx context.Context, p cluster.Provider, c *spec.Cluster, plan *cluster.Plan) (*cluster.Change, int, error) {
	idx, err := Load(s.indexPath(c))
	if err != nil {
		return nil, 0, err
	}
	coming := plan.Count(cluster.Create) > 0 || plan.Count(cluster.Replace) > 0
	var t *Target
	if !coming {
		if t, err = s.target(ctx, p, c); err != nil {
			return nil, 0, err
		}
	}
	if t == nil {
		// The cluster is made (or repaired) by this plan: its add-ons are installed after it.
		fields := []cluster.FieldChange{{Field: "index", New: s.indexPath(c)}}
		if v := strings.Join(c.Spec.Addons.Stacks, ","); v != "" {
			fields = append(fields, cluster.FieldChange{Field: "stacks", New: v})
		}
		if v := strings.Join(c.Spec.Addons.Only, ","); v != "" {
			fields = append(fields, cluster.FieldChange{Field: "only", New: v})
		}
		return &cluster.Change{Action: cluster.Create, Fields: fields}, 0, nil
	}
	ap, err := MakePlan(ctx, t, idx, stepOptions(c))
	if err != nil {
		return nil, 0, fmt.Errorf("cluster %s: add-ons: %w", c.Metadata.Name, err)
	}
	var fields []cluster.FieldChange
	unchanged := 0
	for _, st := range ap.Steps {
		switch st.Action {
		case Install, Upgrade:
			fields = append(fields, cluster.FieldChange{Field: st.Name, Old: st.From, New: st.To})
		case Remove:
			fields = append(fields, cluster.FieldChange{Field: st.Name, Old: st.From, New: "(removed)"})
		case Unchanged:
			unchanged++
		}
	}
	if len(fields) == 0 {
		return nil, unchanged, nil
	}
	return &cluster.Change{Action: cluster.Update, Fields: fields}, unchanged, nil
}

// Execute installs, upgrades and prunes the spec's add-ons on the (now running) cluster.
func (s ClusterStep) Execute(ctx context.Context, p cluster.Provider, c *spec.Cluster, _ cluster.Change, out io.Writer) error {
	idx, err := Load(s.indexPath(c))
	if err != nil {
		return err
	}
	t, err := s.target(ctx, p, c)
	if err != nil {
		return err
	}
	if t == nil {
		return fmt.Errorf("cluster %s does not run: its add-ons cannot be installed", c.Metadata.Name)
	}
	o := stepOptions(c)
	o.Out = out
	_, err = Apply(ctx, t, idx, o)
	return err
}

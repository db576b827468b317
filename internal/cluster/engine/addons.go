package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/addons"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"k8s.io/client-go/tools/clientcmd"
)

// A spec's add-ons (spec.addons) are one step of the plan, after everything the provider makes:
// "addons/<cluster>", whose fields are the add-ons that would be installed, upgraded or removed
// (old -> new version), computed by nuv addons' own planner against the running cluster. For a
// cluster that does not run yet the step says which index and selection will be installed once it
// is up. Their state lives in the cluster itself (internal/addons), not in the state record.
const kindAddons = "addons"

func isAddons(ch cluster.Change) bool { return strings.HasPrefix(ch.Key, kindAddons+"/") }

// indexPath is the spec's add-ons index, relative to the project.
func (e *Engine) indexPath(c *spec.Cluster) string {
	p := c.Spec.Addons.Index
	if p == "" {
		p = addons.DefaultIndex
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.Project, p)
	}
	return p
}

func addonsOptions(c *spec.Cluster) addons.Options {
	return addons.Options{Only: c.Spec.Addons.Only, Stacks: c.Spec.Addons.Stacks}
}

// addonsTarget connects to the cluster the provider made, if it runs now.
func (e *Engine) addonsTarget(ctx context.Context, p cluster.Provider, c *spec.Cluster) (*addons.Target, error) {
	info, err := p.Status(ctx, c)
	if err != nil || info.Status != cluster.Running || info.Kubeconfig == "" {
		return nil, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", info.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: kubeconfig %s: %w", c.Metadata.Name, info.Kubeconfig, err)
	}
	return addons.NewTarget(ctx, c.Metadata.Name, "", cfg)
}

// addonsChange is the add-on step of a plan (nil when the spec lists no add-ons or none would
// change) and how many add-ons are already as the index says.
func (e *Engine) addonsChange(ctx context.Context, p cluster.Provider, c *spec.Cluster, plan *cluster.Plan) (*cluster.Change, int, error) {
	if c.Spec.Addons == nil {
		return nil, 0, nil
	}
	idx, err := addons.Load(e.indexPath(c))
	if err != nil {
		return nil, 0, err
	}
	key := kindAddons + "/" + c.Metadata.Name
	coming := plan.Count(cluster.Create) > 0 || plan.Count(cluster.Replace) > 0
	var t *addons.Target
	if !coming {
		if t, err = e.addonsTarget(ctx, p, c); err != nil {
			return nil, 0, err
		}
	}
	if t == nil {
		// The cluster is made (or repaired) by this plan: its add-ons are installed after it.
		fields := []cluster.FieldChange{{Field: "index", New: e.indexPath(c)}}
		if s := strings.Join(c.Spec.Addons.Stacks, ","); s != "" {
			fields = append(fields, cluster.FieldChange{Field: "stacks", New: s})
		}
		if s := strings.Join(c.Spec.Addons.Only, ","); s != "" {
			fields = append(fields, cluster.FieldChange{Field: "only", New: s})
		}
		return &cluster.Change{Action: cluster.Create, Key: key, Fields: fields}, 0, nil
	}
	ap, err := addons.MakePlan(ctx, t, idx, addonsOptions(c))
	if err != nil {
		return nil, 0, fmt.Errorf("cluster %s: add-ons: %w", c.Metadata.Name, err)
	}
	var fields []cluster.FieldChange
	unchanged := 0
	for _, s := range ap.Steps {
		switch s.Action {
		case addons.Install, addons.Upgrade:
			fields = append(fields, cluster.FieldChange{Field: s.Name, Old: s.From, New: s.To})
		case addons.Remove:
			fields = append(fields, cluster.FieldChange{Field: s.Name, Old: s.From, New: "(removed)"})
		case addons.Unchanged:
			unchanged++
		}
	}
	if len(fields) == 0 {
		return nil, unchanged, nil
	}
	return &cluster.Change{Action: cluster.Update, Key: key, Fields: fields}, unchanged, nil
}

// applyAddons installs, upgrades and prunes the spec's add-ons on the (now running) cluster.
func (e *Engine) applyAddons(ctx context.Context, p cluster.Provider, c *spec.Cluster) error {
	idx, err := addons.Load(e.indexPath(c))
	if err != nil {
		return err
	}
	t, err := e.addonsTarget(ctx, p, c)
	if err != nil {
		return err
	}
	if t == nil {
		return fmt.Errorf("cluster %s does not run: its add-ons cannot be installed", c.Metadata.Name)
	}
	o := addonsOptions(c)
	o.Out = e.out()
	_, err = addons.Apply(ctx, t, idx, o)
	return err
}

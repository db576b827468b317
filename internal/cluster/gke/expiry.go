package gke

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

var (
	_ cluster.Expirer = (*Provider)(nil)
	_ cluster.Adopter = (*Provider)(nil)
)

// tagged is every GKE cluster labelled nuv-cluster=<its name> in the default project, in every
// location.
func (p *Provider) tagged(ctx context.Context) (string, []*containerpb.Cluster, error) {
	project := p.defaultProject()
	if project == "" {
		return "", nil, nil
	}
	cn, err := p.connect(ctx)
	if err != nil {
		return "", nil, err
	}
	resp, err := cn.Client.ListClusters(ctx, &containerpb.ListClustersRequest{Parent: locPath(project, "-")}, retry())
	if err != nil {
		return "", nil, fmt.Errorf("list GKE clusters of project %s: %w", project, err)
	}
	var out []*containerpb.Cluster
	for _, gc := range resp.Clusters {
		if gc.ResourceLabels[LabelCluster] == gc.Name {
			out = append(out, gc)
		}
	}
	return project, out, nil
}

// Tagged lists the GKE clusters labelled nuv-cluster=<their name> in the default project, with
// the marks their resource labels carry (nuv-expires-at in Unix seconds, nuv-owner).
func (p *Provider) Tagged(ctx context.Context) ([]cluster.Tagged, error) {
	project, gcs, err := p.tagged(ctx)
	if err != nil {
		return nil, err
	}
	var out []cluster.Tagged
	for _, gc := range gcs {
		m, err := kit.MarksOf(gc.ResourceLabels)
		out = append(out, cluster.Tagged{Name: gc.Name, Marks: m, Where: "project " + project + " " + gc.Location, Err: err})
	}
	return out, nil
}

// Adopt describes, as a spec, a GKE cluster nuv made (labelled nuv-cluster=<name>) in the default
// project whose record is gone: its project and location.
func (p *Provider) Adopt(ctx context.Context, name string) (*spec.Cluster, error) {
	project, gcs, err := p.tagged(ctx)
	if err != nil {
		return nil, fmt.Errorf("%q: %w (the gke provider could not look: %v)", name, cluster.ErrNotFound, err)
	}
	for _, gc := range gcs {
		if gc.Name == name {
			c := cluster.Named(name)
			c.Spec.Provider = "gke"
			Key.Set(c, &Section{Project: project, Location: gc.Location})
			return c, nil
		}
	}
	return nil, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
}

// Mark writes c.Marks on the GKE cluster's resource labels (nuv-expires-at, nuv-owner; a mark c
// lacks is removed), which GKE copies to the cluster's Compute Engine resources.
func (p *Provider) Mark(ctx context.Context, c *spec.Cluster) error {
	cn, err := p.connect(ctx)
	if err != nil {
		return err
	}
	g := p.section(c)
	x := &executor{p: p, cn: cn, c: c, project: g.Project, location: g.Location, name: c.Metadata.Name}
	return x.call(ctx, "set the cluster's labels", func() (*containerpb.Operation, error) {
		gc, err := getCluster(ctx, cn, g.Project, g.Location, c.Metadata.Name)
		if errors.Is(err, errNoCluster) {
			return nil, fmt.Errorf("GKE cluster %s: %w", c.Metadata.Name, cluster.ErrNotFound)
		}
		if err != nil {
			return nil, err
		}
		if gc.ResourceLabels[LabelCluster] != c.Metadata.Name {
			return nil, fmt.Errorf("GKE cluster %s is not labelled %s=%s: nuv leaves it alone", c.Metadata.Name, LabelCluster, c.Metadata.Name)
		}
		l := kit.WithoutMarks(gc.ResourceLabels)
		maps.Copy(l, kit.MarkLabels(c.Marks))
		return cn.Client.SetLabels(ctx, &containerpb.SetLabelsRequest{Name: x.path(), ResourceLabels: l, LabelFingerprint: gc.LabelFingerprint}, retry())
	})
}

package aks

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	acs "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

var (
	_ cluster.Expirer = (*Provider)(nil)
	_ cluster.Adopter = (*Provider)(nil)
)

// tagged is every managed cluster tagged nuv.dev/cluster=<its name> in the environment's
// subscription (AZURE_SUBSCRIPTION_ID).
func (p *Provider) tagged(ctx context.Context) (string, []*acs.ManagedCluster, error) {
	sub := p.getenv()("AZURE_SUBSCRIPTION_ID")
	if sub == "" {
		return "", nil, nil
	}
	cl, err := p.clientsFor(ctx, sub)
	if err != nil {
		return "", nil, err
	}
	var out []*acs.ManagedCluster
	pager := cl.clusters.NewListPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return "", nil, fmt.Errorf("ManagedClusters_List: %s", firstLineARM(err))
		}
		for _, mc := range page.Value {
			if n := deref(mc.Name); n != "" && deref(mc.Tags[TagCluster]) == n {
				out = append(out, mc)
			}
		}
	}
	return sub, out, nil
}

func plainTags(t map[string]*string) map[string]string {
	out := map[string]string{}
	for k, v := range t {
		out[k] = deref(v)
	}
	return out
}

func groupOf(mc *acs.ManagedCluster) string {
	if id, err := arm.ParseResourceID(deref(mc.ID)); err == nil {
		return id.ResourceGroupName
	}
	return ""
}

// Tagged lists the managed clusters tagged nuv.dev/cluster=<their name> in the environment's
// subscription, with the marks the managed cluster's tags carry.
func (p *Provider) Tagged(ctx context.Context) ([]cluster.Tagged, error) {
	_, mcs, err := p.tagged(ctx)
	if err != nil {
		return nil, err
	}
	var out []cluster.Tagged
	for _, mc := range mcs {
		m, err := kit.MarksOf(plainTags(mc.Tags))
		out = append(out, cluster.Tagged{Name: deref(mc.Name), Marks: m, Where: "resource group " + groupOf(mc), Err: err})
	}
	return out, nil
}

// Adopt describes, as a spec, a managed cluster nuv made (tagged nuv.dev/cluster=<name>) in the
// environment's subscription whose record is gone: its region, subscription and resource group,
// the group being nuv's to delete only if it carries the same tag.
func (p *Provider) Adopt(ctx context.Context, name string) (*spec.Cluster, error) {
	sub, mcs, err := p.tagged(ctx)
	if err != nil {
		return nil, fmt.Errorf("%q: %w (the aks provider could not look: %v)", name, cluster.ErrNotFound, err)
	}
	for _, mc := range mcs {
		if deref(mc.Name) != name {
			continue
		}
		rg := groupOf(mc)
		cl, err := p.clientsFor(ctx, sub)
		if err != nil {
			return nil, err
		}
		g, err := cl.groups.Get(ctx, rg, nil)
		if err != nil {
			return nil, fmt.Errorf("adopt %s: ResourceGroups_Get on resource group %s: %s", name, rg, firstLineARM(err))
		}
		c := cluster.Named(name)
		c.Spec.Provider, c.Spec.Region = "aks", deref(mc.Location)
		sec := map[string]any{"subscription": sub, "resourceGroup": rg}
		if deref(g.Tags[TagCluster]) != name {
			sec["existingResourceGroup"] = true
		}
		if err := c.SetSection("aks", sec); err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
}

// Mark writes c.Marks (nuv.dev/expires-at, nuv.dev/owner) on the managed cluster (ARM's
// ManagedClusters_UpdateTags) and on its resource group when nuv made it (tagged
// nuv.dev/cluster=<name>); a mark c lacks is removed. The node resource group AKS manages is not
// tagged.
func (p *Provider) Mark(ctx context.Context, c *spec.Cluster) error {
	s, errs := section(c, p.getenv())
	if len(errs) > 0 {
		return errs[0]
	}
	cl, err := p.clientsFor(ctx, s.Subscription)
	if err != nil {
		return err
	}
	name := c.Metadata.Name
	remark := func(t map[string]*string) map[string]*string {
		out := map[string]*string{}
		for k, v := range kit.WithoutMarks(plainTags(t)) {
			out[k] = to.Ptr(v)
		}
		for k, v := range kit.MarkTags(c.Marks) {
			out[k] = to.Ptr(v)
		}
		return out
	}
	r, err := cl.clusters.Get(ctx, s.ResourceGroup, name, nil)
	switch {
	case notFound(err):
	case err != nil:
		return fmt.Errorf("ManagedClusters_Get on managed cluster %s: %s", name, firstLineARM(err))
	case deref(r.Tags[TagCluster]) == name:
		poller, err := cl.clusters.BeginUpdateTags(ctx, s.ResourceGroup, name, acs.TagsObject{Tags: remark(r.Tags)}, nil)
		if err != nil {
			return fmt.Errorf("ManagedClusters_UpdateTags on managed cluster %s: %s", name, firstLineARM(err))
		}
		if _, err := wait[acs.ManagedClustersClientUpdateTagsResponse](ctx, p, "managed cluster "+name, "ManagedClusters_UpdateTags", poller); err != nil {
			return err
		}
	}
	if s.ExistingResourceGroup {
		return nil
	}
	g, err := cl.groups.Get(ctx, s.ResourceGroup, nil)
	switch {
	case notFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("ResourceGroups_Get on resource group %s: %s", s.ResourceGroup, firstLineARM(err))
	case deref(g.Tags[TagCluster]) != name:
		return nil
	}
	if _, err := cl.groups.CreateOrUpdate(ctx, s.ResourceGroup, armresources.ResourceGroup{Location: g.Location, Tags: remark(g.Tags)}, nil); err != nil {
		return fmt.Errorf("ResourceGroups_CreateOrUpdate on resource group %s (its tags): %s", s.ResourceGroup, firstLineARM(err))
	}
	return nil
}

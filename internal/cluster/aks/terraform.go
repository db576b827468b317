package aks

import (
	"fmt"
	"maps"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
)

// Terraform writes what Desired asks for as an azurerm module: the resource group (or a data
// source for an existing one), azurerm_kubernetes_cluster with its system pool as the default
// node pool, and one azurerm_kubernetes_cluster_node_pool per further node group.
func (p *Provider) Terraform(c *spec.Cluster, desired []cluster.Resource) (map[string][]byte, error) {
	s, errs := section(c, p.getenv())
	if len(errs) > 0 {
		return nil, errs[0]
	}
	if len(c.Spec.NodeGroups[0].Taints) > 0 {
		return nil, fmt.Errorf("spec.nodeGroups[0].taints: azurerm's default_node_pool takes no taints (the system pool's taints cannot be written as Terraform)")
	}
	m := tfgen.NewModule()
	m.Variables(normalizeLocation(c.Spec.Region), tagsOf(c))
	b := m.File("main.tf")
	tf := b.AppendNewBlock("terraform", nil).Body()
	rp := tf.AppendNewBlock("required_providers", nil).Body()
	rp.SetAttributeValue("azurerm", cty.ObjectVal(map[string]cty.Value{"source": cty.StringVal("hashicorp/azurerm"), "version": cty.StringVal("~> 4.0")}))
	b.AppendNewline()
	pb := b.AppendNewBlock("provider", []string{"azurerm"}).Body()
	pb.AppendNewBlock("features", nil)
	pb.SetAttributeValue("subscription_id", cty.StringVal(s.Subscription))
	name := c.Metadata.Name
	w := &tfWriter{b: b, c: c, s: s}
	for _, r := range desired {
		if r.Kind != kindKubeconfig {
			b.AppendNewline()
		}
		if err := kinds.Terraform(w, r); err != nil {
			return nil, err
		}
	}
	b.AppendNewline()
	out := b.AppendNewBlock("output", []string{"kube_config"}).Body()
	out.SetAttributeRaw("value", tfgen.Ref("azurerm_kubernetes_cluster", tfgen.Name(name), "kube_config_raw"))
	out.SetAttributeValue("sensitive", cty.True)
	return m.Bytes(), nil
}

// poolAttrs writes the attributes a default node pool and a node pool share.
func poolAttrs(b *hclwrite.Body, c *spec.Cluster, g spec.NodeGroup, version string) {
	b.SetAttributeValue("vm_size", cty.StringVal(vmSize(g)))
	if g.Min != nil && g.Max != nil {
		b.SetAttributeValue("auto_scaling_enabled", cty.True)
		b.SetAttributeValue("min_count", cty.NumberIntVal(int64(*g.Min)))
		b.SetAttributeValue("max_count", cty.NumberIntVal(int64(*g.Max)))
		if g.Count != nil {
			b.SetAttributeValue("node_count", cty.NumberIntVal(int64(*g.Count)))
		}
	} else {
		b.SetAttributeValue("node_count", cty.NumberIntVal(int64(g.Size())))
	}
	if len(c.Spec.Zones) > 0 {
		b.SetAttributeValue("zones", tfgen.Strings(c.Spec.Zones...))
	}
	if len(g.Labels) > 0 {
		b.SetAttributeValue("node_labels", tfgen.StringMap(maps.Clone(g.Labels)))
	}
	if g.DiskSize > 0 {
		b.SetAttributeValue("os_disk_size_gb", cty.NumberIntVal(int64(g.DiskSize)))
	}
	if version != "" {
		b.SetAttributeValue("orchestrator_version", cty.StringVal(strings.TrimPrefix(version, "v")))
	}
}

// tfWriter writes the module's main.tf: the spec, its section, and the resource group's name once
// written (a resource or a data source).
type tfWriter struct {
	b      *hclwrite.Body
	c      *spec.Cluster
	s      Section
	rgName hclwrite.Tokens
}

// group writes the resource group.
func (w *tfWriter) group(r cluster.Resource) error {
	b := w.b
	rg := b.AppendNewBlock("resource", []string{"azurerm_resource_group", tfgen.Name(r.Name)}).Body()
	rg.SetAttributeValue("name", cty.StringVal(r.Name))
	rg.SetAttributeRaw("location", tfgen.Ref("var", "region"))
	rg.SetAttributeRaw("tags", tfgen.Ref("var", "tags"))
	w.rgName = tfgen.Ref("azurerm_resource_group", tfgen.Name(r.Name), "name")
	return nil
}

// cluster writes the managed cluster with its system pool (and a data source for an existing resource group).
func (w *tfWriter) cluster(r cluster.Resource) error {
	b, c, s := w.b, w.c, w.s
	name := c.Metadata.Name
	if w.rgName == nil {
		ds := b.AppendNewBlock("data", []string{"azurerm_resource_group", tfgen.Name(s.ResourceGroup)}).Body()
		ds.SetAttributeValue("name", cty.StringVal(s.ResourceGroup))
		b.AppendNewline()
		w.rgName = tfgen.Ref("data", "azurerm_resource_group", tfgen.Name(s.ResourceGroup), "name")
	}
	k := b.AppendNewBlock("resource", []string{"azurerm_kubernetes_cluster", tfgen.Name(name)}).Body()
	k.SetAttributeValue("name", cty.StringVal(name))
	k.SetAttributeRaw("location", tfgen.Ref("var", "region"))
	k.SetAttributeRaw("resource_group_name", w.rgName)
	k.SetAttributeValue("dns_prefix", cty.StringVal(s.DNSPrefix))
	if v := r.Fields["version"]; v != "" {
		k.SetAttributeValue("kubernetes_version", cty.StringVal(v))
	}
	k.SetAttributeValue("sku_tier", cty.StringVal(s.SKUTier))
	k.SetAttributeRaw("tags", tfgen.Ref("var", "tags"))
	k.AppendNewline()
	dp := k.AppendNewBlock("default_node_pool", nil).Body()
	dp.SetAttributeValue("name", cty.StringVal(c.Spec.NodeGroups[0].Name))
	poolAttrs(dp, c, c.Spec.NodeGroups[0], r.Fields["version"])
	k.AppendNewline()
	k.AppendNewBlock("identity", nil).Body().SetAttributeValue("type", cty.StringVal("SystemAssigned"))
	k.AppendNewline()
	np := k.AppendNewBlock("network_profile", nil).Body()
	np.SetAttributeValue("network_plugin", cty.StringVal(s.NetworkPlugin))
	if s.NetworkPlugin == "azure" {
		np.SetAttributeValue("network_plugin_mode", cty.StringVal("overlay"))
	}
	if v := c.Spec.Networking.PodCIDR; v != "" {
		np.SetAttributeValue("pod_cidr", cty.StringVal(v))
	}
	if v := c.Spec.Networking.ServiceCIDR; v != "" {
		np.SetAttributeValue("service_cidr", cty.StringVal(v))
	}
	return nil
}

// pool writes a node pool of a further node group.
func (w *tfWriter) pool(r cluster.Resource) error {
	b, c := w.b, w.c
	name := c.Metadata.Name
	var g spec.NodeGroup
	for _, x := range c.Spec.NodeGroups {
		if x.Name == r.Name {
			g = x
		}
	}
	np := b.AppendNewBlock("resource", []string{"azurerm_kubernetes_cluster_node_pool", tfgen.Name(r.Name)}).Body()
	np.SetAttributeValue("name", cty.StringVal(r.Name))
	np.SetAttributeRaw("kubernetes_cluster_id", tfgen.Ref("azurerm_kubernetes_cluster", tfgen.Name(name), "id"))
	np.SetAttributeValue("mode", cty.StringVal("User"))
	poolAttrs(np, c, g, r.Fields["version"])
	if len(g.Taints) > 0 {
		np.SetAttributeValue("node_taints", tfgen.Strings(g.Taints...))
	}
	if g.Spot {
		np.SetAttributeValue("priority", cty.StringVal("Spot"))
		np.SetAttributeValue("eviction_policy", cty.StringVal("Delete"))
		np.SetAttributeValue("spot_max_price", cty.NumberIntVal(-1))
	}
	np.SetAttributeRaw("tags", tfgen.Ref("var", "tags"))
	return nil
}

package gke

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
)

// Terraform writes the cluster and its node pools as google_container_cluster (with its default
// node pool removed, as nuv does) and google_container_node_pool resources, from the resources
// Desired returned. The kubeconfig is nuv's (`nuv cluster apply` writes it); Terraform users get
// theirs with `gcloud container clusters get-credentials`.
func (p *Provider) Terraform(c *spec.Cluster, desired []cluster.Resource) (map[string][]byte, error) {
	s := c.Spec
	g := p.section(c)
	name := c.Metadata.Name
	labels := map[string]string{LabelCluster: name}
	for k, v := range s.Tags {
		labels[k] = v
	}
	m := tfgen.NewModule()
	m.Variables(regionOf(g.Location), labels)
	vars := m.File("variables.tf")
	vars.AppendNewline()
	v := vars.AppendNewBlock("variable", []string{"project"}).Body()
	v.SetAttributeRaw("type", tfgen.Ident("string"))
	v.SetAttributeValue("description", cty.StringVal("Google Cloud project of the cluster."))
	v.SetAttributeValue("default", cty.StringVal(g.Project))
	vars.AppendNewline()
	v = vars.AppendNewBlock("variable", []string{"location"}).Body()
	v.SetAttributeRaw("type", tfgen.Ident("string"))
	v.SetAttributeValue("description", cty.StringVal("Zone (a zonal cluster) or region (a regional one) of the cluster."))
	v.SetAttributeValue("default", cty.StringVal(g.Location))

	b := m.File("main.tf")
	tf := b.AppendNewBlock("terraform", nil).Body()
	rp := tf.AppendNewBlock("required_providers", nil).Body()
	rp.SetAttributeValue("google", cty.ObjectVal(map[string]cty.Value{"source": cty.StringVal("hashicorp/google"), "version": cty.StringVal(">= 6.0")}))
	b.AppendNewline()
	pb := b.AppendNewBlock("provider", []string{"google"}).Body()
	pb.SetAttributeRaw("project", tfgen.Ident("var.project"))
	pb.SetAttributeRaw("region", tfgen.Ident("var.region"))
	version := strings.TrimPrefix(s.KubernetesVersion, "v")
	if version != "" {
		b.AppendNewline()
		d := b.AppendNewBlock("data", []string{"google_container_engine_versions", "pinned"}).Body()
		d.SetAttributeRaw("location", tfgen.Ident("var.location"))
		d.SetAttributeValue("version_prefix", cty.StringVal(version+"."))
	}
	w := &tfWriter{b: b, c: c, g: g, clusterLabel: tfgen.Name(name), pinned: version != ""}
	for _, r := range desired {
		if err := kinds.Terraform(w, r); err != nil {
			return nil, err
		}
	}
	return m.Bytes(), nil
}

// tfWriter writes the module's main.tf: the spec, its section, the cluster's Terraform label and
// whether the version is pinned (by the google_container_engine_versions data source).
type tfWriter struct {
	b            *hclwrite.Body
	c            *spec.Cluster
	g            Section
	clusterLabel string
	pinned       bool
}

// cluster writes google_container_cluster, its default node pool removed as nuv does.
func (w *tfWriter) cluster(cluster.Resource) error {
	s, g, name := w.c.Spec, w.g, w.c.Metadata.Name
	w.b.AppendNewline()
	cb := w.b.AppendNewBlock("resource", []string{"google_container_cluster", w.clusterLabel}).Body()
	cb.SetAttributeValue("name", cty.StringVal(name))
	cb.SetAttributeRaw("location", tfgen.Ident("var.location"))
	if z := clusterZones(w.c); len(z) > 0 && !(len(z) == 1 && z[0] == g.Location) {
		cb.SetAttributeValue("node_locations", tfgen.Strings(z...))
	}
	if w.pinned {
		cb.SetAttributeRaw("min_master_version", tfgen.Ref("data", "google_container_engine_versions", "pinned", "latest_master_version"))
	}
	cb.SetAttributeValue("remove_default_node_pool", cty.True)
	cb.SetAttributeValue("initial_node_count", cty.NumberIntVal(1))
	cb.SetAttributeRaw("resource_labels", tfgen.Ident("var.tags"))
	cb.SetAttributeValue("deletion_protection", cty.False)
	if g.ReleaseChannel != "" {
		cb.AppendNewline()
		cb.AppendNewBlock("release_channel", nil).Body().SetAttributeValue("channel", cty.StringVal(g.ReleaseChannel))
	}
	if s.Networking.PodCIDR != "" || s.Networking.ServiceCIDR != "" {
		cb.AppendNewline()
		ip := cb.AppendNewBlock("ip_allocation_policy", nil).Body()
		if s.Networking.PodCIDR != "" {
			ip.SetAttributeValue("cluster_ipv4_cidr_block", cty.StringVal(s.Networking.PodCIDR))
		}
		if s.Networking.ServiceCIDR != "" {
			ip.SetAttributeValue("services_ipv4_cidr_block", cty.StringVal(s.Networking.ServiceCIDR))
		}
	}
	return nil
}

// pool writes google_container_node_pool of a node group.
func (w *tfWriter) pool(r cluster.Resource) error {
	ng, ok := groupOf(w.c.Spec, r.Name)
	if !ok {
		return fmt.Errorf("terraform: node pool %s is not a node group of the spec", r.Name)
	}
	w.b.AppendNewline()
	writePool(w.b.AppendNewBlock("resource", []string{"google_container_node_pool", tfgen.Name(r.Name)}).Body(), w.c, ng, w.clusterLabel, w.pinned)
	return nil
}

func groupOf(s spec.Spec, name string) (spec.NodeGroup, bool) {
	for _, ng := range s.NodeGroups {
		if ng.Name == name {
			return ng, true
		}
	}
	return spec.NodeGroup{}, false
}

func writePool(pb *hclwrite.Body, c *spec.Cluster, ng spec.NodeGroup, clusterLabel string, pinned bool) {
	ps := poolSettings(Placement(c), ng.Name)
	pb.SetAttributeValue("name", cty.StringVal(ng.Name))
	pb.SetAttributeRaw("cluster", tfgen.Ref("google_container_cluster", clusterLabel, "id"))
	pb.SetAttributeRaw("location", tfgen.Ident("var.location"))
	if z := poolZones(c, ps); len(z) > 0 && !(len(z) == 1 && z[0] == Placement(c).Location) {
		pb.SetAttributeValue("node_locations", tfgen.Strings(z...))
	}
	if pinned {
		pb.SetAttributeRaw("version", tfgen.Ref("data", "google_container_engine_versions", "pinned", "latest_node_version"))
	}
	if ng.Min != nil && ng.Max != nil {
		if ng.Count != nil {
			pb.SetAttributeValue("initial_node_count", cty.NumberIntVal(int64(*ng.Count)))
		}
		pb.AppendNewline()
		as := pb.AppendNewBlock("autoscaling", nil).Body()
		as.SetAttributeValue("min_node_count", cty.NumberIntVal(int64(*ng.Min)))
		as.SetAttributeValue("max_node_count", cty.NumberIntVal(int64(*ng.Max)))
	} else {
		pb.SetAttributeValue("node_count", cty.NumberIntVal(int64(ng.Size())))
	}
	pb.AppendNewline()
	nc := pb.AppendNewBlock("node_config", nil).Body()
	nc.SetAttributeValue("machine_type", cty.StringVal(machineType(ng)))
	nc.SetAttributeValue("disk_size_gb", cty.NumberIntVal(int64(diskSize(ng))))
	nc.SetAttributeValue("image_type", cty.StringVal(imageType(ps)))
	if ng.Spot {
		nc.SetAttributeValue("spot", cty.True)
	}
	if len(ng.Labels) > 0 {
		nc.SetAttributeValue("labels", tfgen.StringMap(ng.Labels))
	}
	nc.SetAttributeRaw("resource_labels", tfgen.Ident("var.tags"))
	nc.SetAttributeValue("oauth_scopes", tfgen.Strings("https://www.googleapis.com/auth/cloud-platform"))
	for _, t := range taints(ng.Taints) {
		nc.AppendNewline()
		tb := nc.AppendNewBlock("taint", nil).Body()
		tb.SetAttributeValue("key", cty.StringVal(t.Key))
		tb.SetAttributeValue("value", cty.StringVal(t.Value))
		tb.SetAttributeValue("effect", cty.StringVal(t.Effect.String()))
	}
}

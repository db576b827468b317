package spec

import "slices"

// GKESpec is the gke provider's section (Google Kubernetes Engine).
type GKESpec struct {
	// Project is the Google Cloud project the cluster lives in (required).
	Project string `yaml:"project" json:"project"`
	// Location is a zone (us-central1-a: a zonal cluster, one control plane) or a region
	// (us-central1: a regional cluster, its control plane replicated across the region's zones;
	// the highly available choice). Required.
	Location string `yaml:"location" json:"location"`
	// ReleaseChannel is RAPID, REGULAR, STABLE or EXTENDED: GKE picks and upgrades the version
	// within it. With spec.kubernetesVersion too, the version must be one the channel offers.
	ReleaseChannel string `yaml:"releaseChannel,omitempty" json:"releaseChannel,omitempty"`
	// NodePools add GKE settings to the spec's node groups, by name.
	NodePools []GKENodePool `yaml:"nodePools,omitempty" json:"nodePools,omitempty"`
}

// GKENodePool is the GKE settings of one node group.
type GKENodePool struct {
	// Name is the node group's name.
	Name string `yaml:"name" json:"name"`
	// Zones are the zones its nodes run in (default: the cluster's, spec.zones). GKE counts nodes
	// per zone: a group of count 2 in 3 zones has 6 nodes.
	Zones []string `yaml:"zones,omitempty" json:"zones,omitempty"`
	// ImageType is the node image (default COS_CONTAINERD).
	ImageType string `yaml:"imageType,omitempty" json:"imageType,omitempty"`
}

func (g *GKESpec) clone() *GKESpec {
	if g == nil {
		return nil
	}
	out := *g
	out.NodePools = nil
	for _, p := range g.NodePools {
		p.Zones = slices.Clone(p.Zones)
		out.NodePools = append(out.NodePools, p)
	}
	return &out
}

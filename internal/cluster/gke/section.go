package gke

import (
	"slices"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Section is the gke provider's spec section, `spec.gke:`. Where the cluster lives is said as for
// every provider, by spec.region and spec.zones; the section keeps what only GKE has.
type Section struct {
	// Project is the Google Cloud project the cluster lives in (default: the environment's, as
	// gcloud finds it: CLOUDSDK_CORE_PROJECT, GOOGLE_CLOUD_PROJECT, the project of the credentials
	// file).
	Project string `yaml:"project,omitempty" json:"project"`
	// Location is a zone (us-central1-a: a zonal cluster, one control plane) or a region
	// (us-central1: a regional cluster, its control plane replicated across the region's zones;
	// the highly available choice). Default: from spec.region and spec.zones (Placement).
	Location string `yaml:"location,omitempty" json:"location"`
	// ReleaseChannel is RAPID, REGULAR, STABLE or EXTENDED: GKE picks and upgrades the version
	// within it. With spec.kubernetesVersion too, the version must be one the channel offers.
	ReleaseChannel string `yaml:"releaseChannel,omitempty" json:"releaseChannel,omitempty"`
	// NodePools add GKE settings to the spec's node groups, by name.
	NodePools []NodePool `yaml:"nodePools,omitempty" json:"nodePools,omitempty"`

	// locationPath and projectPath are the spec fields the location and project came from, for
	// messages ("" when nothing gave them).
	locationPath, projectPath string
}

// NodePool is the GKE settings of one node group.
type NodePool struct {
	// Name is the node group's name.
	Name string `yaml:"name" json:"name"`
	// Zones are the zones its nodes run in (default: the cluster's, spec.zones). GKE counts nodes
	// per zone: a group of count 2 in 3 zones has 6 nodes.
	Zones []string `yaml:"zones,omitempty" json:"zones,omitempty"`
	// ImageType is the node image (default COS_CONTAINERD).
	ImageType string `yaml:"imageType,omitempty" json:"imageType,omitempty"`
}

// Key names spec.gke: its decoder (the registry's), reader and writer.
var Key = spec.SectionKey[Section]("gke")

// Placement is c's spec.gke with its location resolved from the spec alone: spec.gke.location if
// given, else from spec.region and spec.zones as for every provider: a highly available control
// plane (spec.controlPlane.count > 1) makes a regional cluster (spec.region, or the region of the
// zones), a single zone a zonal cluster in it, else the region (regional). The project is the
// section's (see Provider.section for the environment's).
func Placement(c *spec.Cluster) Section {
	s := Key.Get(c)
	if s.Project != "" {
		s.projectPath = "spec.gke.project"
	}
	sp := c.Spec
	region := sp.Region
	if region == "" && len(sp.Zones) > 0 && zoneRE.MatchString(sp.Zones[0]) {
		region = regionOf(sp.Zones[0])
	}
	switch {
	case s.Location != "":
		s.locationPath = "spec.gke.location"
	case len(sp.Zones) == 1 && sp.ControlPlane.Count <= 1:
		s.Location, s.locationPath = sp.Zones[0], "spec.zones[0]"
	case sp.Region != "":
		s.Location, s.locationPath = region, "spec.region"
	case region != "":
		s.Location, s.locationPath = region, "spec.zones"
	}
	s.NodePools = slices.Clone(s.NodePools)
	return s
}

// section is Placement with the project defaulted from the environment as gcloud does.
func (p *Provider) section(c *spec.Cluster) Section {
	s := Placement(c)
	if s.Project == "" {
		s.Project, s.projectPath = p.defaultProject(), "spec.gke.project"
	}
	return s
}

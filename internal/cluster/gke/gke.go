// Package gke is nuv's Google Kubernetes Engine provider: it plans and applies GKE clusters and
// their node pools through the v1 ClusterManager API (cloud.google.com/go/container, gRPC) with
// Application Default Credentials, and writes a kubeconfig whose exec credential is `nuv
// -gke-token` (no gcloud or gke-gcloud-auth-plugin). CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER
// points it (and gcloud) at another endpoint, such as nuv's GKE emulator on loopback.
//
// Resources: cluster/NAME (created as Terraform's google_container_cluster with
// remove_default_node_pool: a bootstrap pool is created with it and deleted), one node-pool/G per
// node group, and kubeconfig/NAME. Every change is a GKE long-running operation that nuv follows
// to the end, logging its status and elapsed time. A cluster without nuv's label
// (nuv-cluster=NAME) is another's: the plan shows it as a conflict and nuv never touches it.
package gke

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/lazy"
)

// LabelCluster is the resource label nuv puts on the GKE clusters it makes (GCP label keys allow
// no '/' or '.', so not nuv.dev/cluster).
const LabelCluster = kit.LabelCluster

// bootstrapPool is the node pool a cluster is created with and that nuv deletes right away (GKE
// creates clusters with a node pool; the spec's node groups are separate resources).
const bootstrapPool = "nuv-bootstrap"

// Provider is the gke provider.
type Provider struct {
	// Project is the project root: kubeconfigs go to Project/clusters/<name>.kubeconfig.
	Project string
	// Log receives operation progress; nil is quiet.
	Log cli.Logger
	// Getenv reads GOOGLE_APPLICATION_CREDENTIALS, CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER,
	// HOME, CLOUDSDK_CORE_PROJECT; nil is os.Getenv.
	Getenv func(string) string
	// Exe is the nuv binary the kubeconfig's exec credential runs (default: this executable).
	Exe string
	// Poll is how often operations are polled (default 1s; 200ms against a loopback endpoint).
	Poll time.Duration

	mu   sync.Mutex
	conn *Conn
}

// Name is "gke".
func (p *Provider) Name() string { return "gke" }

func (p *Provider) log() cli.Logger { return kit.Log(p.Log) }

var (
	zoneRE   = lazy.MustCompile(`^[a-z]+-[a-z]+[0-9]+-[a-z]$`)
	regionRE = lazy.MustCompile(`^[a-z]+-[a-z]+[0-9]+$`)
	projRE   = lazy.MustCompile(`^[a-z][-a-z0-9]{4,28}[a-z0-9]$`)
	gcpLabel = lazy.MustCompile(`^[a-z][-_a-z0-9]{0,62}$`)
	gcpValue = lazy.MustCompile(`^[-_a-z0-9]{0,63}$`)
)

// regionOf is the region of a location (a zone's region, or the region itself).
func regionOf(location string) string {
	if zoneRE.MatchString(location) {
		return location[:strings.LastIndex(location, "-")]
	}
	return location
}

// Validate checks the spec's GKE rules offline; what only the API knows (the versions and
// locations it offers) is checked by Observe against GetServerConfig, before anything is made.
// The cluster's location comes from spec.region and spec.zones (or spec.gke.location), its project
// from spec.gke.project or the environment (CLOUDSDK_CORE_PROJECT, GOOGLE_CLOUD_PROJECT, the
// credentials file's).
func (p *Provider) Validate(c *spec.Cluster) []spec.FieldError {
	_, errs := Key.Decode(c)
	if len(errs) > 0 {
		return errs
	}
	v := &gkeCheck{errs: errs, s: c.Spec, g: p.section(c)}
	v.projectAndLocation()
	v.zones()
	switch v.g.ReleaseChannel {
	case "", "RAPID", "REGULAR", "STABLE", "EXTENDED":
	default:
		v.add("spec.gke.releaseChannel", "%q: want RAPID, REGULAR, STABLE or EXTENDED", v.g.ReleaseChannel)
	}
	v.tags()
	v.nodePools(v.nodeGroups())
	v.errs = append(v.errs, c.CheckSections()...)
	if v.s.Registry {
		v.add("spec.registry", "a GKE cluster cannot reach nuv's loopback registry; push images to a registry it can pull from")
	}
	if v.s.Networking.VPCCIDR != "" {
		v.add("spec.networking.vpcCIDR", "not supported by the gke provider (clusters use the project's default network)")
	}
	return v.errs
}

// gkeCheck is one validation of a spec against GKE's rules: the spec, its GKE section, and the
// problems found so far.
type gkeCheck struct {
	errs  []spec.FieldError
	s     spec.Spec
	g     Section
	zonal bool // the cluster's location is a zone
}

// add records a problem with the field at path.
func (v *gkeCheck) add(path, f string, a ...any) { v.errs = append(v.errs, spec.Errorf(path, f, a...)) }

// projectAndLocation checks the project id, the location (a zone or a region, agreeing with
// spec.region) and that a zonal cluster has one control plane.
func (v *gkeCheck) projectAndLocation() {
	s, g := v.s, v.g
	switch {
	case g.Project == "":
		v.add("spec.gke.project", "required: the Google Cloud project (or set CLOUDSDK_CORE_PROJECT or GOOGLE_CLOUD_PROJECT, or use credentials of a project)")
	case !projRE.MatchString(g.Project):
		v.add(g.projectPath, "%q is not a project id (6 to 30 lower-case letters, digits and '-', starting with a letter)", g.Project)
	}
	switch {
	case g.Location == "":
		v.add("spec.region", "required: the region (us-central1: a regional cluster) or one zone in spec.zones (a zonal cluster)")
	case g.locationPath == "spec.gke.location" && !zoneRE.MatchString(g.Location) && !regionRE.MatchString(g.Location):
		v.add(g.locationPath, "%q is neither a zone (us-central1-a) nor a region (us-central1)", g.Location)
	case g.locationPath == "spec.region" && !regionRE.MatchString(g.Location):
		v.add(g.locationPath, "%q is not a region (us-central1)", g.Location)
	}
	v.zonal = zoneRE.MatchString(g.Location)
	if s.ControlPlane.Count > 1 && v.zonal {
		v.add("spec.controlPlane.count", "%d: a zonal cluster (%s %s) has one control plane; place it in a region (%s) for a highly available one", s.ControlPlane.Count, g.locationPath, g.Location, regionOf(g.Location))
	}
	if s.Region != "" && g.locationPath == "spec.gke.location" && s.Region != regionOf(g.Location) {
		v.add("spec.region", "%q differs from the region of spec.gke.location %s (leave one out or make them agree)", s.Region, g.Location)
	}
}

// zones checks spec.zones are zones of the cluster's region and include a zonal cluster's zone.
func (v *gkeCheck) zones() {
	s, g := v.s, v.g
	for i, z := range s.Zones {
		path := fmt.Sprintf("spec.zones[%d]", i)
		if !zoneRE.MatchString(z) {
			v.add(path, "%q is not a zone", z)
		} else if g.Location != "" && regionOf(z) != regionOf(g.Location) {
			v.add(path, "zone %s is not in region %s of %s", z, regionOf(g.Location), g.locationPath)
		}
	}
	if v.zonal && len(s.Zones) > 0 && !slices.Contains(s.Zones, g.Location) {
		v.add("spec.zones", "must include the cluster's zone %s (%s)", g.Location, g.locationPath)
	}
}

// tags checks spec.tags are valid GKE resource labels and leave nuv's own label alone.
func (v *gkeCheck) tags() {
	for k, val := range v.s.Tags {
		if !gcpLabel.MatchString(k) || !gcpValue.MatchString(val) {
			v.add("spec.tags."+k, "GKE resource labels need lower-case keys and values of letters, digits, '-' and '_' (key starting with a letter, at most 63)")
		}
		if k == LabelCluster {
			v.add("spec.tags."+k, "%s is nuv's own label", LabelCluster)
		}
	}
}

// nodeGroups checks the node groups against GKE's node pools (name, manager, machine type,
// autoscaling, reserved labels) and returns the set of their names.
func (v *gkeCheck) nodeGroups() map[string]bool {
	groups := map[string]bool{}
	for i, ng := range v.s.NodeGroups {
		path := fmt.Sprintf("spec.nodeGroups[%d]", i)
		groups[ng.Name] = true
		if ng.Name == bootstrapPool {
			v.add(path+".name", "%s is the pool nuv creates clusters with; choose another name", bootstrapPool)
		}
		if ng.Manager == "karpenter" {
			v.add(path+".manager", "karpenter runs on EKS only; GKE node pools are managed (or use cluster autoscaling with min/max)")
		}
		if ng.InstanceType != "" {
			if err := checkMachineType(ng.InstanceType); err != nil {
				v.add(path+".instanceType", "%v", err)
			}
		}
		if (ng.Min == nil) != (ng.Max == nil) {
			v.add(path+".max", "GKE autoscaling needs both min and max")
		}
		for k := range ng.Labels {
			if strings.HasPrefix(k, "cloud.google.com/") || strings.HasPrefix(k, "kubernetes.io/") || strings.HasPrefix(k, "k8s.io/") {
				v.add(path+".labels."+k, "label %s is GKE's own (the cloud.google.com/, kubernetes.io/ and k8s.io/ prefixes are reserved)", k)
			}
		}
	}
	return groups
}

// nodePools checks spec.gke.nodePools: each names one of the node groups, once, with zones of the
// cluster and a known image type.
func (v *gkeCheck) nodePools(groups map[string]bool) {
	s, g := v.s, v.g
	seen := map[string]bool{}
	for i, np := range g.NodePools {
		path := fmt.Sprintf("spec.gke.nodePools[%d]", i)
		if !groups[np.Name] {
			v.add(path+".name", "%q is not a node group of spec.nodeGroups", np.Name)
		}
		if seen[np.Name] {
			v.add(path+".name", "%q is listed twice", np.Name)
		}
		seen[np.Name] = true
		for j, z := range np.Zones {
			zp := fmt.Sprintf("%s.zones[%d]", path, j)
			if !zoneRE.MatchString(z) {
				v.add(zp, "%q is not a zone", z)
			} else if len(s.Zones) > 0 && !slices.Contains(s.Zones, z) {
				v.add(zp, "zone %s is not one of the cluster's zones (spec.zones)", z)
			} else if len(s.Zones) == 0 && v.zonal && z != g.Location {
				v.add(zp, "zone %s is not one of the cluster's zones (%s; list more in spec.zones)", z, g.Location)
			} else if g.Location != "" && regionOf(z) != regionOf(g.Location) {
				v.add(zp, "zone %s is not in region %s", z, regionOf(g.Location))
			}
		}
		switch np.ImageType {
		case "", "COS_CONTAINERD", "UBUNTU_CONTAINERD":
		default:
			v.add(path+".imageType", "%q: want COS_CONTAINERD or UBUNTU_CONTAINERD", np.ImageType)
		}
	}
}

// poolSettings returns the GKE settings of node group name.
func poolSettings(g Section, name string) NodePool {
	for _, np := range g.NodePools {
		if np.Name == name {
			return np
		}
	}
	return NodePool{Name: name}
}

// machineType is a group's machine type (GKE's default e2-medium when the spec names none).
func machineType(ng spec.NodeGroup) string {
	if ng.InstanceType == "" {
		return "e2-medium"
	}
	return ng.InstanceType
}

// Desired is the cluster, a node pool per node group, and the kubeconfig.
func (p *Provider) Desired(c *spec.Cluster) ([]cluster.Resource, error) {
	s := c.Spec
	g := p.section(c)
	name := c.Metadata.Name
	ck := "cluster/" + name
	cf := map[string]string{
		"project":  g.Project,
		"location": g.Location,
		"zones":    strings.Join(clusterZones(c), ","),
		"labels":   kit.Map(s.Tags),
		"status":   "RUNNING",
	}
	if s.KubernetesVersion != "" {
		cf["version"] = strings.TrimPrefix(s.KubernetesVersion, "v")
	}
	if g.ReleaseChannel != "" {
		cf["releaseChannel"] = g.ReleaseChannel
	}
	if s.Networking.PodCIDR != "" {
		cf["podCIDR"] = s.Networking.PodCIDR
	}
	if s.Networking.ServiceCIDR != "" {
		cf["serviceCIDR"] = s.Networking.ServiceCIDR
	}
	out := []cluster.Resource{{Kind: "cluster", Name: name, Fields: cf, Replace: []string{"project", "location", "podCIDR", "serviceCIDR"}}}
	for _, ng := range s.NodeGroups {
		ps := poolSettings(g, ng.Name)
		f := map[string]string{
			"machineType": machineType(ng),
			"spot":        kit.Bool(ng.Spot),
			"labels":      kit.Map(ng.Labels),
			"taints":      strings.Join(sortedTaints(ng.Taints), ","),
			"zones":       strings.Join(poolZones(c, ps), ","),
			"imageType":   imageType(ps),
			"diskSize":    strconv.Itoa(diskSize(ng)),
			"status":      "RUNNING",
		}
		if ng.Min != nil && ng.Max != nil {
			f["autoscaling"] = fmt.Sprintf("%d..%d", *ng.Min, *ng.Max)
			if ng.Count != nil {
				f["count"] = strconv.Itoa(*ng.Count)
			}
		} else {
			f["count"] = strconv.Itoa(ng.Size())
			f["autoscaling"] = "off"
		}
		if s.KubernetesVersion != "" {
			f["version"] = strings.TrimPrefix(s.KubernetesVersion, "v")
		}
		out = append(out, cluster.Resource{Kind: "node-pool", Name: ng.Name, Fields: f, Replace: []string{"spot"}, DependsOn: []string{ck}})
	}
	out = append(out, cluster.Resource{Kind: "kubeconfig", Name: name, Fields: map[string]string{"file": p.kubeconfigPath(name), "endpoint": "current"}, DependsOn: []string{ck}})
	return out, nil
}

func imageType(ps NodePool) string {
	if ps.ImageType == "" {
		return "COS_CONTAINERD"
	}
	return ps.ImageType
}

func diskSize(ng spec.NodeGroup) int {
	if ng.DiskSize == 0 {
		return 100
	}
	return ng.DiskSize
}

// clusterZones are the cluster's node locations: spec.zones, else its zone, else the region's
// first three (as GKE picks for a regional cluster).
func clusterZones(c *spec.Cluster) []string {
	if len(c.Spec.Zones) > 0 {
		z := slices.Clone(c.Spec.Zones)
		sort.Strings(z)
		return z
	}
	loc := Placement(c).Location
	if zoneRE.MatchString(loc) {
		return []string{loc}
	}
	return nil // the region's default zones: whatever GKE chooses
}

func poolZones(c *spec.Cluster, ps NodePool) []string {
	if len(ps.Zones) > 0 {
		z := slices.Clone(ps.Zones)
		sort.Strings(z)
		return z
	}
	return clusterZones(c)
}

func sortedTaints(ts []string) []string {
	out := slices.Clone(ts)
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

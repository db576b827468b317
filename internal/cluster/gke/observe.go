package gke

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

func locPath(project, location string) string {
	return "projects/" + project + "/locations/" + location
}

func clusterPath(project, location, name string) string {
	return locPath(project, location) + "/clusters/" + name
}

// checkServer checks what only the API knows against GetServerConfig: that the location exists
// and offers the version and release channel the spec asks for. Problems carry the spec's file,
// line and field path.
func (p *Provider) checkServer(ctx context.Context, cn *Conn, c *spec.Cluster) error {
	g := p.section(c)
	sc, err := cn.Client.GetServerConfig(ctx, &containerpb.GetServerConfigRequest{Name: locPath(g.Project, g.Location)}, retry())
	if err != nil {
		if st, ok := status.FromError(err); ok {
			switch st.Code() {
			case codes.InvalidArgument, codes.NotFound:
				return c.Positioned(specFile(c), []spec.FieldError{spec.Errorf(g.locationPath, "%s: %s", g.Location, st.Message())})
			case codes.PermissionDenied:
				return c.Positioned(specFile(c), []spec.FieldError{spec.Errorf(g.projectPath, "%s: %s (credentials from %s)", g.Project, st.Message(), cn.Source)})
			}
		}
		return fmt.Errorf("GKE server config for %s: %w", locPath(g.Project, g.Location), err)
	}
	var errs []spec.FieldError
	valid := sc.ValidMasterVersions
	if g.ReleaseChannel != "" {
		valid = nil
		for _, ch := range sc.Channels {
			if ch.Channel.String() == g.ReleaseChannel {
				valid = ch.ValidVersions
			}
		}
		if valid == nil {
			errs = append(errs, spec.Errorf("spec.gke.releaseChannel", "%s is not offered in %s", g.ReleaseChannel, g.Location))
		}
	}
	if v := c.Spec.KubernetesVersion; v != "" && valid != nil {
		want := strings.TrimPrefix(v, "v")
		ok := false
		for _, o := range valid {
			ok = ok || matchesVersion(o, want)
		}
		if !ok {
			in := "in " + g.Location
			if g.ReleaseChannel != "" {
				in = "in release channel " + g.ReleaseChannel
			}
			errs = append(errs, spec.Errorf("spec.kubernetesVersion", "%s is not offered %s (offered: %s)", v, in, strings.Join(minorsOf(valid), ", ")))
		}
	}
	return c.Positioned(specFile(c), errs)
}

func specFile(c *spec.Cluster) string {
	if i := strings.LastIndex(c.Source, ":"); i > 0 {
		return c.Source[:i]
	}
	if c.Source == "" {
		return "spec"
	}
	return c.Source
}

// matchesVersion reports whether GKE version full (1.35.7-gke.1200000) is what the spec's want
// (1.35 or 1.35.7) asks for.
func matchesVersion(full, want string) bool {
	return full == want || strings.HasPrefix(full, want+".") || strings.HasPrefix(full, want+"-")
}

// minorsOf lists the MAJOR.MINOR.PATCH of versions, newest first, without repeats.
func minorsOf(vs []string) []string {
	var out []string
	for _, v := range vs {
		base, _, _ := strings.Cut(v, "-")
		if !slices.Contains(out, base) {
			out = append(out, base)
		}
	}
	return out
}

// asSpecVersion cuts a GKE version to the precision of the spec's (1.35.7-gke.N -> 1.35 or 1.35.7).
func asSpecVersion(full, want string) string {
	if want == "" {
		return ""
	}
	base, _, _ := strings.Cut(full, "-")
	n := strings.Count(want, ".") + 1
	parts := strings.SplitN(base, ".", 3)
	if n > len(parts) {
		n = len(parts)
	}
	return strings.Join(parts[:n], ".")
}

// getCluster reads a cluster; errNoCluster when there is none.
func getCluster(ctx context.Context, cn *Conn, project, location, name string) (*containerpb.Cluster, error) {
	gc, err := cn.Client.GetCluster(ctx, &containerpb.GetClusterRequest{Name: clusterPath(project, location, name)}, retry())
	if status.Code(err) == codes.NotFound {
		return nil, errNoCluster
	}
	if err != nil {
		return nil, fmt.Errorf("get GKE cluster %s: %w", clusterPath(project, location, name), err)
	}
	return gc, nil
}

// Observe connects (credentials are checked here, before anything is made), checks the spec
// against the server's configuration and reads the cluster, its node pools and the kubeconfig.
func (p *Provider) Observe(ctx context.Context, c *spec.Cluster, recorded []cluster.Resource) ([]cluster.Resource, error) {
	cn, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.checkServer(ctx, cn, c); err != nil {
		return nil, err
	}
	g := p.section(c)
	name := c.Metadata.Name
	gc, err := getCluster(ctx, cn, g.Project, g.Location, name)
	if err == errNoCluster {
		gc, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []cluster.Resource
	if gc != nil {
		out = append(out, p.clusterResource(c, gc))
		if out[0].Foreign {
			return out, nil // its node pools and kubeconfig are not nuv's business
		}
		for _, np := range gc.NodePools {
			out = append(out, p.poolResource(c, gc, np))
		}
	}
	if found, current, foreign := p.observeKubeconfig(g.Project, name, gc); found {
		state := "current"
		if !current {
			state = "stale"
		}
		out = append(out, cluster.Resource{Kind: "kubeconfig", Name: name, ID: p.kubeconfigPath(name), Foreign: foreign,
			Fields: map[string]string{"file": p.kubeconfigPath(name), "endpoint": state}})
	}
	return out, nil
}

// clusterResource is what exists of the cluster, in the fields Desired compares.
func (p *Provider) clusterResource(c *spec.Cluster, gc *containerpb.Cluster) cluster.Resource {
	g := p.section(c)
	tags := kit.Unmarked(gc.ResourceLabels)
	f := map[string]string{
		"project":  g.Project,
		"location": gc.Location,
		"zones":    joinSorted(gc.Locations),
		"labels":   kit.Map(tags),
	}
	if len(c.Spec.Zones) == 0 && !zoneRE.MatchString(g.Location) {
		f["zones"] = "" // the region's zones, as GKE chose them
	}
	if c.Spec.KubernetesVersion != "" {
		f["version"] = asSpecVersion(gc.CurrentMasterVersion, strings.TrimPrefix(c.Spec.KubernetesVersion, "v"))
	}
	if ch := gc.GetReleaseChannel().GetChannel(); ch != containerpb.ReleaseChannel_UNSPECIFIED {
		f["releaseChannel"] = ch.String()
	}
	if c.Spec.Networking.PodCIDR != "" {
		f["podCIDR"] = gc.ClusterIpv4Cidr
	}
	if c.Spec.Networking.ServiceCIDR != "" {
		f["serviceCIDR"] = gc.ServicesIpv4Cidr
	}
	f["status"] = clusterStatus(gc)
	return cluster.Resource{Kind: "cluster", Name: gc.Name, ID: clusterPath(g.Project, gc.Location, gc.Name), Fields: f,
		Foreign: gc.ResourceLabels[LabelCluster] != c.Metadata.Name}
}

// poolResource is what exists of a node pool, in the fields Desired compares.
func (p *Provider) poolResource(c *spec.Cluster, gc *containerpb.Cluster, np *containerpb.NodePool) cluster.Resource {
	cfg := np.GetConfig()
	var taints []string
	for _, t := range cfg.GetTaints() {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		taints = append(taints, s+":"+taintEffect(t.Effect))
	}
	sort.Strings(taints)
	f := map[string]string{
		"machineType": cfg.GetMachineType(),
		"spot":        kit.Bool(cfg.GetSpot()),
		"labels":      kit.Map(cfg.GetLabels()),
		"taints":      strings.Join(taints, ","),
		"zones":       joinSorted(np.Locations),
		"imageType":   cfg.GetImageType(),
		"diskSize":    strconv.Itoa(int(cfg.GetDiskSizeGb())),
		"count":       strconv.Itoa(int(np.InitialNodeCount)),
		"autoscaling": "off",
	}
	if as := np.GetAutoscaling(); as.GetEnabled() {
		f["autoscaling"] = fmt.Sprintf("%d..%d", as.MinNodeCount, as.MaxNodeCount)
	}
	var ng *spec.NodeGroup
	for i := range c.Spec.NodeGroups {
		if c.Spec.NodeGroups[i].Name == np.Name {
			ng = &c.Spec.NodeGroups[i]
		}
	}
	if ng != nil {
		if ng.Min != nil && ng.Max != nil && ng.Count == nil {
			delete(f, "count") // the autoscaler's business
		}
		if len(poolSettings(Placement(c), np.Name).Zones) == 0 && len(c.Spec.Zones) == 0 && !zoneRE.MatchString(Placement(c).Location) {
			f["zones"] = ""
		}
	}
	if v := c.Spec.KubernetesVersion; v != "" {
		f["version"] = asSpecVersion(np.Version, strings.TrimPrefix(v, "v"))
	}
	f["status"] = poolStatus(np)
	return cluster.Resource{Kind: "node-pool", Name: np.Name, ID: clusterPath(p.section(c).Project, gc.Location, gc.Name) + "/nodePools/" + np.Name,
		Fields: f, DependsOn: []string{"cluster/" + gc.Name}}
}

func taintEffect(e containerpb.NodeTaint_Effect) string {
	switch e {
	case containerpb.NodeTaint_PREFER_NO_SCHEDULE:
		return "PreferNoSchedule"
	case containerpb.NodeTaint_NO_EXECUTE:
		return "NoExecute"
	}
	return "NoSchedule"
}

func joinSorted(ss []string) string {
	s := slices.Clone(ss)
	sort.Strings(s)
	return strings.Join(s, ",")
}

// List reports the GKE clusters nuv made in the project of the credentials (or
// CLOUDSDK_CORE_PROJECT), when credentials are configured; none otherwise (no network call).
func (p *Provider) List(ctx context.Context) ([]cluster.Info, error) {
	return p.listIn(ctx, p.defaultProject())
}

// listIn lists the GKE clusters nuv made in project (none when project is "").
func (p *Provider) listIn(ctx context.Context, project string) ([]cluster.Info, error) {
	if project == "" {
		return nil, nil
	}
	cn, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := cn.Client.ListClusters(ctx, &containerpb.ListClustersRequest{Parent: locPath(project, "-")}, retry())
	if err != nil {
		return nil, fmt.Errorf("list GKE clusters of project %s: %w", project, err)
	}
	var out []cluster.Info
	for _, gc := range resp.Clusters {
		if gc.ResourceLabels[LabelCluster] != gc.Name {
			continue
		}
		out = append(out, p.info(gc))
	}
	return out, nil
}

// defaultProject is the project to list: CLOUDSDK_CORE_PROJECT, GOOGLE_CLOUD_PROJECT, else the
// project of the credentials file named by GOOGLE_APPLICATION_CREDENTIALS; "" when none is set.
func (p *Provider) defaultProject() string {
	getenv := p.getenv()
	for _, k := range []string{"CLOUDSDK_CORE_PROJECT", "GOOGLE_CLOUD_PROJECT"} {
		if v := getenv(k); v != "" {
			return v
		}
	}
	if f := getenv("GOOGLE_APPLICATION_CREDENTIALS"); f != "" {
		return projectOfFile(f)
	}
	return ""
}

func (p *Provider) info(gc *containerpb.Cluster) cluster.Info {
	st := cluster.Creating
	switch gc.Status {
	case containerpb.Cluster_RUNNING, containerpb.Cluster_RECONCILING:
		st = cluster.Running
	case containerpb.Cluster_ERROR, containerpb.Cluster_DEGRADED:
		st = cluster.Degraded
	case containerpb.Cluster_STOPPING:
		st = cluster.Stopped
	}
	nodes := 0
	for _, np := range gc.NodePools {
		if np.Name != bootstrapPool {
			nodes += int(np.InitialNodeCount) * len(np.Locations)
		}
	}
	created, _ := parseTime(gc.CreateTime)
	info := cluster.Info{Name: gc.Name, Provider: "gke", Status: st, Version: gc.CurrentMasterVersion, Nodes: nodes, NodesReady: -1,
		HA: !zoneRE.MatchString(gc.Location), Created: created, Kubeconfig: p.kubeconfigPath(gc.Name)}
	if gc.Endpoint != "" {
		info.APIURL = "https://" + gc.Endpoint
	}
	return info
}

// Status reports the GKE cluster c names, in the project of its spec (the default project for a
// cluster without a record).
func (p *Provider) Status(ctx context.Context, c *spec.Cluster) (cluster.Info, error) {
	project := p.section(c).Project
	return kit.StatusFromList(ctx, func(ctx context.Context) ([]cluster.Info, error) { return p.listIn(ctx, project) }, c.Metadata.Name)
}

// clusterStatus is the status field: RUNNING for a usable cluster (RECONCILING is one being
// changed), else GKE's status, with the message of an ERROR.
func clusterStatus(gc *containerpb.Cluster) string {
	switch gc.Status {
	case containerpb.Cluster_RUNNING, containerpb.Cluster_RECONCILING:
		return "RUNNING"
	case containerpb.Cluster_ERROR, containerpb.Cluster_DEGRADED:
		return gc.Status.String() + ": " + gc.StatusMessage
	}
	return gc.Status.String()
}

func poolStatus(np *containerpb.NodePool) string {
	switch np.Status {
	case containerpb.NodePool_RUNNING, containerpb.NodePool_RECONCILING, containerpb.NodePool_RUNNING_WITH_ERROR:
		return "RUNNING"
	case containerpb.NodePool_ERROR:
		return "ERROR: " + np.StatusMessage
	}
	return np.Status.String()
}

// projectOfFile is the project_id of a credentials file ("" if it has none).
func projectOfFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var f struct {
		ProjectID string `json:"project_id"`
	}
	_ = json.Unmarshal(b, &f)
	return f.ProjectID
}

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }

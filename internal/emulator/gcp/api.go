package gcp

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// api implements the ClusterManager methods the emulator serves; the others are the embedded
// Unimplemented server's, which answer UNIMPLEMENTED naming the method.
type api struct {
	containerpb.UnimplementedClusterManagerServer
	s *Server
}

var nameRE = lazy.MustCompile(`^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`)

// loc is a parsed location: its project and location ("-" for all of them).
type loc struct{ project, location string }

func (l loc) path() string { return "projects/" + l.project + "/locations/" + l.location }

// parseParent reads "projects/P/locations/L" or, for the deprecated fields, project and zone.
func parseParent(parent, project, zone string) (loc, error) {
	if parent == "" {
		if project == "" || zone == "" {
			return loc{}, status.Error(codes.InvalidArgument, "parent must be of the form projects/*/locations/*")
		}
		return loc{project, zone}, nil
	}
	p := strings.Split(parent, "/")
	if len(p) != 4 || p[0] != "projects" || (p[2] != "locations" && p[2] != "zones") || p[1] == "" || p[3] == "" {
		return loc{}, status.Errorf(codes.InvalidArgument, "Invalid resource name %q: want projects/*/locations/*", parent)
	}
	return loc{p[1], p[3]}, nil
}

// parseName reads "projects/P/locations/L/clusters/C[/nodePools/N]" (n: 6 or 8 segments) or the
// deprecated fields.
func parseName(name string, n int, project, zone, clusterID, poolID string) (l loc, cluster, pool string, err error) {
	if name == "" {
		if project == "" || zone == "" || clusterID == "" || (n == 8 && poolID == "") {
			return loc{}, "", "", status.Error(codes.InvalidArgument, "name must be of the form projects/*/locations/*/clusters/*"+map[bool]string{true: "/nodePools/*"}[n == 8])
		}
		return loc{project, zone}, clusterID, poolID, nil
	}
	p := strings.Split(name, "/")
	if len(p) != n || p[0] != "projects" || (p[2] != "locations" && p[2] != "zones") || p[4] != "clusters" || (n == 8 && p[6] != "nodePools") {
		return loc{}, "", "", status.Errorf(codes.InvalidArgument, "Invalid resource name %q", name)
	}
	l = loc{p[1], p[3]}
	cluster = p[5]
	if n == 8 {
		pool = p[7]
	}
	return l, cluster, pool, nil
}

// checkLoc checks that the caller may use project and that the location is offered; s.Mu held.
func (a *api) checkLoc(l loc, perm string, allowAll bool) error {
	if l.project != a.s.St.Project && l.project != a.s.St.ProjectNumber {
		return status.Errorf(codes.PermissionDenied, "Permission '%s' denied on resource '//container.googleapis.com/%s' (or it may not exist).", perm, l.path())
	}
	if allowAll && l.location == "-" {
		return nil
	}
	if _, ok := regionOf(l.location); !ok {
		return status.Errorf(codes.InvalidArgument, "Location %q does not exist. (nuv emulator offers the regions %s and their zones)", l.location, strings.Join(sortedKeys(regions.Get()), ", "))
	}
	return nil
}

func key(location, name string) string { return location + "/" + name }

// cluster finds a cluster; s.Mu held.
func (a *api) cluster(l loc, name string) (*clusterRec, error) {
	c := a.s.St.Clusters[key(l.location, name)]
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "Not found: %s/clusters/%s.", l.path(), name)
	}
	return c, nil
}

// idle fails while an operation runs on the cluster, as GKE does.
func (a *api) idle(c *clusterRec) error {
	if c.Op != "" {
		return status.Errorf(codes.FailedPrecondition, "Cluster is running incompatible operation %s.", c.Op)
	}
	if c.C.Status == stStopping {
		return status.Errorf(codes.FailedPrecondition, "Cluster %q is being deleted.", c.C.Name)
	}
	return nil
}

func (a *api) selfLink(path string) string {
	return "https://container.googleapis.com/v1/" + path
}

func (a *api) ListClusters(ctx context.Context, req *containerpb.ListClustersRequest) (*containerpb.ListClustersResponse, error) {
	s := a.s
	s.Mu.Lock()
	defer s.Mu.Unlock()
	l, err := a.locOf(req.GetParent(), req.GetProjectId(), req.GetZone(), "container.clusters.list", true)
	if err != nil {
		return nil, err
	}
	out := &containerpb.ListClustersResponse{}
	for _, k := range sortedKeys(s.St.Clusters) {
		c := s.St.Clusters[k]
		if l.location == "-" || c.C.Location == l.location {
			out.Clusters = append(out.Clusters, c.C.wire())
		}
	}
	return out, nil
}

func (a *api) GetCluster(ctx context.Context, req *containerpb.GetClusterRequest) (*containerpb.Cluster, error) {
	s := a.s
	s.Mu.Lock()
	defer s.Mu.Unlock()
	c, _, _, err := a.clusterOf(req.GetName(), req.GetProjectId(), req.GetZone(), req.GetClusterId(), "container.clusters.get")
	if err != nil {
		return nil, err
	}
	return c.C.wire(), nil
}

func (a *api) CreateCluster(ctx context.Context, req *containerpb.CreateClusterRequest) (*containerpb.Operation, error) {
	s := a.s
	s.Mu.Lock()
	defer s.Mu.Unlock()
	l, err := a.locOf(req.GetParent(), req.GetProjectId(), req.GetZone(), "container.clusters.create", false)
	if err != nil {
		return nil, err
	}
	in := req.GetCluster()
	if in == nil {
		return nil, status.Error(codes.InvalidArgument, "Cluster is required.")
	}
	if !nameRE.MatchString(in.Name) {
		return nil, status.Errorf(codes.InvalidArgument, "Invalid value for field 'cluster.name': %q. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)' (at most 40 characters).", in.Name)
	}
	if s.St.Clusters[key(l.location, in.Name)] != nil {
		return nil, status.Errorf(codes.AlreadyExists, "Already exists: %s/clusters/%s.", l.path(), in.Name)
	}
	c := proto.Clone(in).(*containerpb.Cluster)
	region, _ := regionOf(l.location)
	if len(c.Locations) == 0 {
		if isZone(l.location) {
			c.Locations = []string{l.location}
		} else {
			c.Locations = slices.Clone(regions.Get()[region][:3])
		}
	}
	for _, z := range c.Locations {
		if !slices.Contains(regions.Get()[region], z) {
			return nil, status.Errorf(codes.InvalidArgument, "Invalid value for field 'cluster.locations': zone %q is not in region %s (zones: %s).", z, region, strings.Join(regions.Get()[region], ", "))
		}
	}
	if isZone(l.location) && !slices.Contains(c.Locations, l.location) {
		return nil, status.Errorf(codes.InvalidArgument, "Invalid value for field 'cluster.locations': the cluster's zone %s must be one of its node locations.", l.location)
	}
	ch := c.GetReleaseChannel().GetChannel()
	v, ok := resolveVersion(c.InitialClusterVersion, ch)
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "Master version %q is unsupported%s.", c.InitialClusterVersion, channelNote(ch))
	}
	for _, cidr := range []*string{&c.ClusterIpv4Cidr, &c.ServicesIpv4Cidr} {
		if *cidr == "" {
			continue
		}
		if _, _, err := net.ParseCIDR(*cidr); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "Invalid CIDR %q: %v.", *cidr, err)
		}
	}
	if c.ClusterIpv4Cidr == "" {
		c.ClusterIpv4Cidr = "10.4.0.0/14"
	}
	if c.ServicesIpv4Cidr == "" {
		c.ServicesIpv4Cidr = "10.8.0.0/20"
	}
	switch {
	case len(c.NodePools) > 0 && c.InitialNodeCount > 0:
		return nil, status.Error(codes.InvalidArgument, "Cluster.initial_node_count and Cluster.node_pools cannot both be set.")
	case len(c.NodePools) == 0 && c.InitialNodeCount <= 0:
		return nil, status.Error(codes.InvalidArgument, "Cluster.initial_node_count must be greater than zero.")
	case len(c.NodePools) == 0:
		c.NodePools = []*containerpb.NodePool{{Name: "default-pool", InitialNodeCount: c.InitialNodeCount, Config: c.NodeConfig}}
		c.InitialNodeCount = 0
	}
	cpath := l.path() + "/clusters/" + c.Name
	seen := map[string]bool{}
	for _, p := range c.NodePools {
		if seen[p.Name] {
			return nil, status.Errorf(codes.InvalidArgument, "Node pool %q is listed twice.", p.Name)
		}
		seen[p.Name] = true
		if err := a.preparePool(c.Name, c.Locations, p, v, cpath); err != nil {
			return nil, err
		}
		p.Status = containerpb.NodePool_PROVISIONING
	}
	now := time.Now().UTC()
	c.Id = randHex(32)
	c.Location, c.Zone = l.location, l.location
	c.SelfLink = a.selfLink(cpath)
	c.InitialClusterVersion, c.CurrentMasterVersion = v, v
	c.CurrentNodeVersion = v
	c.CreateTime = now.Format(time.RFC3339)
	c.Status = containerpb.Cluster_PROVISIONING
	c.Network, c.Subnetwork = "default", "default"
	c.NodeConfig = nil
	c.MasterAuth = &containerpb.MasterAuth{}
	c.LabelFingerprint = randHex(8)
	c.Etag = randHex(16)
	if c.ReleaseChannel == nil {
		c.ReleaseChannel = &containerpb.ReleaseChannel{}
	}
	rec := &clusterRec{C: clusterState(c)}
	rec.C.countNodes()
	s.St.Clusters[key(l.location, c.Name)] = rec
	return a.startOp(ctx, rec, containerpb.Operation_CREATE_CLUSTER, "", nil, "")
}

func channelNote(ch containerpb.ReleaseChannel_Channel) string {
	if c, ok := channels.Get()[ch]; ok {
		return fmt.Sprintf(" in release channel %s (valid: %s)", ch, strings.Join(c.valid, ", "))
	}
	return fmt.Sprintf(" (valid: %s)", strings.Join(gkeVersions, ", "))
}

// preparePool validates a new node pool of cluster cname (its nodes in zones) and fills in what
// GKE fills in; s.Mu held.
func (a *api) preparePool(cname string, zones []string, p *containerpb.NodePool, master, cpath string) error {
	if !nameRE.MatchString(p.Name) {
		return status.Errorf(codes.InvalidArgument, "Invalid value for field 'node_pool.name': %q. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)'.", p.Name)
	}
	if p.Config == nil {
		p.Config = &containerpb.NodeConfig{}
	}
	if p.Config.MachineType == "" {
		p.Config.MachineType = "e2-medium"
	}
	if p.Config.DiskSizeGb == 0 {
		p.Config.DiskSizeGb = 100
	}
	if p.Config.ImageType == "" {
		p.Config.ImageType = "COS_CONTAINERD"
	}
	if len(p.Locations) == 0 {
		p.Locations = slices.Clone(zones)
	}
	for _, z := range p.Locations {
		if !slices.Contains(zones, z) {
			return status.Errorf(codes.InvalidArgument, "Node pool %q: location %q is not one of the cluster's node locations (%s).", p.Name, z, strings.Join(zones, ", "))
		}
	}
	if err := machineTypeOffered(p.Config.MachineType, p.Locations); err != nil {
		return status.Errorf(codes.InvalidArgument, "Node pool %q: %v.", p.Name, err)
	}
	if p.InitialNodeCount < 0 {
		return status.Errorf(codes.InvalidArgument, "Node pool %q: initial_node_count must be at least 0.", p.Name)
	}
	if err := checkAutoscaling(p.Name, p.Autoscaling); err != nil {
		return err
	}
	if as := p.Autoscaling; as.GetEnabled() && p.InitialNodeCount < as.MinNodeCount {
		p.InitialNodeCount = as.MinNodeCount
	}
	for _, t := range p.Config.Taints {
		if t.Key == "" || t.Effect == containerpb.NodeTaint_EFFECT_UNSPECIFIED {
			return status.Errorf(codes.InvalidArgument, "Node pool %q: a taint needs a key and an effect.", p.Name)
		}
	}
	if p.Version == "" || p.Version == "-" {
		p.Version = master
	} else {
		v, ok := resolveVersion(p.Version, containerpb.ReleaseChannel_UNSPECIFIED)
		if !ok {
			return status.Errorf(codes.InvalidArgument, "Node version %q is unsupported (valid: %s).", p.Version, strings.Join(gkeVersions, ", "))
		}
		if compareVersions(v, master) > 0 {
			return status.Errorf(codes.InvalidArgument, "Node pool %q: node version %s must not be newer than the master version %s.", p.Name, v, master)
		}
		p.Version = v
	}
	ppath := cpath + "/nodePools/" + p.Name
	p.SelfLink = a.selfLink(ppath)
	p.InstanceGroupUrls = nil
	for _, z := range p.Locations {
		p.InstanceGroupUrls = append(p.InstanceGroupUrls, fmt.Sprintf("https://www.googleapis.com/compute/v1/projects/%s/zones/%s/instanceGroupManagers/gke-%s-%s-%s-grp", a.s.St.Project, z, cname, p.Name, randHex(8)))
	}
	p.Etag = randHex(16)
	if p.Management == nil {
		p.Management = &containerpb.NodeManagement{AutoUpgrade: true, AutoRepair: true}
	}
	return nil
}

func checkAutoscaling(pool string, as *containerpb.NodePoolAutoscaling) error {
	if !as.GetEnabled() {
		return nil
	}
	if as.MinNodeCount < 0 || as.MaxNodeCount < 1 || as.MinNodeCount > as.MaxNodeCount {
		return status.Errorf(codes.InvalidArgument, "Node pool %q: autoscaling needs 0 <= min_node_count <= max_node_count and max_node_count >= 1 (got %d..%d).", pool, as.MinNodeCount, as.MaxNodeCount)
	}
	return nil
}

func (a *api) DeleteCluster(ctx context.Context, req *containerpb.DeleteClusterRequest) (*containerpb.Operation, error) {
	s := a.s
	s.Mu.Lock()
	defer s.Mu.Unlock()
	c, _, _, err := a.clusterOf(req.GetName(), req.GetProjectId(), req.GetZone(), req.GetClusterId(), "container.clusters.delete")
	if err != nil {
		return nil, err
	}
	if err := a.idle(c); err != nil {
		return nil, err
	}
	before := c.C.clone()
	c.C.Status = stStopping
	return a.startOp(ctx, c, containerpb.Operation_DELETE_CLUSTER, "", before, "")
}

func (a *api) ListNodePools(ctx context.Context, req *containerpb.ListNodePoolsRequest) (*containerpb.ListNodePoolsResponse, error) {
	s := a.s
	s.Mu.Lock()
	defer s.Mu.Unlock()
	c, _, _, err := a.clusterOf(req.GetParent(), req.GetProjectId(), req.GetZone(), req.GetClusterId(), "container.clusters.get")
	if err != nil {
		return nil, err
	}
	return &containerpb.ListNodePoolsResponse{NodePools: c.C.wire().NodePools}, nil
}

// locOf parses a parent location (or the deprecated project and zone fields) and checks perm on
// it (allowAll: "-" stands for every location); s.Mu held.
func (a *api) locOf(parent, project, zone, perm string, allowAll bool) (loc, error) {
	l, err := parseParent(parent, project, zone)
	if err != nil {
		return l, err
	}
	return l, a.checkLoc(l, perm, allowAll)
}

// clusterOf parses a cluster's name (or the deprecated project, zone and cluster fields), checks
// perm on its location and finds it; s.Mu held.
func (a *api) clusterOf(name, project, zone, clusterID, perm string) (*clusterRec, loc, string, error) {
	l, cname, _, err := parseName(name, 6, project, zone, clusterID, "")
	if err != nil {
		return nil, l, cname, err
	}
	if err := a.checkLoc(l, perm, false); err != nil {
		return nil, l, cname, err
	}
	c, err := a.cluster(l, cname)
	return c, l, cname, err
}

func (a *api) poolOf(name string, project, zone, clusterID, poolID, perm string) (*clusterRec, *gkeNodePool, loc, error) {
	l, cname, pname, err := parseName(name, 8, project, zone, clusterID, poolID)
	if err != nil {
		return nil, nil, l, err
	}
	if err := a.checkLoc(l, perm, false); err != nil {
		return nil, nil, l, err
	}
	c, err := a.cluster(l, cname)
	if err != nil {
		return nil, nil, l, err
	}
	p := c.C.pool(pname)
	if p == nil {
		return c, nil, l, status.Errorf(codes.NotFound, "Not found: %s/clusters/%s/nodePools/%s.", l.path(), cname, pname)
	}
	return c, p, l, nil
}

func (a *api) GetNodePool(ctx context.Context, req *containerpb.GetNodePoolRequest) (*containerpb.NodePool, error) {
	a.s.Mu.Lock()
	defer a.s.Mu.Unlock()
	_, p, _, err := a.poolOf(req.GetName(), req.GetProjectId(), req.GetZone(), req.GetClusterId(), req.GetNodePoolId(), "container.clusters.get")
	if err != nil {
		return nil, err
	}
	return p.wire(), nil
}

func (a *api) CreateNodePool(ctx context.Context, req *containerpb.CreateNodePoolRequest) (*containerpb.Operation, error) {
	s := a.s
	s.Mu.Lock()
	defer s.Mu.Unlock()
	c, l, name, err := a.clusterOf(req.GetParent(), req.GetProjectId(), req.GetZone(), req.GetClusterId(), "container.clusters.update")
	if err != nil {
		return nil, err
	}
	if err := a.idle(c); err != nil {
		return nil, err
	}
	in := req.GetNodePool()
	if in == nil {
		return nil, status.Error(codes.InvalidArgument, "Node pool is required.")
	}
	if c.C.pool(in.Name) != nil {
		return nil, status.Errorf(codes.AlreadyExists, "Already exists: %s/clusters/%s/nodePools/%s.", l.path(), name, in.Name)
	}
	w := proto.Clone(in).(*containerpb.NodePool)
	if err := a.preparePool(c.C.Name, c.C.Locations, w, c.C.MasterVersion, l.path()+"/clusters/"+name); err != nil {
		return nil, err
	}
	before := c.C.clone()
	p := poolState(w)
	p.Status = stProvisioning
	c.C.Pools = append(c.C.Pools, p)
	c.C.Status = stReconciling
	return a.startOp(ctx, c, containerpb.Operation_CREATE_NODE_POOL, p.Name, before, "")
}

func (a *api) DeleteNodePool(ctx context.Context, req *containerpb.DeleteNodePoolRequest) (*containerpb.Operation, error) {
	s := a.s
	s.Mu.Lock()
	defer s.Mu.Unlock()
	c, p, _, err := a.poolOf(req.GetName(), req.GetProjectId(), req.GetZone(), req.GetClusterId(), req.GetNodePoolId(), "container.clusters.update")
	if err != nil {
		return nil, err
	}
	if err := a.idle(c); err != nil {
		return nil, err
	}
	before := c.C.clone()
	p.Status = stStopping
	c.C.Status = stReconciling
	return a.startOp(ctx, c, containerpb.Operation_DELETE_NODE_POOL, p.Name, before, "")
}

// changePool starts an operation that changes pool p of c (validated by change, under s.Mu).
func (a *api) changePool(ctx context.Context, name, project, zone, clusterID, poolID string, typ containerpb.Operation_Type, change func(c *clusterRec, p *gkeNodePool) error) (*containerpb.Operation, error) {
	s := a.s
	s.Mu.Lock()
	defer s.Mu.Unlock()
	c, p, _, err := a.poolOf(name, project, zone, clusterID, poolID, "container.clusters.update")
	if err != nil {
		return nil, err
	}
	if err := a.idle(c); err != nil {
		return nil, err
	}
	if p.Status == stError {
		return nil, status.Errorf(codes.FailedPrecondition, "Node pool %q is in ERROR state (%s): delete it and create it again.", p.Name, p.StatusMessage)
	}
	before := c.C.clone()
	if err := change(c, p); err != nil {
		c.C = before
		return nil, err
	}
	p.Status = stReconciling
	p.Etag = randHex(16)
	c.C.Status = stReconciling
	c.C.countNodes()
	return a.startOp(ctx, c, typ, p.Name, before, "")
}

func (a *api) SetNodePoolSize(ctx context.Context, req *containerpb.SetNodePoolSizeRequest) (*containerpb.Operation, error) {
	return a.changePool(ctx, req.GetName(), req.GetProjectId(), req.GetZone(), req.GetClusterId(), req.GetNodePoolId(), containerpb.Operation_SET_NODE_POOL_SIZE,
		func(c *clusterRec, p *gkeNodePool) error {
			if req.NodeCount < 0 {
				return status.Errorf(codes.InvalidArgument, "Invalid value for field 'node_count': %d. Must be at least 0.", req.NodeCount)
			}
			p.Count = req.NodeCount
			return nil
		})
}

func (a *api) SetNodePoolAutoscaling(ctx context.Context, req *containerpb.SetNodePoolAutoscalingRequest) (*containerpb.Operation, error) {
	return a.changePool(ctx, req.GetName(), req.GetProjectId(), req.GetZone(), req.GetClusterId(), req.GetNodePoolId(), containerpb.Operation_UPDATE_CLUSTER,
		func(c *clusterRec, p *gkeNodePool) error {
			as := req.GetAutoscaling()
			if err := checkAutoscaling(p.Name, as); err != nil {
				return err
			}
			// The request's settings replace the pool's, those the emulator does not act on too.
			w := p.wire()
			w.Autoscaling = proto.CloneOf(as)
			np := poolState(w)
			p.Autoscaling, p.Given = np.Autoscaling, np.Given
			if as.GetEnabled() {
				p.Count = max(as.MinNodeCount, min(p.Count, as.MaxNodeCount))
			}
			return nil
		})
}

func (a *api) UpdateNodePool(ctx context.Context, req *containerpb.UpdateNodePoolRequest) (*containerpb.Operation, error) {
	typ := containerpb.Operation_UPDATE_CLUSTER
	if req.NodeVersion != "" {
		typ = containerpb.Operation_UPGRADE_NODES
	}
	if err := onlyFields(req, "name", "project_id", "zone", "cluster_id", "node_pool_id", "node_version", "image_type", "machine_type", "labels", "taints", "locations", "disk_size_gb", "etag"); err != nil {
		return nil, err
	}
	return a.changePool(ctx, req.GetName(), req.GetProjectId(), req.GetZone(), req.GetClusterId(), req.GetNodePoolId(), typ,
		func(c *clusterRec, p *gkeNodePool) error {
			if req.NodeVersion != "" {
				v, ok := resolveVersion(req.NodeVersion, containerpb.ReleaseChannel_UNSPECIFIED)
				if req.NodeVersion == "-" {
					v, ok = c.C.MasterVersion, true
				}
				if !ok {
					return status.Errorf(codes.InvalidArgument, "Node version %q is unsupported (valid: %s).", req.NodeVersion, strings.Join(gkeVersions, ", "))
				}
				if compareVersions(v, c.C.MasterVersion) > 0 {
					return status.Errorf(codes.InvalidArgument, "Node version %s must not be newer than the master version %s.", v, c.C.MasterVersion)
				}
				p.Version = v
			}
			if req.ImageType != "" {
				p.ImageType = req.ImageType
			}
			if len(req.Locations) > 0 {
				for _, z := range req.Locations {
					if !slices.Contains(c.C.Locations, z) {
						return status.Errorf(codes.InvalidArgument, "Node pool %q: location %q is not one of the cluster's node locations (%s).", p.Name, z, strings.Join(c.C.Locations, ", "))
					}
				}
				p.Locations = slices.Clone(req.Locations)
			}
			if req.MachineType != "" {
				if err := machineTypeOffered(req.MachineType, p.Locations); err != nil {
					return status.Errorf(codes.InvalidArgument, "Node pool %q: %v.", p.Name, err)
				}
				p.MachineType = req.MachineType
			}
			if req.DiskSizeGb != 0 {
				p.DiskSizeGB = int32(req.DiskSizeGb)
			}
			if req.Labels != nil {
				p.Labels = maps.Clone(req.Labels.Labels)
			}
			if req.Taints != nil {
				p.Taints = taintsState(req.Taints.Taints)
			}
			return nil
		})
}

func (a *api) UpdateMaster(ctx context.Context, req *containerpb.UpdateMasterRequest) (*containerpb.Operation, error) {
	return a.updateCluster(ctx, req.GetName(), req.GetProjectId(), req.GetZone(), req.GetClusterId(), &containerpb.ClusterUpdate{DesiredMasterVersion: req.MasterVersion})
}

func (a *api) UpdateCluster(ctx context.Context, req *containerpb.UpdateClusterRequest) (*containerpb.Operation, error) {
	if err := onlyFields(req.GetUpdate(), "desired_master_version", "desired_release_channel", "desired_locations", "desired_node_version", "desired_node_pool_id", "etag"); err != nil {
		return nil, err
	}
	return a.updateCluster(ctx, req.GetName(), req.GetProjectId(), req.GetZone(), req.GetClusterId(), req.GetUpdate())
}

func (a *api) updateCluster(ctx context.Context, name, project, zone, clusterID string, u *containerpb.ClusterUpdate) (*containerpb.Operation, error) {
	l, cname, _, err := parseName(name, 6, project, zone, clusterID, "")
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, status.Error(codes.InvalidArgument, "Update is required.")
	}
	if u.DesiredNodeVersion != "" {
		pool := u.DesiredNodePoolId
		if pool == "" {
			return nil, status.Error(codes.InvalidArgument, "desired_node_version needs desired_node_pool_id (nuv emulator: or use UpdateNodePool).")
		}
		return a.UpdateNodePool(ctx, &containerpb.UpdateNodePoolRequest{Name: l.path() + "/clusters/" + cname + "/nodePools/" + pool, NodeVersion: u.DesiredNodeVersion})
	}
	s := a.s
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if err := a.checkLoc(l, "container.clusters.update", false); err != nil {
		return nil, err
	}
	c, err := a.cluster(l, cname)
	if err != nil {
		return nil, err
	}
	if err := a.idle(c); err != nil {
		return nil, err
	}
	if c.C.Status == stError {
		return nil, status.Errorf(codes.FailedPrecondition, "Cluster %q is in ERROR state (%s): delete it and create it again.", cname, c.C.StatusMessage)
	}
	before := c.C.clone()
	typ := containerpb.Operation_UPDATE_CLUSTER
	target := ""
	ch := containerpb.ReleaseChannel_Channel(containerpb.ReleaseChannel_Channel_value[c.C.Channel])
	if u.DesiredReleaseChannel != nil {
		ch = u.DesiredReleaseChannel.Channel
		if ch != containerpb.ReleaseChannel_UNSPECIFIED {
			if _, ok := channels.Get()[ch]; !ok {
				return nil, status.Errorf(codes.InvalidArgument, "Invalid release channel %s.", ch)
			}
			if !slices.Contains(channels.Get()[ch].valid, c.C.MasterVersion) && u.DesiredMasterVersion == "" {
				return nil, status.Errorf(codes.InvalidArgument, "Version %s is not available in release channel %s (valid: %s).", c.C.MasterVersion, ch, strings.Join(channels.Get()[ch].valid, ", "))
			}
		}
	}
	if u.DesiredMasterVersion != "" {
		v, ok := resolveVersion(u.DesiredMasterVersion, ch)
		if u.DesiredMasterVersion == "-" {
			v, ok = resolveVersion("", ch)
		}
		if !ok {
			return nil, status.Errorf(codes.InvalidArgument, "Master version %q is unsupported%s.", u.DesiredMasterVersion, channelNote(ch))
		}
		if compareVersions(v, c.C.MasterVersion) < 0 {
			return nil, status.Errorf(codes.InvalidArgument, "Master cannot be downgraded from %s to %s.", c.C.MasterVersion, v)
		}
		typ, target = containerpb.Operation_UPGRADE_MASTER, v
	}
	region, _ := regionOf(c.C.Location)
	for _, z := range u.DesiredLocations {
		if !slices.Contains(regions.Get()[region], z) {
			return nil, status.Errorf(codes.InvalidArgument, "Invalid value for field 'update.desired_locations': zone %q is not in region %s.", z, region)
		}
	}
	if isZone(c.C.Location) && len(u.DesiredLocations) > 0 && !slices.Contains(u.DesiredLocations, c.C.Location) {
		return nil, status.Errorf(codes.InvalidArgument, "Invalid value for field 'update.desired_locations': the cluster's zone %s must stay one of its node locations.", c.C.Location)
	}
	if u.DesiredReleaseChannel != nil {
		c.C.Channel = ""
		if ch != containerpb.ReleaseChannel_UNSPECIFIED {
			c.C.Channel = ch.String()
		}
	}
	if len(u.DesiredLocations) > 0 {
		c.C.Locations = slices.Clone(u.DesiredLocations)
		for _, p := range c.C.Pools {
			p.Locations = slices.DeleteFunc(p.Locations, func(z string) bool { return !slices.Contains(u.DesiredLocations, z) })
			if len(p.Locations) == 0 {
				p.Locations = slices.Clone(u.DesiredLocations)
			}
		}
		c.C.countNodes()
	}
	c.C.Status = stReconciling
	c.C.Etag = randHex(16)
	return a.startOp(ctx, c, typ, "", before, target)
}

// onlyFields refuses a request that sets fields the emulator does not act on (rather than
// pretending to).
func onlyFields(m interface{ ProtoReflect() protoreflect.Message }, allowed ...string) error {
	if m == nil {
		return nil
	}
	var bad []string
	m.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		if !slices.Contains(allowed, string(fd.Name())) {
			bad = append(bad, string(fd.Name()))
		}
		return true
	})
	if len(bad) > 0 {
		sort.Strings(bad)
		return status.Errorf(codes.Unimplemented, "nuv emulator does not implement %s.%s (it implements %s)", m.ProtoReflect().Descriptor().Name(), strings.Join(bad, ", "), strings.Join(allowed, ", "))
	}
	return nil
}

func (a *api) GetOperation(ctx context.Context, req *containerpb.GetOperationRequest) (*containerpb.Operation, error) {
	name := req.GetName()
	l := loc{req.GetProjectId(), req.GetZone()}
	op := req.GetOperationId()
	if name != "" {
		p := strings.Split(name, "/")
		if len(p) != 6 || p[0] != "projects" || p[4] != "operations" {
			return nil, status.Errorf(codes.InvalidArgument, "Invalid resource name %q: want projects/*/locations/*/operations/*", name)
		}
		l, op = loc{p[1], p[3]}, p[5]
	}
	s := a.s
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if err := a.checkLoc(l, "container.operations.get", false); err != nil {
		return nil, err
	}
	o := s.St.Operations[op]
	if o == nil || o.Op.Location != l.location {
		return nil, status.Errorf(codes.NotFound, "Not found: %s/operations/%s.", l.path(), op)
	}
	return o.Op.wire(), nil
}

func (a *api) ListOperations(ctx context.Context, req *containerpb.ListOperationsRequest) (*containerpb.ListOperationsResponse, error) {
	s := a.s
	s.Mu.Lock()
	defer s.Mu.Unlock()
	l, err := a.locOf(req.GetParent(), req.GetProjectId(), req.GetZone(), "container.operations.list", true)
	if err != nil {
		return nil, err
	}
	out := &containerpb.ListOperationsResponse{}
	for _, k := range sortedKeys(s.St.Operations) {
		if o := s.St.Operations[k]; l.location == "-" || o.Op.Location == l.location {
			out.Operations = append(out.Operations, o.Op.wire())
		}
	}
	return out, nil
}

func (a *api) GetServerConfig(ctx context.Context, req *containerpb.GetServerConfigRequest) (*containerpb.ServerConfig, error) {
	s := a.s
	s.Mu.Lock()
	defer s.Mu.Unlock()
	_, err := a.locOf(req.GetName(), req.GetProjectId(), req.GetZone(), "container.clusters.list", false)
	if err != nil {
		return nil, err
	}
	return serverConfig(), nil
}

func (a *api) CancelOperation(ctx context.Context, req *containerpb.CancelOperationRequest) (*emptypb.Empty, error) {
	return nil, status.Error(codes.Unimplemented, "nuv emulator does not implement the method CancelOperation (its operations run to the end)")
}

func (a *api) SetLabels(ctx context.Context, req *containerpb.SetLabelsRequest) (*containerpb.Operation, error) {
	s := a.s
	s.Mu.Lock()
	defer s.Mu.Unlock()
	c, _, _, err := a.clusterOf(req.GetName(), req.GetProjectId(), req.GetZone(), req.GetClusterId(), "container.clusters.update")
	if err != nil {
		return nil, err
	}
	if err := a.idle(c); err != nil {
		return nil, err
	}
	if req.LabelFingerprint != c.C.LabelFingerprint {
		return nil, status.Errorf(codes.FailedPrecondition, "Labels could not be set due to fingerprint mismatch (have %q, the request says %q): read the cluster again.", c.C.LabelFingerprint, req.LabelFingerprint)
	}
	before := c.C.clone()
	c.C.Labels = maps.Clone(req.ResourceLabels)
	c.C.LabelFingerprint = randHex(8)
	c.C.Status = stReconciling
	return a.startOp(ctx, c, containerpb.Operation_SET_LABELS, "", before, "")
}

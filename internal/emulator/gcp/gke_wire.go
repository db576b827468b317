package gcp

import (
	"maps"
	"slices"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// GKE's wire forms (containerpb.Cluster, NodePool, Operation), made from the state's types
// (gke_state.go), and the state made from a request's (or an older state file's) cluster.

// clusterState is w as the emulator keeps it: the fields it acts on, and the rest as given.
func clusterState(w *containerpb.Cluster) *gkeCluster {
	c := &gkeCluster{Name: w.Name, Location: w.Location, Locations: slices.Clone(w.Locations), ID: w.Id, SelfLink: w.SelfLink,
		CreateTime: w.CreateTime, InitialVersion: w.InitialClusterVersion, MasterVersion: w.CurrentMasterVersion,
		NodeVersion: w.CurrentNodeVersion, NodeCount: w.CurrentNodeCount, PodCIDR: w.ClusterIpv4Cidr, ServiceCIDR: w.ServicesIpv4Cidr,
		Network: w.Network, Subnetwork: w.Subnetwork, Endpoint: w.Endpoint, CA: w.GetMasterAuth().GetClusterCaCertificate(),
		Status: w.Status.String(), StatusMessage: w.StatusMessage, Labels: maps.Clone(w.ResourceLabels),
		LabelFingerprint: w.LabelFingerprint, Etag: w.Etag}
	if ch := w.GetReleaseChannel().GetChannel(); ch != containerpb.ReleaseChannel_UNSPECIFIED {
		c.Channel = ch.String()
	}
	for _, p := range w.NodePools {
		c.Pools = append(c.Pools, poolState(p))
	}
	g := proto.Clone(w).(*containerpb.Cluster)
	g.Name, g.Location, g.Zone, g.Locations, g.Id, g.SelfLink, g.CreateTime = "", "", "", nil, "", "", ""
	g.InitialClusterVersion, g.CurrentMasterVersion, g.CurrentNodeVersion, g.CurrentNodeCount = "", "", "", 0
	g.ClusterIpv4Cidr, g.ServicesIpv4Cidr, g.Network, g.Subnetwork, g.Endpoint, g.MasterAuth = "", "", "", "", "", nil
	g.Status, g.StatusMessage, g.ResourceLabels, g.LabelFingerprint, g.Etag = 0, "", nil, "", ""
	g.ReleaseChannel, g.NodePools, g.InitialNodeCount, g.NodeConfig = nil, nil, 0, nil
	c.Given = given(g)
	return c
}

// poolState is w as the emulator keeps it.
func poolState(w *containerpb.NodePool) *gkeNodePool {
	p := &gkeNodePool{Name: w.Name, Count: w.InitialNodeCount, Locations: slices.Clone(w.Locations), Version: w.Version,
		Status: w.Status.String(), StatusMessage: w.StatusMessage, SelfLink: w.SelfLink, InstanceGroups: slices.Clone(w.InstanceGroupUrls),
		Etag: w.Etag, MachineType: w.Config.GetMachineType(), DiskSizeGB: w.Config.GetDiskSizeGb(), ImageType: w.Config.GetImageType(),
		Labels: maps.Clone(w.Config.GetLabels()), Spot: w.Config.GetSpot(),
		AutoUpgrade: w.Management.GetAutoUpgrade(), AutoRepair: w.Management.GetAutoRepair()}
	p.Taints = taintsState(w.Config.GetTaints())
	if as := w.Autoscaling; as != nil {
		p.Autoscaling = &gkeAutoscaling{Enabled: as.Enabled, Min: as.MinNodeCount, Max: as.MaxNodeCount}
	}
	g := proto.Clone(w).(*containerpb.NodePool)
	g.Name, g.InitialNodeCount, g.Locations, g.Version, g.Status, g.StatusMessage = "", 0, nil, "", 0, ""
	g.SelfLink, g.InstanceGroupUrls, g.Etag = "", nil, ""
	if g.Config != nil {
		g.Config.MachineType, g.Config.DiskSizeGb, g.Config.ImageType, g.Config.Labels, g.Config.Taints, g.Config.Spot = "", 0, "", nil, nil, false
		if proto.Size(g.Config) == 0 {
			g.Config = nil
		}
	}
	if g.Management != nil {
		g.Management.AutoUpgrade, g.Management.AutoRepair = false, false
		if proto.Size(g.Management) == 0 {
			g.Management = nil
		}
	}
	if g.Autoscaling != nil {
		g.Autoscaling.Enabled, g.Autoscaling.MinNodeCount, g.Autoscaling.MaxNodeCount = false, 0, 0
		if proto.Size(g.Autoscaling) == 0 {
			g.Autoscaling = nil
		}
	}
	p.Given = given(g)
	return p
}

// given is m in the API's JSON (nil when nothing is set).
func given(m proto.Message) []byte {
	if proto.Size(m) == 0 {
		return nil
	}
	b, err := protojson.Marshal(m)
	if err != nil { // cannot happen: m is a valid message
		panic(err)
	}
	return b
}

// wire is the cluster as the API answers it.
func (c *gkeCluster) wire() *containerpb.Cluster {
	w := &containerpb.Cluster{}
	if len(c.Given) > 0 {
		_ = protojson.Unmarshal(c.Given, w) // written by given()
	}
	w.Name, w.Location, w.Zone, w.Locations, w.Id, w.SelfLink, w.CreateTime = c.Name, c.Location, c.Location, slices.Clone(c.Locations), c.ID, c.SelfLink, c.CreateTime
	w.InitialClusterVersion, w.CurrentMasterVersion, w.CurrentNodeVersion, w.CurrentNodeCount = c.InitialVersion, c.MasterVersion, c.NodeVersion, c.NodeCount
	w.ClusterIpv4Cidr, w.ServicesIpv4Cidr, w.Network, w.Subnetwork, w.Endpoint = c.PodCIDR, c.ServiceCIDR, c.Network, c.Subnetwork, c.Endpoint
	w.MasterAuth = &containerpb.MasterAuth{ClusterCaCertificate: c.CA}
	w.Status = containerpb.Cluster_Status(containerpb.Cluster_Status_value[c.Status])
	w.StatusMessage, w.ResourceLabels, w.LabelFingerprint, w.Etag = c.StatusMessage, maps.Clone(c.Labels), c.LabelFingerprint, c.Etag
	w.ReleaseChannel = &containerpb.ReleaseChannel{Channel: containerpb.ReleaseChannel_Channel(containerpb.ReleaseChannel_Channel_value[c.Channel])}
	for _, p := range c.Pools {
		w.NodePools = append(w.NodePools, p.wire())
	}
	return w
}

// wire is the node pool as the API answers it.
func (p *gkeNodePool) wire() *containerpb.NodePool {
	w := &containerpb.NodePool{}
	if len(p.Given) > 0 {
		_ = protojson.Unmarshal(p.Given, w) // written by given()
	}
	w.Name, w.InitialNodeCount, w.Locations, w.Version = p.Name, p.Count, slices.Clone(p.Locations), p.Version
	w.Status = containerpb.NodePool_Status(containerpb.NodePool_Status_value[p.Status])
	w.StatusMessage, w.SelfLink, w.InstanceGroupUrls, w.Etag = p.StatusMessage, p.SelfLink, slices.Clone(p.InstanceGroups), p.Etag
	if w.Config == nil {
		w.Config = &containerpb.NodeConfig{}
	}
	w.Config.MachineType, w.Config.DiskSizeGb, w.Config.ImageType, w.Config.Labels, w.Config.Spot = p.MachineType, p.DiskSizeGB, p.ImageType, maps.Clone(p.Labels), p.Spot
	w.Config.Taints = nil
	for _, t := range p.Taints {
		w.Config.Taints = append(w.Config.Taints, &containerpb.NodeTaint{Key: t.Key, Value: t.Value, Effect: apiEffect(t.Effect)})
	}
	if w.Management == nil {
		w.Management = &containerpb.NodeManagement{}
	}
	w.Management.AutoUpgrade, w.Management.AutoRepair = p.AutoUpgrade, p.AutoRepair
	if as := p.Autoscaling; as != nil {
		if w.Autoscaling == nil {
			w.Autoscaling = &containerpb.NodePoolAutoscaling{}
		}
		w.Autoscaling.Enabled, w.Autoscaling.MinNodeCount, w.Autoscaling.MaxNodeCount = as.Enabled, as.Min, as.Max
	} else {
		w.Autoscaling = nil
	}
	return w
}

// apiEffect is a taint's effect as the API's enum.
func apiEffect(e string) containerpb.NodeTaint_Effect {
	return containerpb.NodeTaint_Effect(containerpb.NodeTaint_Effect_value[e])
}

// taintsState is ts as the state keeps them.
func taintsState(ts []*containerpb.NodeTaint) []gkeTaint {
	var out []gkeTaint
	for _, t := range ts {
		out = append(out, gkeTaint{Key: t.Key, Value: t.Value, Effect: t.Effect.String()})
	}
	return out
}

// opType is t as the state names it.
func opType(t containerpb.Operation_Type) string { return t.String() }

// wire is the operation as the API answers it.
func (o *gkeOperation) wire() *containerpb.Operation {
	w := &containerpb.Operation{Name: o.Name, Zone: o.Location, Location: o.Location,
		OperationType: containerpb.Operation_Type(containerpb.Operation_Type_value[o.Type]),
		Status:        containerpb.Operation_Status(containerpb.Operation_Status_value[o.Status]),
		SelfLink:      o.SelfLink, TargetLink: o.TargetLink, Detail: o.Detail, StatusMessage: o.StatusMessage,
		StartTime: o.Start.Format(time.RFC3339Nano)}
	if !o.End.IsZero() {
		w.EndTime = o.End.Format(time.RFC3339Nano)
	}
	if o.Status == containerpb.Operation_DONE.String() {
		w.Progress = &containerpb.OperationProgress{Status: containerpb.Operation_DONE}
	}
	if o.Error != nil {
		w.Error = status.New(codes.Code(o.Error.Code), o.Error.Message).Proto()
	}
	return w
}

// apiType is the operation's type as the API's enum.
func (o *opRec) apiType() containerpb.Operation_Type {
	return containerpb.Operation_Type(containerpb.Operation_Type_value[o.Op.Type])
}

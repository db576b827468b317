package gcp

import (
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// GKE's state: what the emulator keeps of clusters, their node pools and operations, in its own
// types. The routes answer with the API's forms (gke_wire.go), made from these by wire().

// Statuses of clusters and node pools (GKE names them alike).
const (
	stProvisioning = "PROVISIONING"
	stRunning      = "RUNNING"
	stReconciling  = "RECONCILING"
	stStopping     = "STOPPING"
	stError        = "ERROR"
)

// gkeCluster is a cluster as the emulator keeps it: what it acts on and reports.
type gkeCluster struct {
	Name string `json:"name"`
	// Location is the zone or region the cluster is in; Locations its nodes' zones.
	Location  string   `json:"location"`
	Locations []string `json:"locations"`
	ID        string   `json:"id"`
	SelfLink  string   `json:"selfLink"`
	// CreateTime is RFC 3339, as GKE reports it.
	CreateTime string `json:"createTime"`
	// InitialVersion is the version it was created with; MasterVersion the control plane's now;
	// NodeVersion the oldest of its node pools'.
	InitialVersion string `json:"initialVersion"`
	MasterVersion  string `json:"masterVersion"`
	NodeVersion    string `json:"nodeVersion"`
	// NodeCount is the nodes of all its pools (per-zone count times zones).
	NodeCount int32 `json:"nodeCount,omitempty"`
	// Channel is the release channel (RAPID, REGULAR, ...; "" for none).
	Channel     string `json:"channel,omitempty"`
	PodCIDR     string `json:"podCidr"`
	ServiceCIDR string `json:"serviceCidr"`
	Network     string `json:"network"`
	Subnetwork  string `json:"subnetwork"`
	// Endpoint is the control plane's host; CA its CA certificate (base64 PEM), once it runs.
	Endpoint string `json:"endpoint,omitempty"`
	CA       string `json:"ca,omitempty"`
	// Status is PROVISIONING, RUNNING, RECONCILING, STOPPING or ERROR.
	Status           string            `json:"status"`
	StatusMessage    string            `json:"statusMessage,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	LabelFingerprint string            `json:"labelFingerprint"`
	Etag             string            `json:"etag"`
	Pools            []*gkeNodePool    `json:"nodePools"`
	// Given is what the create request set that the emulator does not act on (in the API's
	// JSON, without the fields above), answered back as given.
	Given json.RawMessage `json:"given,omitempty"`
}

// gkeNodePool is a node pool as the emulator keeps it.
type gkeNodePool struct {
	Name string `json:"name"`
	// Count is the nodes per zone; Locations the zones.
	Count     int32    `json:"count"`
	Locations []string `json:"locations"`
	Version   string   `json:"version"`
	// Status is PROVISIONING, RUNNING, RECONCILING, STOPPING or ERROR.
	Status         string   `json:"status"`
	StatusMessage  string   `json:"statusMessage,omitempty"`
	SelfLink       string   `json:"selfLink"`
	InstanceGroups []string `json:"instanceGroups,omitempty"`
	Etag           string   `json:"etag"`
	// The nodes' machine type, boot disk (GB), image, labels, taints and whether they are spot VMs.
	MachineType string            `json:"machineType"`
	DiskSizeGB  int32             `json:"diskSizeGb"`
	ImageType   string            `json:"imageType"`
	Labels      map[string]string `json:"labels,omitempty"`
	Taints      []gkeTaint        `json:"taints,omitempty"`
	Spot        bool              `json:"spot,omitempty"`
	// Autoscaling is nil when the request had none.
	Autoscaling *gkeAutoscaling `json:"autoscaling,omitempty"`
	AutoUpgrade bool            `json:"autoUpgrade,omitempty"`
	AutoRepair  bool            `json:"autoRepair,omitempty"`
	// Given is what the request set that the emulator does not act on (the API's JSON).
	Given json.RawMessage `json:"given,omitempty"`
}

// gkeAutoscaling is a node pool's autoscaling: per-zone bounds.
type gkeAutoscaling struct {
	Enabled bool  `json:"enabled"`
	Min     int32 `json:"min"`
	Max     int32 `json:"max"`
}

// gkeTaint is a node taint; Effect as GKE names it (NO_SCHEDULE, ...).
type gkeTaint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// clone is a deep copy of c.
func (c *gkeCluster) clone() *gkeCluster {
	d := *c
	d.Locations = slices.Clone(c.Locations)
	d.Labels = maps.Clone(c.Labels)
	d.Given = slices.Clone(c.Given)
	d.Pools = make([]*gkeNodePool, len(c.Pools))
	for i, p := range c.Pools {
		d.Pools[i] = p.clone()
	}
	if c.Pools == nil {
		d.Pools = nil
	}
	return &d
}

// clone is a deep copy of p.
func (p *gkeNodePool) clone() *gkeNodePool {
	d := *p
	d.Locations = slices.Clone(p.Locations)
	d.InstanceGroups = slices.Clone(p.InstanceGroups)
	d.Labels = maps.Clone(p.Labels)
	d.Taints = slices.Clone(p.Taints)
	d.Given = slices.Clone(p.Given)
	if p.Autoscaling != nil {
		as := *p.Autoscaling
		d.Autoscaling = &as
	}
	return &d
}

// pool is the node pool called name (nil if none).
func (c *gkeCluster) pool(name string) *gkeNodePool {
	for _, p := range c.Pools {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// countNodes sets NodeCount (per-zone counts times zones) and NodeVersion (the oldest pool's).
func (c *gkeCluster) countNodes() {
	n := int32(0)
	oldest := ""
	for _, p := range c.Pools {
		if p.Status == stStopping || p.Status == stError {
			continue
		}
		n += p.Count * int32(len(p.Locations))
		if oldest == "" || compareVersions(p.Version, oldest) < 0 {
			oldest = p.Version
		}
	}
	c.NodeCount = n
	if oldest != "" {
		c.NodeVersion = oldest
	}
}

// gkeOperation is an operation as the emulator keeps it. Its JSON names are the API's, so a state
// file that still holds operations in the API's form reads as well.
type gkeOperation struct {
	Name     string `json:"name"`
	Location string `json:"location"`
	// Type is the operation's type as GKE names it (CREATE_CLUSTER, UPGRADE_MASTER, ...).
	Type string `json:"operationType"`
	// Status is PENDING, RUNNING or DONE.
	Status     string `json:"status"`
	SelfLink   string `json:"selfLink"`
	TargetLink string `json:"targetLink"`
	// Detail is an UPGRADE_MASTER's target version.
	Detail        string    `json:"detail,omitempty"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	Start         time.Time `json:"startTime"`
	End           time.Time `json:"endTime,omitzero"`
	// Error is why it failed (nil: it did not, or has not finished).
	Error *gkeOpError `json:"error,omitempty"`
}

// gkeOpError is a failed operation's error: a gRPC status code and message.
type gkeOpError struct {
	Code    int32  `json:"code"`
	Message string `json:"message"`
}

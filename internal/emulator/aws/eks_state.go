package aws

import (
	"encoding/json"
	"time"
)

// EKS's state: what the emulator keeps of clusters, node groups, add-ons and updates, in its own
// types. The routes answer with the API's forms (eks_wire.go), made from these by wire().

// eksState is EKS's part of the state: clusters by name.
type eksState struct {
	Clusters map[string]*eksCluster `json:"clusters"`
}

// eksCluster is a cluster as the emulator keeps it: its settings and status, its node groups,
// add-ons and updates, and the emulator's own bookkeeping.
type eksCluster struct {
	Name      string    `json:"name"`
	ARN       string    `json:"arn"`
	CreatedAt time.Time `json:"createdAt"`
	Version   string    `json:"version"`
	// Endpoint and CAData (base64) are the control plane's, once it exists.
	Endpoint string `json:"endpoint,omitempty"`
	CAData   string `json:"caData,omitempty"`
	RoleARN  string `json:"roleArn"`
	VPC      eksVPC `json:"vpc"`
	// ServiceCIDR and IPFamily are the cluster's Kubernetes network.
	ServiceCIDR string `json:"serviceCidr"`
	IPFamily    string `json:"ipFamily"`
	// Logging lists the log types turned on, then those turned off (as EKS groups them).
	Logging    []eksLogSetup `json:"logging"`
	OIDCIssuer string        `json:"oidcIssuer"`
	// Status is CREATING, ACTIVE, UPDATING, DELETING or FAILED.
	Status             string            `json:"status"`
	ClientRequestToken string            `json:"clientRequestToken,omitempty"`
	PlatformVersion    string            `json:"platformVersion"`
	Tags               map[string]string `json:"tags"`
	// AuthMode is the access config's authentication mode; BootstrapAdmin whether the creator
	// got cluster-admin access.
	AuthMode       string `json:"authMode"`
	BootstrapAdmin bool   `json:"bootstrapAdmin"`
	// Issues are the cluster's health issues (none: healthy, and the API shows no health).
	Issues []eksIssue `json:"issues,omitempty"`

	NodeGroups map[string]*eksNodegroup `json:"nodegroups"`
	Addons     map[string]*eksAddon     `json:"addons"`
	Updates    []*eksUpdate             `json:"updates"`
	// Due is when the current transition may complete at the earliest.
	Due time.Time `json:"due"`
	// Backend is true once the control plane exists (CREATING) or is gone (DELETING).
	Backend bool `json:"backend"`
	// NodesWant counts node group changes; NodesSynced is the last count the control plane's nodes
	// were brought in line with.
	NodesWant   int `json:"nodesWant"`
	NodesSynced int `json:"nodesSynced"`
	// SecurityGroup is the cluster security group EKS made for it (deleted with it).
	SecurityGroup string `json:"securityGroup"`
	// Webhook is the token webhook URL its control plane was created with.
	Webhook string `json:"webhook,omitempty"`
}

// eksVPC is a cluster's VPC configuration.
type eksVPC struct {
	SubnetIDs        []string `json:"subnetIds"`
	SecurityGroupIDs []string `json:"securityGroupIds"`
	// ClusterSecurityGroupID is the security group EKS made for the cluster.
	ClusterSecurityGroupID string   `json:"clusterSecurityGroupId,omitempty"`
	VpcID                  string   `json:"vpcId,omitempty"`
	PublicAccess           bool     `json:"publicAccess"`
	PrivateAccess          bool     `json:"privateAccess"`
	PublicAccessCIDRs      []string `json:"publicAccessCidrs,omitempty"`
}

// eksLogSetup is a set of control-plane log types, on or off.
type eksLogSetup struct {
	Types   []string `json:"types"`
	Enabled bool     `json:"enabled"`
}

// eksIssue is a health issue of a cluster or node group.
type eksIssue struct {
	Code        string   `json:"code"`
	Message     string   `json:"message"`
	ResourceIDs []string `json:"resourceIds,omitempty"`
}

// eksTaint is a node group's taint, its effect as EKS spells it (NO_SCHEDULE).
type eksTaint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// eksScaling is a node group's size bounds and desired size.
type eksScaling struct {
	Min     int `json:"min"`
	Max     int `json:"max"`
	Desired int `json:"desired"`
}

// eksNodegroup is a managed node group as the emulator keeps it.
type eksNodegroup struct {
	Name           string            `json:"name"`
	ARN            string            `json:"arn"`
	Cluster        string            `json:"cluster"`
	Version        string            `json:"version"`
	ReleaseVersion string            `json:"releaseVersion"`
	CreatedAt      time.Time         `json:"createdAt"`
	ModifiedAt     time.Time         `json:"modifiedAt"`
	Status         string            `json:"status"`
	CapacityType   string            `json:"capacityType"`
	Scaling        eksScaling        `json:"scaling"`
	InstanceTypes  []string          `json:"instanceTypes"`
	Subnets        []string          `json:"subnets"`
	AmiType        string            `json:"amiType"`
	NodeRole       string            `json:"nodeRole"`
	Labels         map[string]string `json:"labels,omitempty"`
	Taints         []eksTaint        `json:"taints,omitempty"`
	// AutoScalingGroup is the name of the group's Auto Scaling group.
	AutoScalingGroup string            `json:"autoScalingGroup"`
	DiskSize         int               `json:"diskSize"`
	Issues           []eksIssue        `json:"issues,omitempty"`
	UpdateConfig     map[string]int    `json:"updateConfig,omitempty"`
	Tags             map[string]string `json:"tags"`
	Due              time.Time         `json:"due"`
	// Gen is the cluster's NodesWant when this group last changed: the change is on the nodes
	// once NodesSynced reaches it.
	Gen int `json:"gen"`
}

// eksAddon is an add-on as the emulator keeps it.
type eksAddon struct {
	Name                  string            `json:"name"`
	Cluster               string            `json:"cluster"`
	Status                string            `json:"status"`
	Version               string            `json:"version"`
	ARN                   string            `json:"arn"`
	CreatedAt             time.Time         `json:"createdAt"`
	ModifiedAt            time.Time         `json:"modifiedAt"`
	ServiceAccountRoleARN string            `json:"serviceAccountRoleArn,omitempty"`
	ConfigurationValues   string            `json:"configurationValues,omitempty"`
	Publisher             string            `json:"publisher"`
	Owner                 string            `json:"owner"`
	Tags                  map[string]string `json:"tags"`
	Due                   time.Time         `json:"due"`
}

// eksUpdate is an update of a cluster, or of one of its node groups or add-ons when named.
type eksUpdate struct {
	ID string `json:"id"`
	// Status is InProgress or Successful.
	Status    string     `json:"status"`
	Type      string     `json:"type"`
	Params    []eksParam `json:"params"`
	CreatedAt time.Time  `json:"createdAt"`
	Nodegroup string     `json:"nodegroup,omitempty"`
	Addon     string     `json:"addon,omitempty"`
	Due       time.Time  `json:"due"`
	// Apply is the request body, applied when the update completes.
	Apply json.RawMessage `json:"apply,omitempty"`
}

// eksParam is one parameter of an update (its type and value as EKS reports them).
type eksParam struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

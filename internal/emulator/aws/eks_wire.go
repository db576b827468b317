package aws

import "time"

// EKS's wire forms: the restJson1 shapes its API answers and takes, made from the state's types
// (eks_state.go) where a route answers, and read from requests.

type clusterWire struct {
	Name                    string            `json:"name"`
	Arn                     string            `json:"arn"`
	CreatedAt               epoch             `json:"createdAt"`
	Version                 string            `json:"version"`
	Endpoint                string            `json:"endpoint,omitempty"`
	RoleArn                 string            `json:"roleArn"`
	ResourcesVpcConfig      vpcConfigWire     `json:"resourcesVpcConfig"`
	KubernetesNetworkConfig k8sNetworkWire    `json:"kubernetesNetworkConfig"`
	Logging                 loggingWire       `json:"logging"`
	Identity                *identityWire     `json:"identity,omitempty"`
	Status                  string            `json:"status"`
	CertificateAuthority    *caWire           `json:"certificateAuthority,omitempty"`
	ClientRequestToken      string            `json:"clientRequestToken,omitempty"`
	PlatformVersion         string            `json:"platformVersion"`
	Tags                    map[string]string `json:"tags"`
	AccessConfig            accessConfigWire  `json:"accessConfig"`
	Health                  *healthWire       `json:"health,omitempty"`
}

type vpcConfigWire struct {
	SubnetIds              []string `json:"subnetIds"`
	SecurityGroupIds       []string `json:"securityGroupIds"`
	ClusterSecurityGroupID string   `json:"clusterSecurityGroupId,omitempty"`
	VpcID                  string   `json:"vpcId,omitempty"`
	EndpointPublicAccess   *bool    `json:"endpointPublicAccess,omitempty"`
	EndpointPrivateAccess  *bool    `json:"endpointPrivateAccess,omitempty"`
	PublicAccessCidrs      []string `json:"publicAccessCidrs,omitempty"`
}

type k8sNetworkWire struct {
	ServiceIpv4Cidr string `json:"serviceIpv4Cidr,omitempty"`
	IPFamily        string `json:"ipFamily,omitempty"`
}

type logSetupWire struct {
	Types   []string `json:"types"`
	Enabled *bool    `json:"enabled"`
}

type loggingWire struct {
	ClusterLogging []logSetupWire `json:"clusterLogging"`
}

type identityWire struct {
	OIDC struct {
		Issuer string `json:"issuer"`
	} `json:"oidc"`
}

type caWire struct {
	Data string `json:"data"`
}

type accessConfigWire struct {
	AuthenticationMode                      string `json:"authenticationMode,omitempty"`
	BootstrapClusterCreatorAdminPermissions *bool  `json:"bootstrapClusterCreatorAdminPermissions,omitempty"`
}

type healthWire struct {
	Issues []issueWire `json:"issues"`
}

type issueWire struct {
	Code        string   `json:"code"`
	Message     string   `json:"message"`
	ResourceIds []string `json:"resourceIds,omitempty"`
}

type scalingWire struct {
	MinSize     *int `json:"minSize,omitempty"`
	MaxSize     *int `json:"maxSize,omitempty"`
	DesiredSize *int `json:"desiredSize,omitempty"`
}

type taintWire struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

type nodegroupWire struct {
	NodegroupName  string            `json:"nodegroupName"`
	NodegroupArn   string            `json:"nodegroupArn"`
	ClusterName    string            `json:"clusterName"`
	Version        string            `json:"version"`
	ReleaseVersion string            `json:"releaseVersion"`
	CreatedAt      epoch             `json:"createdAt"`
	ModifiedAt     epoch             `json:"modifiedAt"`
	Status         string            `json:"status"`
	CapacityType   string            `json:"capacityType"`
	ScalingConfig  scalingWire       `json:"scalingConfig"`
	InstanceTypes  []string          `json:"instanceTypes"`
	Subnets        []string          `json:"subnets"`
	AmiType        string            `json:"amiType"`
	NodeRole       string            `json:"nodeRole"`
	Labels         map[string]string `json:"labels,omitempty"`
	Taints         []taintWire       `json:"taints,omitempty"`
	Resources      struct {
		AutoScalingGroups []struct {
			Name string `json:"name"`
		} `json:"autoScalingGroups"`
	} `json:"resources"`
	DiskSize     int               `json:"diskSize"`
	Health       healthWire        `json:"health"`
	UpdateConfig map[string]int    `json:"updateConfig,omitempty"`
	Tags         map[string]string `json:"tags"`
}

type addonWire struct {
	AddonName             string            `json:"addonName"`
	ClusterName           string            `json:"clusterName"`
	Status                string            `json:"status"`
	AddonVersion          string            `json:"addonVersion"`
	Health                healthWire        `json:"health"`
	AddonArn              string            `json:"addonArn"`
	CreatedAt             epoch             `json:"createdAt"`
	ModifiedAt            epoch             `json:"modifiedAt"`
	ServiceAccountRoleArn string            `json:"serviceAccountRoleArn,omitempty"`
	ConfigurationValues   string            `json:"configurationValues,omitempty"`
	Publisher             string            `json:"publisher"`
	Owner                 string            `json:"owner"`
	Tags                  map[string]string `json:"tags"`
}

type updateWire struct {
	ID        string        `json:"id"`
	Status    string        `json:"status"`
	Type      string        `json:"type"`
	Params    []updateParam `json:"params"`
	CreatedAt epoch         `json:"createdAt"`
	Errors    []any         `json:"errors"`
}

type updateParam struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// ep is t as restJson1 sends it (seconds since the epoch).
func ep(t time.Time) epoch { return epoch{t} }

// wire is the cluster as DescribeCluster answers it.
func (c *eksCluster) wire() clusterWire {
	v := c.VPC
	w := clusterWire{Name: c.Name, Arn: c.ARN, CreatedAt: ep(c.CreatedAt), Version: c.Version, Endpoint: c.Endpoint,
		RoleArn: c.RoleARN,
		ResourcesVpcConfig: vpcConfigWire{SubnetIds: v.SubnetIDs, SecurityGroupIds: v.SecurityGroupIDs,
			ClusterSecurityGroupID: v.ClusterSecurityGroupID, VpcID: v.VpcID, EndpointPublicAccess: boolp(v.PublicAccess),
			EndpointPrivateAccess: boolp(v.PrivateAccess), PublicAccessCidrs: v.PublicAccessCIDRs},
		KubernetesNetworkConfig: k8sNetworkWire{ServiceIpv4Cidr: c.ServiceCIDR, IPFamily: c.IPFamily},
		Logging:                 loggingOf(c.Logging),
		Identity:                &identityWire{},
		Status:                  c.Status, ClientRequestToken: c.ClientRequestToken, PlatformVersion: c.PlatformVersion,
		Tags:         c.Tags,
		AccessConfig: accessConfigWire{AuthenticationMode: c.AuthMode, BootstrapClusterCreatorAdminPermissions: boolp(c.BootstrapAdmin)},
	}
	w.Identity.OIDC.Issuer = c.OIDCIssuer
	if c.CAData != "" {
		w.CertificateAuthority = &caWire{Data: c.CAData}
	}
	if len(c.Issues) > 0 {
		w.Health = &healthWire{Issues: issuesWire(c.Issues)}
	}
	return w
}

// loggingOf is a logging setup in its wire form.
func loggingOf(ls []eksLogSetup) loggingWire {
	var w loggingWire
	for _, l := range ls {
		w.ClusterLogging = append(w.ClusterLogging, logSetupWire{Types: l.Types, Enabled: boolp(l.Enabled)})
	}
	return w
}

// issuesWire is issues in their wire form, never null.
func issuesWire(is []eksIssue) []issueWire {
	out := []issueWire{}
	for _, i := range is {
		out = append(out, issueWire{Code: i.Code, Message: i.Message, ResourceIds: i.ResourceIDs})
	}
	return out
}

// scalingWireOf is a node group's scaling in its wire form.
func scalingWireOf(sc eksScaling) scalingWire {
	return scalingWire{MinSize: intp(sc.Min), MaxSize: intp(sc.Max), DesiredSize: intp(sc.Desired)}
}

// scalingOf is a merged (complete) wire scaling config as the state keeps it.
func scalingOf(w scalingWire) eksScaling {
	return eksScaling{Min: *w.MinSize, Max: *w.MaxSize, Desired: *w.DesiredSize}
}

// taintsOf are wire taints as the state keeps them.
func taintsOf(ts []taintWire) []eksTaint {
	var out []eksTaint
	for _, t := range ts {
		out = append(out, eksTaint(t))
	}
	return out
}

// wire is the node group as DescribeNodegroup answers it.
func (ng *eksNodegroup) wire() nodegroupWire {
	w := nodegroupWire{NodegroupName: ng.Name, NodegroupArn: ng.ARN, ClusterName: ng.Cluster, Version: ng.Version,
		ReleaseVersion: ng.ReleaseVersion, CreatedAt: ep(ng.CreatedAt), ModifiedAt: ep(ng.ModifiedAt), Status: ng.Status,
		CapacityType: ng.CapacityType, ScalingConfig: scalingWireOf(ng.Scaling), InstanceTypes: ng.InstanceTypes,
		Subnets: ng.Subnets, AmiType: ng.AmiType, NodeRole: ng.NodeRole, Labels: ng.Labels, DiskSize: ng.DiskSize,
		Health: healthWire{Issues: issuesWire(ng.Issues)}, UpdateConfig: ng.UpdateConfig, Tags: ng.Tags}
	for _, t := range ng.Taints {
		w.Taints = append(w.Taints, taintWire(t))
	}
	w.Resources.AutoScalingGroups = append(w.Resources.AutoScalingGroups, struct {
		Name string `json:"name"`
	}{ng.AutoScalingGroup})
	return w
}

// wire is the add-on as DescribeAddon answers it.
func (a *eksAddon) wire() addonWire {
	return addonWire{AddonName: a.Name, ClusterName: a.Cluster, Status: a.Status, AddonVersion: a.Version,
		Health: healthWire{Issues: []issueWire{}}, AddonArn: a.ARN, CreatedAt: ep(a.CreatedAt), ModifiedAt: ep(a.ModifiedAt),
		ServiceAccountRoleArn: a.ServiceAccountRoleARN, ConfigurationValues: a.ConfigurationValues,
		Publisher: a.Publisher, Owner: a.Owner, Tags: a.Tags}
}

// wire is the update as DescribeUpdate answers it.
func (u *eksUpdate) wire() updateWire {
	w := updateWire{ID: u.ID, Status: u.Status, Type: u.Type, CreatedAt: ep(u.CreatedAt), Errors: []any{}}
	for _, p := range u.Params {
		w.Params = append(w.Params, updateParam(p))
	}
	return w
}

package aws

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
	"github.com/nuv-dev/nuv/internal/lazy"
)

// EKSVersions are the Kubernetes versions the emulated EKS offers (standard and extended support
// around 1.36), oldest first; the last is the default.
var EKSVersions = []string{"1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36"}

const eksPlatformVersion = "eks.8"

func supportedVersion(v string) bool {
	for _, x := range EKSVersions {
		if x == v {
			return true
		}
	}
	return false
}

func minorOf(v string) int {
	_, m, _ := strings.Cut(v, ".")
	n, _ := strconv.Atoi(m)
	return n
}

var eksNameRE = lazy.MustCompile(`^[0-9A-Za-z][A-Za-z0-9\-_]*$`)

// eksRequest is an EKS call: the path's labels, the query and the JSON body.
type eksRequest struct {
	*request
	segs []string
}

func (r *eksRequest) decode(v any) error {
	if len(r.body) == 0 {
		return nil
	}
	if err := json.Unmarshal(r.body, v); err != nil {
		return errf(400, "InvalidParameterException", "the request body is not valid JSON for this operation: %v", err)
	}
	return nil
}

func (r *eksRequest) query(k string) string { return r.http.URL.Query().Get(k) }

type eksHandler func(s *Server, r *eksRequest) (any, error)

// eksUnimplemented names the EKS API families the emulator does not serve, by path segment.
var eksUnimplemented = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"fargate-profiles":             "Fargate profile operations (CreateFargateProfile, DescribeFargateProfile, ...)",
		"identity-provider-config":     "identity provider config operations (AssociateIdentityProviderConfig, ...)",
		"identity-provider-configs":    "identity provider config operations (ListIdentityProviderConfigs, ...)",
		"access-entries":               "access entry operations (CreateAccessEntry, ListAccessEntries, ...)",
		"access-policies":              "ListAccessPolicies",
		"pod-identity-associations":    "pod identity operations (CreatePodIdentityAssociation, ...)",
		"insights":                     "insight operations (ListInsights, DescribeInsight)",
		"encryption-config":            "AssociateEncryptionConfig",
		"cluster-registrations":        "RegisterCluster / DeregisterCluster",
		"eks-anywhere-subscriptions":   "EKS Anywhere subscription operations",
		"capabilities":                 "capability operations",
		"addons/configuration-schemas": "DescribeAddonConfiguration",
	}
}}

// eksRoutes is EKS's table of operations: restJson1 method and path, operation, handler.
var eksRoutes = emucore.Routes[eksHandler]{
	{Method: "POST", Pattern: "clusters", Op: "CreateCluster", Handler: (*Server).eksCreateCluster},
	{Method: "GET", Pattern: "clusters", Op: "ListClusters", Handler: (*Server).eksListClusters},
	{Method: "GET", Pattern: "clusters/*", Op: "DescribeCluster", Handler: (*Server).eksDescribeCluster},
	{Method: "DELETE", Pattern: "clusters/*", Op: "DeleteCluster", Handler: (*Server).eksDeleteCluster},
	{Method: "POST", Pattern: "clusters/*/updates", Op: "UpdateClusterVersion", Handler: (*Server).eksUpdateClusterVersion},
	{Method: "GET", Pattern: "clusters/*/updates", Op: "ListUpdates", Handler: (*Server).eksListUpdates},
	{Method: "GET", Pattern: "clusters/*/updates/*", Op: "DescribeUpdate", Handler: (*Server).eksDescribeUpdate},
	{Method: "POST", Pattern: "clusters/*/update-config", Op: "UpdateClusterConfig", Handler: (*Server).eksUpdateClusterConfig},
	{Method: "POST", Pattern: "clusters/*/node-groups", Op: "CreateNodegroup", Handler: (*Server).eksCreateNodegroup},
	{Method: "GET", Pattern: "clusters/*/node-groups", Op: "ListNodegroups", Handler: (*Server).eksListNodegroups},
	{Method: "GET", Pattern: "clusters/*/node-groups/*", Op: "DescribeNodegroup", Handler: (*Server).eksDescribeNodegroup},
	{Method: "DELETE", Pattern: "clusters/*/node-groups/*", Op: "DeleteNodegroup", Handler: (*Server).eksDeleteNodegroup},
	{Method: "POST", Pattern: "clusters/*/node-groups/*/update-config", Op: "UpdateNodegroupConfig", Handler: (*Server).eksUpdateNodegroupConfig},
	{Method: "POST", Pattern: "clusters/*/node-groups/*/update-version", Op: "UpdateNodegroupVersion", Handler: (*Server).eksUpdateNodegroupVersion},
	{Method: "POST", Pattern: "clusters/*/addons", Op: "CreateAddon", Handler: (*Server).eksCreateAddon},
	{Method: "GET", Pattern: "clusters/*/addons", Op: "ListAddons", Handler: (*Server).eksListAddons},
	{Method: "GET", Pattern: "clusters/*/addons/*", Op: "DescribeAddon", Handler: (*Server).eksDescribeAddon},
	{Method: "DELETE", Pattern: "clusters/*/addons/*", Op: "DeleteAddon", Handler: (*Server).eksDeleteAddon},
	{Method: "POST", Pattern: "clusters/*/addons/*/update", Op: "UpdateAddon", Handler: (*Server).eksUpdateAddon},
	{Method: "GET", Pattern: "addons/supported-versions", Op: "DescribeAddonVersions", Handler: (*Server).eksDescribeAddonVersions},
	{Method: "GET", Pattern: "cluster-versions", Op: "DescribeClusterVersions", Handler: (*Server).eksDescribeClusterVersions},
	{Method: "POST", Pattern: "tags/*", Op: "TagResource", Handler: (*Server).eksTagResource},
	{Method: "DELETE", Pattern: "tags/*", Op: "UntagResource", Handler: (*Server).eksUntagResource},
	{Method: "GET", Pattern: "tags/*", Op: "ListTagsForResource", Handler: (*Server).eksListTags},
}

// routeEKS maps a restJson1 request to its operation.
func (s *Server) routeEKS(rq *request) (string, func() (any, error), *apiError) {
	raw := strings.Split(strings.Trim(rq.http.URL.EscapedPath(), "/"), "/")
	segs := make([]string, len(raw))
	for i, x := range raw {
		v, err := url.PathUnescape(x)
		if err != nil {
			return "", nil, errf(400, "InvalidParameterException", "malformed path %s", rq.http.URL.Path)
		}
		segs[i] = v
	}
	rt, _ := eksRoutes.Match(rq.http.Method, segs, false)
	if rt == nil {
		what := ""
		for seg, name := range eksUnimplemented.Get() {
			if strings.Contains("/"+strings.Join(segs, "/")+"/", "/"+seg+"/") {
				what = " (" + name + ")"
			}
		}
		return "", nil, errf(404, "UnknownOperationException", "nuv emulator does not implement the EKS operation %s %s%s; it serves clusters, node groups, add-ons, updates, tags and DescribeAddonVersions", rq.http.Method, rq.http.URL.Path, what)
	}
	op, h := rt.Op, rt.Handler
	er := &eksRequest{request: rq, segs: segs}
	return op, func() (any, error) { return h(s, er) }, nil
}

func (s *Server) eksARN(kind, rest string) string {
	return fmt.Sprintf("arn:aws:eks:%s:%s:%s/%s", s.St.Region, s.St.Account, kind, rest)
}

func notFoundCluster(name string) *apiError {
	return errf(404, "ResourceNotFoundException", "No cluster found for name: %s.", name).with("clusterName", name)
}

// cluster returns the named cluster or EKS's ResourceNotFoundException.
func (s *Server) cluster(name string) (*eksCluster, error) {
	c := s.St.EKS.Clusters[name]
	if c == nil {
		return nil, notFoundCluster(name)
	}
	return c, nil
}

func (s *Server) activeCluster(name string) (*eksCluster, error) {
	c, err := s.cluster(name)
	if err != nil {
		return nil, err
	}
	if c.Status != "ACTIVE" {
		return nil, errf(400, "InvalidRequestException", "Cluster '%s' is not in ACTIVE status (it is %s)", name, c.Status).with("clusterName", name)
	}
	return c, nil
}

func boolp(b bool) *bool { return &b }
func intp(i int) *int    { return &i }

var allLogTypes = []string{"api", "audit", "authenticator", "controllerManager", "scheduler"}

func (s *Server) eksCreateCluster(r *eksRequest) (any, error) {
	var in struct {
		Name                    string            `json:"name"`
		Version                 string            `json:"version"`
		RoleArn                 string            `json:"roleArn"`
		ResourcesVpcConfig      vpcConfigWire     `json:"resourcesVpcConfig"`
		KubernetesNetworkConfig k8sNetworkWire    `json:"kubernetesNetworkConfig"`
		Logging                 *loggingWire      `json:"logging"`
		ClientRequestToken      string            `json:"clientRequestToken"`
		Tags                    map[string]string `json:"tags"`
		AccessConfig            accessConfigWire  `json:"accessConfig"`
	}
	if err := r.decode(&in); err != nil {
		return nil, err
	}
	inval := func(f string, a ...any) error { return errf(400, "InvalidParameterException", f, a...) }
	if in.Name == "" || len(in.Name) > 100 || !eksNameRE.MatchString(in.Name) {
		return nil, inval("The cluster name %q is invalid: it must start with a letter or digit, contain only letters, digits, '-' and '_', and be at most 100 characters", in.Name)
	}
	if c := s.St.EKS.Clusters[in.Name]; c != nil {
		return nil, errf(409, "ResourceInUseException", "Cluster already exists with name: %s", in.Name).with("clusterName", in.Name)
	}
	if in.Version == "" {
		in.Version = EKSVersions[len(EKSVersions)-1]
	}
	if !supportedVersion(in.Version) {
		return nil, errf(400, "InvalidParameterException", "unsupported Kubernetes version %s (this EKS offers %s)", in.Version, strings.Join(EKSVersions, ", ")).with("clusterName", in.Name)
	}
	if err := s.checkRole(in.RoleArn, "eks.amazonaws.com", "roleArn"); err != nil {
		return nil, err
	}
	vpcID, err := s.checkSubnets(in.ResourcesVpcConfig.SubnetIds, true)
	if err != nil {
		return nil, err
	}
	for _, sg := range in.ResourcesVpcConfig.SecurityGroupIds {
		g := s.St.EC2.SecurityGroups[sg]
		if g == nil || g.VpcID != vpcID {
			return nil, inval("Security group %s does not exist in VPC %s", sg, vpcID)
		}
	}
	if in.KubernetesNetworkConfig.ServiceIpv4Cidr == "" {
		in.KubernetesNetworkConfig.ServiceIpv4Cidr = "10.96.0.0/16"
	} else if _, err := parseCIDR(in.KubernetesNetworkConfig.ServiceIpv4Cidr); err != nil {
		return nil, inval("kubernetesNetworkConfig.serviceIpv4Cidr %q: %v", in.KubernetesNetworkConfig.ServiceIpv4Cidr, err)
	}
	if in.KubernetesNetworkConfig.IPFamily == "" {
		in.KubernetesNetworkConfig.IPFamily = "ipv4"
	}
	logging := []eksLogSetup{{Types: allLogTypes, Enabled: false}}
	if in.Logging != nil {
		if logging, err = mergeLogging(logging, *in.Logging); err != nil {
			return nil, err
		}
	}
	vc := in.ResourcesVpcConfig
	vpc := eksVPC{SubnetIDs: vc.SubnetIds, SecurityGroupIDs: vc.SecurityGroupIds, VpcID: vpcID, PublicAccess: true,
		PublicAccessCIDRs: vc.PublicAccessCidrs}
	if vc.EndpointPublicAccess != nil {
		vpc.PublicAccess = *vc.EndpointPublicAccess
	}
	if vc.EndpointPrivateAccess != nil {
		vpc.PrivateAccess = *vc.EndpointPrivateAccess
	}
	if len(vpc.PublicAccessCIDRs) == 0 {
		vpc.PublicAccessCIDRs = []string{"0.0.0.0/0"}
	}
	if vpc.SecurityGroupIDs == nil {
		vpc.SecurityGroupIDs = []string{}
	}
	// EKS makes a cluster security group in the VPC and deletes it with the cluster.
	sg := s.newSecurityGroup(vpcID, "eks-cluster-sg-"+in.Name+"-"+randDigits(9), "EKS created security group applied to ENI that is attached to EKS Control Plane master nodes, as well as any managed workloads.",
		map[string]string{"aws:eks:cluster-name": in.Name, "kubernetes.io/cluster/" + in.Name: "owned", "Name": "eks-cluster-sg-" + in.Name})
	vpc.ClusterSecurityGroupID = sg.GroupID
	ac := in.AccessConfig
	if ac.AuthenticationMode == "" {
		ac.AuthenticationMode = "API_AND_CONFIG_MAP"
	}
	bootstrap := true
	if ac.BootstrapClusterCreatorAdminPermissions != nil {
		bootstrap = *ac.BootstrapClusterCreatorAdminPermissions
	}
	if in.Tags == nil {
		in.Tags = map[string]string{}
	}
	c := &eksCluster{
		Name: in.Name, ARN: s.eksARN("cluster", in.Name), CreatedAt: now(), Version: in.Version, RoleARN: in.RoleArn,
		VPC: vpc, ServiceCIDR: in.KubernetesNetworkConfig.ServiceIpv4Cidr, IPFamily: in.KubernetesNetworkConfig.IPFamily,
		Logging: logging, Status: "CREATING", ClientRequestToken: in.ClientRequestToken, PlatformVersion: eksPlatformVersion,
		Tags: in.Tags, AuthMode: ac.AuthenticationMode, BootstrapAdmin: bootstrap,
		OIDCIssuer: fmt.Sprintf("https://oidc.eks.%s.amazonaws.com/id/%s", s.St.Region, strings.ToUpper(randFrom(hexDigits, 32))),
		NodeGroups: map[string]*eksNodegroup{}, Addons: map[string]*eksAddon{}, Due: s.due(), SecurityGroup: sg.GroupID}
	if s.St.EKS.Clusters == nil {
		s.St.EKS.Clusters = map[string]*eksCluster{}
	}
	s.St.EKS.Clusters[in.Name] = c
	s.Log.Infof("emulator: EKS cluster %s CREATING (Kubernetes %s)", in.Name, in.Version)
	return map[string]any{"cluster": c.wire()}, nil
}

func (s *Server) due() time.Time { return time.Now().UTC().Add(s.Delay) }

// mergeLogging applies a logging request to the current setup: each type goes to the setup with
// its enabled value.
func mergeLogging(cur []eksLogSetup, req loggingWire) ([]eksLogSetup, error) {
	enabled := map[string]bool{}
	for _, l := range cur {
		for _, t := range l.Types {
			enabled[t] = l.Enabled
		}
	}
	for _, l := range req.ClusterLogging {
		for _, t := range l.Types {
			if _, ok := enabled[t]; !ok {
				return cur, errf(400, "InvalidParameterException", "unknown log type %q (valid: %s)", t, strings.Join(allLogTypes, ", "))
			}
			enabled[t] = l.Enabled != nil && *l.Enabled
		}
	}
	var on, off []string
	for _, t := range allLogTypes {
		if enabled[t] {
			on = append(on, t)
		} else {
			off = append(off, t)
		}
	}
	var out []eksLogSetup
	if len(on) > 0 {
		out = append(out, eksLogSetup{Types: on, Enabled: true})
	}
	if len(off) > 0 {
		out = append(out, eksLogSetup{Types: off, Enabled: false})
	}
	return out, nil
}

// checkSubnets checks that subnet ids exist in one VPC (in two zones at least when twoZones) and
// returns the VPC.
func (s *Server) checkSubnets(ids []string, twoZones bool) (string, error) {
	if len(ids) == 0 {
		return "", errf(400, "InvalidParameterException", "Subnets are required: name at least one subnet (two, in different Availability Zones, for a cluster)")
	}
	vpc := ""
	zones := map[string]bool{}
	for _, id := range ids {
		sn := s.St.EC2.Subnets[id]
		if sn == nil {
			return "", errf(400, "InvalidParameterException", "The subnet ID '%s' does not exist", id)
		}
		if vpc != "" && sn.VpcID != vpc {
			return "", errf(400, "InvalidParameterException", "Subnets %s and %s are in different VPCs: all subnets must be in one VPC", ids[0], id)
		}
		vpc = sn.VpcID
		zones[sn.AvailabilityZone] = true
	}
	if twoZones && len(zones) < 2 {
		return "", errf(400, "InvalidParameterException", "Subnets specified must be in at least two different AZs")
	}
	return vpc, nil
}

// checkRole checks that arn names an existing IAM role that principal may assume.
func (s *Server) checkRole(arn, principal, field string) error {
	if arn == "" {
		return errf(400, "InvalidParameterException", "%s is required", field)
	}
	name := arn[strings.LastIndexByte(arn, '/')+1:]
	role := s.St.IAM.Roles[name]
	if role == nil || role.Arn != arn {
		return errf(400, "InvalidParameterException", "Role with arn: %s, does not exist (%s)", arn, field)
	}
	if !strings.Contains(role.AssumeRolePolicy, principal) {
		return errf(400, "InvalidParameterException", "Role %s cannot be assumed by %s: its trust policy does not name that service principal", arn, principal)
	}
	return nil
}

func (s *Server) eksListClusters(r *eksRequest) (any, error) {
	names := sortedKeys(s.St.EKS.Clusters)
	return r.page(names, "clusters")
}

// paginate cuts a sorted list of names into a page; the token is the index to resume from.
// page answers a List call: the page of names the request's maxResults and nextToken select,
// under field, with the next token.
func (r *eksRequest) page(names []string, field string) (any, error) {
	page, next, err := paginate(names, r.query("maxResults"), r.query("nextToken"))
	if err != nil {
		return nil, err
	}
	return map[string]any{field: page, "nextToken": next}, nil
}

func paginate(names []string, maxResults, token string) ([]string, *string, error) {
	max := 100
	if maxResults != "" {
		n, err := strconv.Atoi(maxResults)
		if err != nil || n < 1 || n > 100 {
			return nil, nil, errf(400, "InvalidParameterException", "maxResults %q must be between 1 and 100", maxResults)
		}
		max = n
	}
	start := 0
	if token != "" {
		b, err := base64.RawURLEncoding.DecodeString(token)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n < 0 || n > len(names) {
			return nil, nil, errf(400, "InvalidParameterException", "The nextToken %q is invalid", token)
		}
		start = n
	}
	end := min(start+max, len(names))
	page := append([]string{}, names[start:end]...)
	if end < len(names) {
		t := base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
		return page, &t, nil
	}
	return page, nil, nil
}

func (s *Server) eksDescribeCluster(r *eksRequest) (any, error) {
	c, err := s.cluster(r.segs[1])
	if err != nil {
		return nil, err
	}
	return map[string]any{"cluster": c.wire()}, nil
}

func (s *Server) eksDeleteCluster(r *eksRequest) (any, error) {
	c, err := s.cluster(r.segs[1])
	if err != nil {
		return nil, err
	}
	if len(c.NodeGroups) > 0 {
		return nil, errf(409, "ResourceInUseException", "Cluster has nodegroups attached (%s): delete them first", strings.Join(sortedKeys(c.NodeGroups), ", ")).with("clusterName", c.Name)
	}
	switch c.Status {
	case "DELETING":
		return map[string]any{"cluster": c.wire()}, nil
	case "CREATING", "UPDATING":
		return nil, errf(409, "ResourceInUseException", "Cannot delete because cluster %s currently has an update in progress (status %s)", c.Name, c.Status).with("clusterName", c.Name)
	}
	c.Status = "DELETING"
	c.Due = s.due()
	c.Backend = false
	s.Log.Infof("emulator: EKS cluster %s DELETING", c.Name)
	return map[string]any{"cluster": c.wire()}, nil
}

// newUpdate records an update of c (of a node group or add-on when named) that completes after the delay.
func (s *Server) newUpdate(c *eksCluster, typ string, p []eksParam, body []byte, ng, addon string) *eksUpdate {
	u := &eksUpdate{ID: uuid(), Status: "InProgress", Type: typ, Params: p, CreatedAt: now(),
		Nodegroup: ng, Addon: addon, Due: s.due(), Apply: append(json.RawMessage{}, body...)}
	c.Updates = append(c.Updates, u)
	return u
}

func (c *eksCluster) inProgress(ng, addon string) *eksUpdate {
	for _, u := range c.Updates {
		if u.Status == "InProgress" && u.Nodegroup == ng && u.Addon == addon {
			return u
		}
	}
	return nil
}

func (s *Server) eksUpdateClusterVersion(r *eksRequest) (any, error) {
	c, err := s.cluster(r.segs[1])
	if err != nil {
		return nil, err
	}
	var in struct {
		Version string `json:"version"`
	}
	if err := r.decode(&in); err != nil {
		return nil, err
	}
	if u := c.inProgress("", ""); u != nil || c.Status != "ACTIVE" {
		return nil, errf(409, "ResourceInUseException", "Cluster %s is in %s status; an update can start only when it is ACTIVE", c.Name, c.Status).with("clusterName", c.Name)
	}
	if !supportedVersion(in.Version) {
		return nil, errf(400, "InvalidParameterException", "unsupported Kubernetes version %s (this EKS offers %s)", in.Version, strings.Join(EKSVersions, ", ")).with("clusterName", c.Name)
	}
	if minorOf(in.Version) != minorOf(c.Version)+1 {
		return nil, errf(400, "InvalidParameterException", "Unsupported Kubernetes minor version update from %s to %s", c.Version, in.Version).with("clusterName", c.Name)
	}
	u := s.newUpdate(c, "VersionUpdate", []eksParam{{"Version", in.Version}, {"PlatformVersion", eksPlatformVersion}}, r.body, "", "")
	c.Status = "UPDATING"
	return map[string]any{"update": u.wire()}, nil
}

func (s *Server) eksUpdateClusterConfig(r *eksRequest) (any, error) {
	c, err := s.cluster(r.segs[1])
	if err != nil {
		return nil, err
	}
	var in struct {
		ResourcesVpcConfig *vpcConfigWire    `json:"resourcesVpcConfig"`
		Logging            *loggingWire      `json:"logging"`
		AccessConfig       *accessConfigWire `json:"accessConfig"`
	}
	if err := r.decode(&in); err != nil {
		return nil, err
	}
	if u := c.inProgress("", ""); u != nil || c.Status != "ACTIVE" {
		return nil, errf(409, "ResourceInUseException", "Cluster %s is in %s status; an update can start only when it is ACTIVE", c.Name, c.Status).with("clusterName", c.Name)
	}
	kinds := 0
	var typ string
	var p []eksParam
	if in.Logging != nil {
		kinds++
		if _, err := mergeLogging(c.Logging, *in.Logging); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(in.Logging)
		typ, p = "LoggingUpdate", []eksParam{{"ClusterLogging", string(b)}}
	}
	if v := in.ResourcesVpcConfig; v != nil {
		kinds++
		typ = "EndpointAccessUpdate"
		if v.EndpointPublicAccess != nil {
			p = append(p, eksParam{"EndpointPublicAccess", strconv.FormatBool(*v.EndpointPublicAccess)})
		}
		if v.EndpointPrivateAccess != nil {
			p = append(p, eksParam{"EndpointPrivateAccess", strconv.FormatBool(*v.EndpointPrivateAccess)})
		}
		if v.PublicAccessCidrs != nil {
			b, _ := json.Marshal(v.PublicAccessCidrs)
			p = append(p, eksParam{"PublicAccessCidrs", string(b)})
		}
		if v.SubnetIds != nil || v.SecurityGroupIds != nil {
			typ = "VpcConfigUpdate"
			if v.SubnetIds != nil {
				if vpc, err := s.checkSubnets(v.SubnetIds, true); err != nil {
					return nil, err
				} else if vpc != c.VPC.VpcID {
					return nil, errf(400, "InvalidParameterException", "Subnets must stay in the cluster's VPC %s", c.VPC.VpcID)
				}
				b, _ := json.Marshal(v.SubnetIds)
				p = append(p, eksParam{"Subnets", string(b)})
			}
			if v.SecurityGroupIds != nil {
				b, _ := json.Marshal(v.SecurityGroupIds)
				p = append(p, eksParam{"SecurityGroups", string(b)})
			}
		}
	}
	if a := in.AccessConfig; a != nil {
		kinds++
		typ = "AccessConfigUpdate"
		if a.AuthenticationMode != "" {
			p = append(p, eksParam{"AuthenticationMode", a.AuthenticationMode})
		}
	}
	if kinds != 1 || len(p) == 0 {
		return nil, errf(400, "InvalidParameterException", "Only one type of update can be allowed: give exactly one of resourcesVpcConfig, logging or accessConfig, with a change").with("clusterName", c.Name)
	}
	u := s.newUpdate(c, typ, p, r.body, "", "")
	c.Status = "UPDATING"
	return map[string]any{"update": u.wire()}, nil
}

func (s *Server) eksListUpdates(r *eksRequest) (any, error) {
	c, err := s.cluster(r.segs[1])
	if err != nil {
		return nil, err
	}
	ng, addon := r.query("nodegroupName"), r.query("addonName")
	var ids []string
	for _, u := range c.Updates {
		if u.Nodegroup == ng && u.Addon == addon {
			ids = append(ids, u.ID)
		}
	}
	return r.page(ids, "updateIds")
}

func (s *Server) eksDescribeUpdate(r *eksRequest) (any, error) {
	c, err := s.cluster(r.segs[1])
	if err != nil {
		return nil, err
	}
	for _, u := range c.Updates {
		if u.ID == r.segs[3] && u.Nodegroup == r.query("nodegroupName") && u.Addon == r.query("addonName") {
			return map[string]any{"update": u.wire()}, nil
		}
	}
	return nil, errf(404, "ResourceNotFoundException", "No update found for ID: %s", r.segs[3]).with("clusterName", c.Name)
}

// finishUpdate applies a completed update to the cluster, node group or add-on it changes.
func (s *Server) finishUpdate(c *eksCluster, u *eksUpdate) {
	u.Status = "Successful"
	switch {
	case u.Nodegroup != "":
		ng := c.NodeGroups[u.Nodegroup]
		if ng == nil {
			return
		}
		if u.Type == "VersionUpdate" {
			var in struct {
				Version        string `json:"version"`
				ReleaseVersion string `json:"releaseVersion"`
			}
			_ = json.Unmarshal(u.Apply, &in)
			if in.Version == "" {
				in.Version = c.Version
			}
			ng.Version = in.Version
			ng.ReleaseVersion = in.ReleaseVersion
			if in.ReleaseVersion == "" {
				ng.ReleaseVersion = releaseVersion(in.Version)
			}
		}
		ng.Status, ng.ModifiedAt = "ACTIVE", now()
	case u.Addon != "":
		a := c.Addons[u.Addon]
		if a == nil {
			return
		}
		var in struct {
			AddonVersion          string  `json:"addonVersion"`
			ServiceAccountRoleArn *string `json:"serviceAccountRoleArn"`
			ConfigurationValues   *string `json:"configurationValues"`
		}
		_ = json.Unmarshal(u.Apply, &in)
		if in.AddonVersion != "" {
			a.Version = in.AddonVersion
		}
		if in.ServiceAccountRoleArn != nil {
			a.ServiceAccountRoleARN = *in.ServiceAccountRoleArn
		}
		if in.ConfigurationValues != nil {
			a.ConfigurationValues = *in.ConfigurationValues
		}
		a.Status, a.ModifiedAt = "ACTIVE", now()
	default:
		var in struct {
			Version            string            `json:"version"`
			ResourcesVpcConfig *vpcConfigWire    `json:"resourcesVpcConfig"`
			Logging            *loggingWire      `json:"logging"`
			AccessConfig       *accessConfigWire `json:"accessConfig"`
		}
		_ = json.Unmarshal(u.Apply, &in)
		if in.Version != "" {
			c.Version = in.Version
		}
		if in.Logging != nil {
			if l, err := mergeLogging(c.Logging, *in.Logging); err == nil {
				c.Logging = l
			}
		}
		if v := in.ResourcesVpcConfig; v != nil {
			cur := &c.VPC
			if v.EndpointPublicAccess != nil {
				cur.PublicAccess = *v.EndpointPublicAccess
			}
			if v.EndpointPrivateAccess != nil {
				cur.PrivateAccess = *v.EndpointPrivateAccess
			}
			if v.PublicAccessCidrs != nil {
				cur.PublicAccessCIDRs = v.PublicAccessCidrs
			}
			if v.SubnetIds != nil {
				cur.SubnetIDs = v.SubnetIds
			}
			if v.SecurityGroupIds != nil {
				cur.SecurityGroupIDs = v.SecurityGroupIds
			}
		}
		if in.AccessConfig != nil && in.AccessConfig.AuthenticationMode != "" {
			c.AuthMode = in.AccessConfig.AuthenticationMode
		}
		c.Status = "ACTIVE"
	}
}

// resourceTags finds the tags of an EKS resource by ARN.
func (s *Server) resourceTags(arn string) (*map[string]string, error) {
	for _, c := range s.St.EKS.Clusters {
		if c.ARN == arn {
			return &c.Tags, nil
		}
		for _, ng := range c.NodeGroups {
			if ng.ARN == arn {
				return &ng.Tags, nil
			}
		}
		for _, a := range c.Addons {
			if a.ARN == arn {
				return &a.Tags, nil
			}
		}
	}
	if !strings.HasPrefix(arn, "arn:aws:eks:") {
		return nil, errf(400, "BadRequestException", "%s is not a valid EKS resource ARN", arn)
	}
	return nil, errf(404, "NotFoundException", "Resource %s not found", arn)
}

func (s *Server) eksTagResource(r *eksRequest) (any, error) {
	tags, err := s.resourceTags(r.segs[1])
	if err != nil {
		return nil, err
	}
	var in struct {
		Tags map[string]string `json:"tags"`
	}
	if err := r.decode(&in); err != nil {
		return nil, err
	}
	if len(in.Tags) == 0 {
		return nil, errf(400, "BadRequestException", "tags: at least one tag is required")
	}
	if *tags == nil {
		*tags = map[string]string{}
	}
	for k, v := range in.Tags {
		(*tags)[k] = v
	}
	if len(*tags) > 50 {
		return nil, errf(400, "BadRequestException", "a resource can have at most 50 tags")
	}
	return map[string]any{}, nil
}

func (s *Server) eksUntagResource(r *eksRequest) (any, error) {
	tags, err := s.resourceTags(r.segs[1])
	if err != nil {
		return nil, err
	}
	for _, k := range r.http.URL.Query()["tagKeys"] {
		delete(*tags, k)
	}
	return map[string]any{}, nil
}

func (s *Server) eksListTags(r *eksRequest) (any, error) {
	tags, err := s.resourceTags(r.segs[1])
	if err != nil {
		return nil, err
	}
	return map[string]any{"tags": *tags}, nil
}

func (s *Server) eksDescribeClusterVersions(r *eksRequest) (any, error) {
	want := map[string]bool{}
	for _, v := range r.http.URL.Query()["clusterVersions"] {
		want[v] = true
	}
	var out []map[string]any
	for i, v := range EKSVersions {
		if len(want) > 0 && !want[v] {
			continue
		}
		support := "STANDARD"
		if i < len(EKSVersions)-4 {
			support = "EXTENDED"
		}
		out = append(out, map[string]any{"clusterVersion": v, "clusterType": "eks", "defaultPlatformVersion": eksPlatformVersion,
			"defaultVersion": i == len(EKSVersions)-1, "status": support + "_SUPPORT", "versionStatus": support + "_SUPPORT"})
	}
	sort.SliceStable(out, func(i, j int) bool {
		return minorOf(out[i]["clusterVersion"].(string)) > minorOf(out[j]["clusterVersion"].(string))
	})
	return map[string]any{"clusterVersions": out}, nil
}

package azure

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	acs "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	"github.com/nuv-dev/nuv/internal/lazy"
)

var poolNameRE = lazy.MustCompile(`^[a-z][a-z0-9]{0,11}$`)

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func i32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func clusterNotFound(rg, name string) *armError {
	return aerr(404, "ResourceNotFound", "The Resource 'Microsoft.ContainerService/managedClusters/%s' under resource group '%s' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix", name, rg)
}

func poolNotFound(rg, name, pool string) *armError {
	return aerr(404, "ResourceNotFound", "The Resource 'Microsoft.ContainerService/managedClusters/%s/agentPools/%s' under resource group '%s' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix", name, pool, rg)
}

// lookup finds the group and cluster a request names.
func (s *Server) lookup(c *call) (*group, *managedCluster, *armError) {
	rg, name := c.segs[3], c.segs[7]
	g, ok := s.St.Groups[strings.ToLower(rg)]
	if !ok {
		return nil, nil, groupNotFound(rg)
	}
	mc, ok := s.St.Clusters[clusterKey(rg, name)]
	if !ok {
		return g, nil, clusterNotFound(rg, name)
	}
	return g, mc, nil
}

func busy(mc *managedCluster) *armError {
	if mc.Op == "" {
		return nil
	}
	return aerr(409, "OperationNotAllowed", "Operation is not allowed because there's an in progress %s operation on managed cluster %s. Please wait for it to finish before starting a new operation.",
		strings.ToLower(mc.ProvisioningState), mc.Name)
}

// checkPool validates an agent pool profile at path for a cluster in region at version cpVersion;
// old is the pool as it is (nil for a new pool).
func checkPool(p *acs.ManagedClusterAgentPoolProfile, path, regionName, cpVersion string, old *aksPool) *armError {
	name := str(p.Name)
	if !poolNameRE.MatchString(name) {
		return aerr(400, "InvalidParameter", "The value of parameter %s.name is invalid: agent pool name '%s' must start with a lowercase letter, have at most 12 characters and only lowercase letters and digits.", path, name).at(path + ".name")
	}
	if e := checkPoolPlacement(p, path, name, regionName, old); e != nil {
		return e
	}
	spot, e := checkPoolMode(p, path)
	if e != nil {
		return e
	}
	if e := checkPoolCount(p, path, old); e != nil {
		return e
	}
	pv, e := checkPoolVersion(p, path, regionName, cpVersion, old)
	if e != nil {
		return e
	}
	for i, t := range p.NodeTaints {
		kv, eff, ok := strings.Cut(str(t), ":")
		if !ok || kv == "" || (eff != "NoSchedule" && eff != "PreferNoSchedule" && eff != "NoExecute") {
			return aerr(400, "InvalidParameter", "The value of parameter %s.nodeTaints[%d] '%s' is invalid: want key=value:Effect.", path, i, str(t)).at(fmt.Sprintf("%s.nodeTaints[%d]", path, i))
		}
	}
	if old != nil {
		if e := checkPoolChange(p, path, old, spot, pv); e != nil {
			return e
		}
	}
	p.CurrentOrchestratorVersion = &pv
	if p.Type == nil {
		p.Type = to.Ptr(acs.AgentPoolTypeVirtualMachineScaleSets)
	}
	if p.OSType == nil {
		p.OSType = to.Ptr(acs.OSTypeLinux)
	}
	p.PowerState = &acs.PowerState{Code: to.Ptr(acs.CodeRunning)}
	return nil
}

// checkPoolPlacement checks pool name's VM size (the old pool's, or Azure's default, when not
// given) is offered in the region, and its zones are the region's.
func checkPoolPlacement(p *acs.ManagedClusterAgentPoolProfile, path, name, regionName string, old *aksPool) *armError {
	if p.VMSize == nil {
		if old != nil {
			p.VMSize = to.Ptr(old.VMSize)
		} else {
			p.VMSize = to.Ptr("Standard_DS2_v2")
		}
	}
	size, ok := vmSizeIn(*p.VMSize, regionName)
	if !ok {
		return aerr(400, "InvalidParameter", "The VM size of %s is not allowed in your subscription in location '%s'. The value of parameter %s.vmSize '%s' is invalid (offered: %s).", name, regionName, path, *p.VMSize, strings.Join(vmSizeNames(), ", ")).at(path + ".vmSize")
	}
	p.VMSize = &size
	r, _ := region(regionName)
	for _, z := range p.AvailabilityZones {
		if !slices.Contains(r.Zones, str(z)) {
			return aerr(400, "InvalidParameter", "The value of parameter %s.availabilityZones '%s' is invalid: the zones of location '%s' are [%s].", path, str(z), regionName, strings.Join(r.Zones, ", ")).at(path + ".availabilityZones")
		}
	}
	return nil
}

// checkPoolMode checks the pool's mode (User when not given) and that a System pool is not Spot;
// it returns whether the pool is Spot.
func checkPoolMode(p *acs.ManagedClusterAgentPoolProfile, path string) (bool, *armError) {
	if p.Mode == nil {
		p.Mode = to.Ptr(acs.AgentPoolModeUser)
	}
	if *p.Mode != acs.AgentPoolModeSystem && *p.Mode != acs.AgentPoolModeUser {
		return false, aerr(400, "InvalidParameter", "The value of parameter %s.mode '%s' is invalid (System or User).", path, *p.Mode).at(path + ".mode")
	}
	spot := p.ScaleSetPriority != nil && *p.ScaleSetPriority == acs.ScaleSetPrioritySpot
	if spot && *p.Mode == acs.AgentPoolModeSystem {
		return spot, aerr(400, "InvalidParameter", "The value of parameter %s.scaleSetPriority is invalid: a System agent pool cannot use Spot virtual machines.", path).at(path + ".scaleSetPriority")
	}
	return spot, nil
}

// checkPoolCount checks the pool's autoscaling bounds and node count (minCount when autoscaling,
// else the old pool's or 1, when not given): 0 to 1000, a System pool at least 1.
func checkPoolCount(p *acs.ManagedClusterAgentPoolProfile, path string, old *aksPool) *armError {
	if p.EnableAutoScaling != nil && *p.EnableAutoScaling {
		if p.MinCount == nil || p.MaxCount == nil || *p.MinCount > *p.MaxCount {
			return aerr(400, "InvalidParameter", "The value of parameter %s.minCount/maxCount is invalid: autoscaling needs minCount <= maxCount.", path).at(path + ".minCount")
		}
		if p.Count == nil {
			p.Count = to.Ptr(*p.MinCount)
		}
		if *p.Count < *p.MinCount || *p.Count > *p.MaxCount {
			return aerr(400, "InvalidParameter", "The value of parameter %s.count %d is invalid: it must be between minCount %d and maxCount %d.", path, *p.Count, *p.MinCount, *p.MaxCount).at(path + ".count")
		}
	} else {
		p.MinCount, p.MaxCount = nil, nil
	}
	if p.Count == nil {
		if old != nil {
			p.Count = to.Ptr(int32(old.Count))
		} else {
			p.Count = to.Ptr[int32](1)
		}
	}
	if *p.Count < 0 || *p.Count > 1000 || (*p.Mode == acs.AgentPoolModeSystem && *p.Count < 1) {
		return aerr(400, "InvalidParameter", "The value of parameter %s.count %d is invalid: 0 to 1000 nodes (a System pool at least 1).", path, *p.Count).at(path + ".count")
	}
	return nil
}

// checkPoolVersion resolves the pool's Kubernetes version (the old pool's, or the control plane's
// cpVersion, when not given), supported and not newer than the control plane's, and returns it.
func checkPoolVersion(p *acs.ManagedClusterAgentPoolProfile, path, regionName, cpVersion string, old *aksPool) (string, *armError) {
	if p.OrchestratorVersion == nil || *p.OrchestratorVersion == "" {
		if old != nil && old.OrchestratorVersion != "" {
			p.OrchestratorVersion = to.Ptr(old.OrchestratorVersion)
		} else {
			p.OrchestratorVersion = to.Ptr(cpVersion)
		}
	}
	pv, ok := resolveVersion(*p.OrchestratorVersion)
	if !ok {
		return pv, aerr(400, "InvalidParameter", "The value of parameter %s.orchestratorVersion '%s' is invalid: version not supported in location '%s' (supported: %s).", path, *p.OrchestratorVersion, regionName, versionList()).at(path + ".orchestratorVersion")
	}
	cp, _ := resolveVersion(cpVersion)
	if lessVersion(cp, pv) {
		return pv, aerr(400, "InvalidParameter", "The value of parameter %s.orchestratorVersion '%s' is invalid: a node pool cannot run a newer version than the control plane (%s).", path, *p.OrchestratorVersion, cpVersion).at(path + ".orchestratorVersion")
	}
	return pv, nil
}

// checkPoolChange refuses what an existing pool old cannot change — its VM size, zones and Spot
// priority — and a downgrade from its version to pv.
func checkPoolChange(p *acs.ManagedClusterAgentPoolProfile, path string, old *aksPool, spot bool, pv string) *armError {
	if !strings.EqualFold(old.VMSize, str(p.VMSize)) {
		return aerr(400, "PropertyChangeNotAllowed", "Changing property '%s.vmSize' is not allowed (from %s to %s): create a new agent pool.", path, old.VMSize, str(p.VMSize)).at(path + ".vmSize")
	}
	if !slices.Equal(sortedCopy(old.Zones), derefAll(p.AvailabilityZones)) {
		return aerr(400, "PropertyChangeNotAllowed", "Changing property '%s.availabilityZones' is not allowed.", path).at(path + ".availabilityZones")
	}
	if old.spot() != spot {
		return aerr(400, "PropertyChangeNotAllowed", "Changing property '%s.scaleSetPriority' is not allowed.", path).at(path + ".scaleSetPriority")
	}
	ov, _ := resolveVersion(old.OrchestratorVersion)
	if lessVersion(pv, ov) {
		return aerr(400, "InvalidParameter", "The value of parameter %s.orchestratorVersion '%s' is invalid: downgrading from %s is not allowed.", path, pv, ov).at(path + ".orchestratorVersion")
	}
	return nil
}

// MaxNodes is the most nodes an emulated cluster has: its control plane is a local cluster.
const MaxNodes = 100

// nodeLimit refuses pools (replaced counts the pool of that name once, the last given) of more
// than MaxNodes nodes in all: a limit of the emulator, said as such.
func nodeLimit(pools []*aksPool, replaced string) *armError {
	n := 0
	for i, p := range pools {
		if replaced != "" && i < len(pools)-1 && strings.EqualFold(p.Name, replaced) {
			continue
		}
		n += p.Count
	}
	if n > MaxNodes {
		return aerr(400, "QuotaExceeded", "nuv azure emulator: %d nodes in all; an emulated cluster has at most %d (its control plane is a local cluster with kwok nodes).", n, MaxNodes)
	}
	return nil
}

func derefAll(ps []*string) []string {
	var out []string
	for _, p := range ps {
		out = append(out, str(p))
	}
	slices.Sort(out)
	return out
}

// sortedCopy is ss sorted, nil when empty (as derefAll answers).
func sortedCopy(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := slices.Clone(ss)
	slices.Sort(out)
	return out
}

func clone[T any](v *T) *T {
	b, _ := json.Marshal(v)
	var out T
	_ = json.Unmarshal(b, &out)
	return &out
}

func (s *Server) putCluster(c *call) (int, any, *armError) {
	rg, name := c.segs[3], c.segs[7]
	g, ok := s.St.Groups[strings.ToLower(rg)]
	if !ok {
		return 0, nil, groupNotFound(rg)
	}
	if g.State == "Deleting" {
		return 0, nil, aerr(409, "ResourceGroupBeingDeleted", "The resource group '%s' is in deprovisioning state and cannot perform this operation.", g.Name)
	}
	var in acs.ManagedCluster
	if e := decode(c, &in); e != nil {
		return 0, nil, e
	}
	if in.Location == nil || *in.Location == "" {
		return 0, nil, aerr(400, "LocationRequired", "The location property is required for this definition.")
	}
	reg, ok := region(*in.Location)
	if !ok {
		return 0, nil, aerr(400, "LocationNotAvailableForResourceType", "The provided location '%s' is not available for resource type 'Microsoft.ContainerService/managedClusters'. List of available regions for the resource type is '%s'.", *in.Location, regionNames()).at("location")
	}
	if in.Properties == nil {
		in.Properties = &acs.ManagedClusterProperties{}
	}
	p := in.Properties
	key := clusterKey(rg, name)
	old := s.St.Clusters[key]
	if old != nil {
		if old.ProvisioningState == "Deleting" {
			return 0, nil, aerr(409, "OperationNotAllowed", "Operation is not allowed: managed cluster %s is being deleted.", name)
		}
		if e := busy(old); e != nil {
			return 0, nil, e
		}
		if len(old.PoolOps) > 0 {
			return 0, nil, aerr(409, "OperationNotAllowed", "Operation is not allowed because an agent pool operation is in progress on managed cluster %s.", name)
		}
		if old.Location != reg.Name {
			return 0, nil, aerr(400, "PropertyChangeNotAllowed", "Changing property 'location' is not allowed (the cluster is in %s).", old.Location).at("location")
		}
	}
	version := str(p.KubernetesVersion)
	if version == "" {
		version = DefaultKubernetesVersion
		if old != nil {
			version = old.KubernetesVersion
		}
	}
	patch, ok := resolveVersion(version)
	if !ok {
		return 0, nil, aerr(400, "InvalidParameter", "The value of parameter properties.kubernetesVersion '%s' is invalid: version %s is not supported in location '%s'. Please use [az aks get-versions] to get the supported versions (%s).", version, version, reg.Name, versionList()).at("properties.kubernetesVersion")
	}
	if old != nil && lessVersion(patch, old.CurrentVersion) {
		return 0, nil, aerr(400, "InvalidParameter", "The value of parameter properties.kubernetesVersion '%s' is invalid: downgrading from %s is not allowed.", version, old.CurrentVersion).at("properties.kubernetesVersion")
	}
	upgrade := old != nil && patch != old.CurrentVersion
	pools, e := clusterPools(p, old, upgrade, version, patch, reg.Name)
	if e != nil {
		return 0, nil, e
	}
	np, e := clusterNetworkProfile(p, old)
	if e != nil {
		return 0, nil, e
	}
	sub := s.St.SubscriptionID
	id := fmt.Sprintf("/subscriptions/%s/resourcegroups/%s/providers/Microsoft.ContainerService/managedClusters/%s", sub, rg, name)
	mc := old
	if mc == nil {
		mc = s.newCluster(g, p, rg, name, id, reg.Name)
	}
	mc.ID, mc.Name, mc.Location = id, name, reg.Name
	mc.Tags = tagsState(in.Tags)
	mc.SKU = aksSKU{Name: string(acs.ManagedClusterSKUNameBase), Tier: string(acs.ManagedClusterSKUTierFree)}
	if in.SKU != nil {
		mc.SKU = aksSKU{Name: strOf(in.SKU.Name), Tier: strOf(in.SKU.Tier)}
	}
	if in.Identity != nil {
		mc.Identity = identityState(in.Identity)
		if mc.Identity.Type == string(acs.ResourceIdentityTypeSystemAssigned) && mc.Identity.PrincipalID == "" {
			mc.Identity.PrincipalID, mc.Identity.TenantID = newUUID(), s.St.TenantID
		}
	}
	mc.KubernetesVersion, mc.CurrentVersion = version, patch
	mc.Pools = pools
	mc.Network = networkState(np)
	mc.PowerState = string(acs.CodeRunning)
	state, status := "Creating", 201
	if old != nil {
		state, status = "Updating", 200
	}
	mc.ProvisioningState = state
	op := s.startOp(c, id, reg.Name, false)
	mc.Op, mc.Due = op.ID, time.Now().Add(s.Delay)
	mc.Gen++
	s.Log.Infof("azure emulator: managed cluster %s/%s %s (version %s, %d agent pools)", rg, name, strings.ToLower(state), patch, len(pools))
	return status, mc.wire(), nil
}

// newCluster records a new managed cluster of resource group g (named rg in the request) and its
// node resource group, with the names and defaults AKS gives them.
func (s *Server) newCluster(g *group, p *acs.ManagedClusterProperties, rg, name, id, region string) *managedCluster {
	sub := s.St.SubscriptionID
	mc := &managedCluster{Group: g.Name}
	prefix := str(p.DNSPrefix)
	if prefix == "" {
		prefix = fmt.Sprintf("%.10s-%.10s-%.6s", name, rg, sub)
	}
	nodeRG := str(p.NodeResourceGroup)
	if nodeRG == "" {
		nodeRG = fmt.Sprintf("MC_%s_%s_%s", rg, name, region)
	}
	mc.DNSPrefix, mc.NodeResourceGroup = prefix, nodeRG
	mc.FQDN = fmt.Sprintf("%s-%s.hcp.%s.azmk8s.io", prefix, newUUID()[:8], region)
	mc.EnableRBAC, mc.MaxAgentPools, mc.ResourceUID = true, 100, newUUID()
	if p.EnableRBAC != nil {
		mc.EnableRBAC = *p.EnableRBAC
	}
	s.St.Groups[strings.ToLower(nodeRG)] = &group{Name: nodeRG, Location: region, ManagedBy: id, State: "Succeeded",
		Tags: map[string]string{"aks-managed-cluster-name": name, "aks-managed-cluster-rg": rg}}
	s.St.Clusters[clusterKey(rg, name)] = mc
	return mc
}

// clusterPools is the agent pools a PUT of a managed cluster leaves (old: the cluster before it, nil
// for a new one): those given are created or updated; on an update, the others stay as they are,
// and an upgrade of the control plane takes the pools not named along.
func clusterPools(p *acs.ManagedClusterProperties, old *managedCluster, upgrade bool, version, patch, region string) ([]*aksPool, *armError) {
	var pools []*aksPool
	if old != nil {
		for _, op := range old.Pools {
			pools = append(pools, clonePool(op))
		}
	}
	if old == nil && len(p.AgentPoolProfiles) == 0 {
		return nil, aerr(400, "InvalidParameter", "The value of parameter properties.agentPoolProfiles is invalid: must define at least one system pool.").at("properties.agentPoolProfiles")
	}
	// A new cluster whose pools name no mode (api-versions before 2020-03-01 have no mode, and it
	// is optional since) gets its first pool as the system pool, as AKS does.
	if old == nil && p.AgentPoolProfiles[0] != nil && !slices.ContainsFunc(p.AgentPoolProfiles, func(x *acs.ManagedClusterAgentPoolProfile) bool { return x != nil && x.Mode != nil }) {
		p.AgentPoolProfiles[0].Mode = to.Ptr(acs.AgentPoolModeSystem)
	}
	seen := map[string]bool{}
	for i, np := range p.AgentPoolProfiles {
		path := fmt.Sprintf("properties.agentPoolProfiles[%d]", i)
		if np == nil {
			return nil, aerr(400, "InvalidParameter", "%s is null", path)
		}
		if seen[str(np.Name)] {
			return nil, aerr(400, "InvalidParameter", "The value of parameter %s.name is invalid: agent pool '%s' is given twice.", path, str(np.Name)).at(path + ".name")
		}
		seen[str(np.Name)] = true
		idx := slices.IndexFunc(pools, func(x *aksPool) bool { return x.Name == str(np.Name) })
		var prev *aksPool
		if idx >= 0 {
			prev = pools[idx]
		}
		np = clone(np)
		if upgrade && (np.OrchestratorVersion == nil || (prev != nil && str(np.OrchestratorVersion) == prev.OrchestratorVersion)) {
			np.OrchestratorVersion = &version
		}
		if e := checkPool(np, path, region, version, prev); e != nil {
			return nil, e
		}
		pl := poolState(np)
		pl.ProvisioningState = "Creating"
		if prev != nil {
			pl.ProvisioningState = "Updating"
		}
		if idx >= 0 {
			pools[idx] = pl
		} else {
			pools = append(pools, pl)
		}
	}
	if upgrade {
		// An upgrade of the control plane takes the pools not named along.
		for _, pl := range pools {
			if !seen[pl.Name] {
				pl.OrchestratorVersion, pl.CurrentVersion = version, patch
				pl.ProvisioningState = "Upgrading"
			}
		}
	}
	if !slices.ContainsFunc(pools, func(x *aksPool) bool { return x.Mode == string(acs.AgentPoolModeSystem) }) {
		return nil, aerr(400, "InvalidParameter", "The value of parameter properties.agentPoolProfiles is invalid: must define at least one system pool.").at("properties.agentPoolProfiles")
	}
	return pools, nil
}

// clusterNetworkProfile is the network profile a PUT of a managed cluster gives it (old's when the
// body has none), with AKS's defaults; the network plugin cannot change.
func clusterNetworkProfile(p *acs.ManagedClusterProperties, old *managedCluster) (*acs.NetworkProfile, *armError) {
	np := p.NetworkProfile
	if np == nil {
		np = &acs.NetworkProfile{}
		if old != nil {
			np = networkWire(old.Network)
		}
	}
	if np.NetworkPlugin == nil {
		np.NetworkPlugin = to.Ptr(acs.NetworkPluginAzure)
		np.NetworkPluginMode = to.Ptr(acs.NetworkPluginModeOverlay)
	}
	switch *np.NetworkPlugin {
	case acs.NetworkPluginAzure, acs.NetworkPluginKubenet, acs.NetworkPluginNone:
	default:
		return nil, aerr(400, "InvalidParameter", "The value of parameter properties.networkProfile.networkPlugin '%s' is invalid (azure, kubenet or none).", *np.NetworkPlugin).at("properties.networkProfile.networkPlugin")
	}
	if old != nil && string(*np.NetworkPlugin) != old.Network.Plugin {
		return nil, aerr(400, "PropertyChangeNotAllowed", "Changing property 'properties.networkProfile.networkPlugin' is not allowed.").at("properties.networkProfile.networkPlugin")
	}
	if np.PodCidr == nil && *np.NetworkPlugin != acs.NetworkPluginNone {
		np.PodCidr = to.Ptr("10.244.0.0/16")
	}
	if np.ServiceCidr == nil {
		np.ServiceCidr, np.DNSServiceIP = to.Ptr("10.0.0.0/16"), to.Ptr("10.0.0.10")
	}
	if np.LoadBalancerSKU == nil {
		np.LoadBalancerSKU = to.Ptr(acs.LoadBalancerSKUStandard)
	}
	if np.OutboundType == nil {
		np.OutboundType = to.Ptr(acs.OutboundTypeLoadBalancer)
	}
	return np, nil
}

// updateClusterTags is ManagedClusters_UpdateTags: the body's tags replace the cluster's, at once
// (the response carries the cluster, its provisioning state terminal); refused while another
// operation runs, as AKS does.
func (s *Server) updateClusterTags(c *call) (int, any, *armError) {
	_, mc, e := s.lookup(c)
	if e != nil {
		return 0, nil, e
	}
	if e := busy(mc); e != nil {
		return 0, nil, e
	}
	var in struct {
		Tags map[string]*string `json:"tags"`
	}
	if e := decode(c, &in); e != nil {
		return 0, nil, e
	}
	mc.Tags = tagsState(in.Tags)
	mc.Gen++
	s.Log.Infof("azure emulator: managed cluster %s/%s tags updated", mc.Group, mc.Name)
	return 200, mc.wire(), nil
}

func (s *Server) getCluster(c *call) (int, any, *armError) {
	_, mc, e := s.lookup(c)
	if e != nil {
		return 0, nil, e
	}
	return 200, mc.wire(), nil
}

func (s *Server) listClusters(c *call) (int, any, *armError) {
	rg := c.segs[3]
	if _, ok := s.St.Groups[strings.ToLower(rg)]; !ok {
		return 0, nil, groupNotFound(rg)
	}
	out := []*acs.ManagedCluster{}
	for _, k := range sortedKeys(s.St.Clusters) {
		if strings.EqualFold(s.St.Clusters[k].Group, rg) {
			out = append(out, s.St.Clusters[k].wire())
		}
	}
	return 200, map[string]any{"value": out}, nil
}

func (s *Server) listAllClusters(*call) (int, any, *armError) {
	out := []*acs.ManagedCluster{}
	for _, k := range sortedKeys(s.St.Clusters) {
		out = append(out, s.St.Clusters[k].wire())
	}
	return 200, map[string]any{"value": out}, nil
}

func (s *Server) deleteCluster(c *call) (int, any, *armError) {
	_, mc, e := s.lookup(c)
	if e != nil {
		if e.Code == "ResourceNotFound" {
			return 204, nil, nil
		}
		return 0, nil, e
	}
	if mc.ProvisioningState != "Deleting" {
		op := s.startOp(c, mc.ID, mc.Location, true)
		s.beginClusterDelete(mc, op.ID)
	} else {
		c.op = "ManagedClusters_Delete"
		id := mc.Op
		base := fmt.Sprintf("%s/subscriptions/%s/providers/Microsoft.ContainerService/locations/%s", s.Base, s.St.SubscriptionID, mc.Location)
		c.hdr.Set("Azure-AsyncOperation", base+"/operations/"+id+"?api-version="+c.apiVersion)
		c.hdr.Set("Location", base+"/operationresults/"+id+"?api-version="+c.apiVersion)
	}
	return 202, nil, nil
}

// beginClusterDelete moves mc to Deleting; operations in progress on it are canceled. opID ""
// makes an operation of its own (a resource group being deleted).
func (s *Server) beginClusterDelete(mc *managedCluster, opID string) {
	cancel := aerr(409, "OperationCanceled", "The operation was canceled: managed cluster %s is being deleted.", mc.Name)
	if mc.Op != "" {
		s.finishOp(mc.Op, cancel)
	}
	for _, id := range mc.PoolOps {
		s.finishOp(id, cancel)
	}
	mc.PoolOps = nil
	if opID == "" {
		op := &operation{ID: newUUID(), Name: "ManagedClusters_Delete", Resource: mc.ID, Location: mc.Location, Status: "InProgress", Start: time.Now().UTC()}
		s.St.Operations[op.ID] = op
		opID = op.ID
	}
	mc.Op, mc.Due = opID, time.Now().Add(s.Delay)
	mc.ProvisioningState = "Deleting"
	s.Log.Infof("azure emulator: deleting managed cluster %s", mc.Name)
}

// listCredential answers the kubeconfig of the cluster's control plane (the local cluster behind
// it), named as AKS names its contexts and users.
func (s *Server) listCredential(c *call) (int, any, *armError) {
	_, mc, e := s.lookup(c)
	if e != nil {
		return 0, nil, e
	}
	user := "clusterUser"
	if strings.HasSuffix(strings.ToLower(c.segs[8]), "admincredential") {
		user = "clusterAdmin"
	}
	key := clusterKey(mc.Group, mc.Name)
	if !s.ensured[key] {
		return 0, nil, aerr(409, "OperationNotAllowed", "The control plane of managed cluster %s is not ready yet (provisioning state %s).", mc.Name, mc.ProvisioningState)
	}
	kc, err := s.backend.Kubeconfig(LocalName(key), mc.Name, fmt.Sprintf("%s_%s_%s", user, mc.Group, mc.Name))
	if err != nil {
		return 0, nil, aerr(500, "InternalServerError", "nuv azure emulator: kubeconfig of managed cluster %s: %v", mc.Name, err)
	}
	return 200, acs.CredentialResults{Kubeconfigs: []*acs.CredentialResult{{Name: &user, Value: kc}}}, nil
}

func (s *Server) listVersions(c *call) (int, any, *armError) {
	loc := c.segs[5]
	if _, ok := region(loc); !ok {
		return 0, nil, aerr(400, "LocationNotAvailableForResourceType", "The provided location '%s' is not available for resource type 'Microsoft.ContainerService/locations/kubernetesVersions'. List of available regions for the resource type is '%s'.", loc, regionNames())
	}
	var out acs.KubernetesVersionListResult
	for i, kv := range kubeVersions {
		v := &acs.KubernetesVersion{Version: to.Ptr(kv.Minor), IsDefault: to.Ptr(kv.Minor == DefaultKubernetesVersion), IsPreview: to.Ptr(false), PatchVersions: map[string]*acs.KubernetesPatchVersion{}}
		for _, pv := range kv.Patches {
			var up []*string
			for _, next := range kubeVersions[i:] {
				for _, np := range next.Patches {
					if lessVersion(pv, np) {
						up = append(up, to.Ptr(np))
					}
				}
			}
			v.PatchVersions[pv] = &acs.KubernetesPatchVersion{Upgrades: up}
		}
		out.Values = append(out.Values, v)
	}
	return 200, out, nil
}

func (s *Server) listPools(c *call) (int, any, *armError) {
	_, mc, e := s.lookup(c)
	if e != nil {
		return 0, nil, e
	}
	out := []*acs.AgentPool{}
	for _, p := range mc.Pools {
		out = append(out, agentPool(mc, p))
	}
	return 200, map[string]any{"value": out}, nil
}

func findPool(mc *managedCluster, name string) (int, *aksPool) {
	for i, p := range mc.Pools {
		if strings.EqualFold(p.Name, name) {
			return i, p
		}
	}
	return -1, nil
}

func (s *Server) getPool(c *call) (int, any, *armError) {
	_, mc, e := s.lookup(c)
	if e != nil {
		return 0, nil, e
	}
	_, p := findPool(mc, c.segs[9])
	if p == nil {
		return 0, nil, poolNotFound(mc.Group, mc.Name, c.segs[9])
	}
	return 200, agentPool(mc, p), nil
}

func (s *Server) putPool(c *call) (int, any, *armError) {
	_, mc, e := s.lookup(c)
	if e != nil {
		return 0, nil, e
	}
	name := c.segs[9]
	if st := mc.ProvisioningState; st == "Deleting" {
		return 0, nil, aerr(409, "OperationNotAllowed", "Operation is not allowed: managed cluster %s is being deleted.", mc.Name)
	}
	if e := busy(mc); e != nil {
		return 0, nil, e
	}
	if id := mc.PoolOps[strings.ToLower(name)]; id != "" {
		return 0, nil, aerr(409, "OperationNotAllowed", "Operation is not allowed because there's an in progress operation on agent pool %s. Please wait for it to finish before starting a new operation.", name)
	}
	var in acs.AgentPool
	if e := decode(c, &in); e != nil {
		return 0, nil, e
	}
	if in.Properties == nil {
		in.Properties = &acs.ManagedClusterAgentPoolProfileProperties{}
	}
	wp := poolFromResource(name, in.Properties)
	idx, prev := findPool(mc, name)
	if e := checkPool(wp, "properties", mc.Location, mc.KubernetesVersion, prev); e != nil {
		return 0, nil, e
	}
	np := poolState(wp)
	if e := nodeLimit(append(slices.Clone(mc.Pools), np), name); e != nil {
		return 0, nil, e
	}
	state, status := "Creating", 201
	if prev != nil {
		state, status = "Updating", 200
		switch {
		case prev.OrchestratorVersion != np.OrchestratorVersion:
			state = "Upgrading"
		case prev.Count != np.Count:
			state = "Scaling"
		}
	}
	np.ProvisioningState = state
	if idx >= 0 {
		mc.Pools[idx] = np
	} else {
		mc.Pools = append(mc.Pools, np)
	}
	op := s.startOp(c, mc.ID+"/agentPools/"+name, mc.Location, false)
	if mc.PoolOps == nil {
		mc.PoolOps = map[string]string{}
	}
	mc.PoolOps[strings.ToLower(name)] = op.ID
	mc.Due = time.Now().Add(s.Delay)
	mc.Gen++
	s.Log.Infof("azure emulator: agent pool %s of %s %s (%d nodes)", name, mc.Name, strings.ToLower(state), np.Count)
	return status, agentPool(mc, np), nil
}

func (s *Server) deletePool(c *call) (int, any, *armError) {
	_, mc, e := s.lookup(c)
	if e != nil {
		return 0, nil, e
	}
	name := c.segs[9]
	_, p := findPool(mc, name)
	if p == nil {
		return 204, nil, nil
	}
	if e := busy(mc); e != nil {
		return 0, nil, e
	}
	if mc.PoolOps[strings.ToLower(name)] != "" && p.ProvisioningState != "Deleting" {
		return 0, nil, aerr(409, "OperationNotAllowed", "Operation is not allowed because there's an in progress operation on agent pool %s.", name)
	}
	if p.Mode == string(acs.AgentPoolModeSystem) {
		systems := 0
		for _, x := range mc.Pools {
			if x.Mode == string(acs.AgentPoolModeSystem) && x.ProvisioningState != "Deleting" {
				systems++
			}
		}
		if systems <= 1 {
			return 0, nil, aerr(400, "OperationNotAllowed", "Agent pool %s is the last system pool of managed cluster %s: it cannot be deleted.", name, mc.Name)
		}
	}
	if p.ProvisioningState != "Deleting" {
		op := s.startOp(c, mc.ID+"/agentPools/"+name, mc.Location, true)
		p.ProvisioningState = "Deleting"
		if mc.PoolOps == nil {
			mc.PoolOps = map[string]string{}
		}
		if mc.Gone == nil {
			mc.Gone = map[string]bool{}
		}
		mc.PoolOps[strings.ToLower(name)] = op.ID
		mc.Gone[strings.ToLower(name)] = true
		mc.Due = time.Now().Add(s.Delay)
		mc.Gen++
	}
	return 202, nil, nil
}

// reconcile moves every operation whose time has come along, and saves if anything moved.
func (s *Server) reconcile(t time.Time) bool {
	changed := s.reconcileClusters(t)
	changed = s.reconcileGroups(t) || changed
	return s.expireOps(t) || changed
}

// backendSpec is what the control plane of mc should be (pools being deleted left out).
func (s *Server) backendSpec(key string, mc *managedCluster) ClusterSpec {
	cs := ClusterSpec{Name: LocalName(key), Cluster: mc.Name, Subscription: s.St.SubscriptionID,
		NodeResourceGroup: mc.NodeResourceGroup, Location: mc.Location}
	for _, p := range mc.Pools {
		if mc.Gone[strings.ToLower(p.Name)] {
			continue
		}
		pool := Pool{Name: p.Name, Count: p.Count, VMSize: p.VMSize, Mode: p.Mode, Spot: p.spot(), Labels: map[string]string{},
			Zones: sortedCopy(p.Zones)}
		for k, v := range p.Labels {
			pool.Labels[k] = v
		}
		pool.Taints = sortedCopy(p.Taints)
		cs.Pools = append(cs.Pools, pool)
	}
	return cs
}

func (s *Server) reconcileClusters(t time.Time) bool {
	changed := false
	for key, mc := range s.St.Clusters {
		key, mc := key, mc
		if mc.ProvisioningState == "Deleting" {
			if t.Before(mc.Due) {
				continue
			}
			if op := s.St.Operations[mc.Op]; op != nil && op.FailWith != nil {
				s.finishOp(mc.Op, op.FailWith)
				mc.ProvisioningState, mc.Op = "Failed", ""
				changed = true
				continue
			}
			s.Spawn("mc/"+key, func(ctx context.Context) func() {
				err := s.backend.Delete(ctx, LocalName(key))
				return func() {
					if err != nil {
						s.Log.Warnf("azure emulator: delete the control plane of %s: %v (retrying)", mc.Name, err)
						mc.Due = time.Now().Add(5 * time.Second)
						return
					}
					delete(s.St.Clusters, key)
					delete(s.ensured, key)
					delete(s.St.Groups, strings.ToLower(mc.NodeResourceGroup))
					s.finishOp(mc.Op, nil)
					s.Log.Infof("azure emulator: managed cluster %s deleted", mc.Name)
				}
			})
			continue
		}
		if (mc.Synced < mc.Gen || !s.ensured[key]) && !t.Before(s.retryAt[key]) {
			gen, spec := mc.Gen, s.backendSpec(key, mc)
			s.Spawn("mc/"+key, func(ctx context.Context) func() {
				err := s.backend.Ensure(ctx, spec)
				return func() {
					if s.St.Clusters[key] != mc {
						return
					}
					if err != nil {
						s.Log.Warnf("azure emulator: control plane of %s: %v (retrying)", mc.Name, err)
						s.retryAt[key] = time.Now().Add(5 * time.Second)
						return
					}
					s.ensured[key] = true
					if gen > mc.Synced {
						mc.Synced = gen
					}
				}
			})
		}
		if (mc.Op == "" && len(mc.PoolOps) == 0) || mc.Synced < mc.Gen || !s.ensured[key] || t.Before(mc.Due) {
			continue
		}
		changed = true
		if mc.Op != "" {
			op := s.St.Operations[mc.Op]
			state := "Succeeded"
			if op != nil && op.FailWith != nil {
				state = "Failed"
				s.finishOp(mc.Op, op.FailWith)
			} else {
				s.finishOp(mc.Op, nil)
			}
			mc.ProvisioningState = state
			for _, p := range mc.Pools {
				p.ProvisioningState = state
			}
			mc.Op = ""
			s.Log.Infof("azure emulator: managed cluster %s %s", mc.Name, state)
		}
		for pool, id := range mc.PoolOps {
			op := s.St.Operations[id]
			var fail *armError
			if op != nil {
				fail = op.FailWith
			}
			s.finishOp(id, fail)
			i, p := findPool(mc, pool)
			if p == nil {
				continue
			}
			switch {
			case fail != nil:
				p.ProvisioningState = "Failed"
			case mc.Gone[pool]:
				mc.Pools = slices.Delete(mc.Pools, i, i+1)
			default:
				p.ProvisioningState = "Succeeded"
			}
		}
		for pool := range mc.Gone {
			if _, p := findPool(mc, pool); p == nil || p.ProvisioningState != "Deleting" {
				delete(mc.Gone, pool)
			}
		}
		mc.PoolOps = nil
	}
	return changed
}

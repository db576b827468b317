package azure

import (
	"encoding/json"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	acs "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
)

// AKS's wire forms: the ARM resources (armcontainerservice's types) the routes answer with, made
// from the state's types (aks_state.go), and the requests' forms read into them.

// clusterType is the resource type ARM gives a managed cluster.
const clusterType = "Microsoft.ContainerService/ManagedClusters"

// opt is s, or nil when empty (ARM leaves the property out).
func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optOf is s as T, or nil when empty.
func optOf[T ~string](s string) *T {
	if s == "" {
		return nil
	}
	v := T(s)
	return &v
}

func strOf[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}

func tagsWire(m map[string]string) map[string]*string {
	if m == nil {
		return nil
	}
	out := make(map[string]*string, len(m))
	for k, v := range m {
		out[k] = to.Ptr(v)
	}
	return out
}

func tagsState(m map[string]*string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = str(v)
	}
	return out
}

func strsWire(ss []string) []*string {
	if ss == nil {
		return nil
	}
	out := make([]*string, len(ss))
	for i := range ss {
		out[i] = to.Ptr(ss[i])
	}
	return out
}

func strsState(ps []*string) []string {
	if ps == nil {
		return nil
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = str(p)
	}
	return out
}

func intWire(p *int) *int32 {
	if p == nil {
		return nil
	}
	return to.Ptr(int32(*p))
}

func intState(p *int32) *int {
	if p == nil {
		return nil
	}
	return to.Ptr(int(*p))
}

func powerWire(code string) *acs.PowerState {
	if code == "" {
		return nil
	}
	return &acs.PowerState{Code: to.Ptr(acs.Code(code))}
}

// wire is the cluster as ARM answers it.
func (mc *managedCluster) wire() *acs.ManagedCluster {
	m := &acs.ManagedCluster{ID: to.Ptr(mc.ID), Name: to.Ptr(mc.Name), Type: to.Ptr(clusterType), Location: to.Ptr(mc.Location),
		Tags: tagsWire(mc.Tags), SKU: &acs.ManagedClusterSKU{Name: optOf[acs.ManagedClusterSKUName](mc.SKU.Name), Tier: optOf[acs.ManagedClusterSKUTier](mc.SKU.Tier)}}
	if mc.Identity != nil {
		m.Identity = &acs.ManagedClusterIdentity{Type: optOf[acs.ResourceIdentityType](mc.Identity.Type), PrincipalID: opt(mc.Identity.PrincipalID), TenantID: opt(mc.Identity.TenantID)}
	}
	p := &acs.ManagedClusterProperties{DNSPrefix: to.Ptr(mc.DNSPrefix), NodeResourceGroup: to.Ptr(mc.NodeResourceGroup), Fqdn: to.Ptr(mc.FQDN),
		EnableRBAC: to.Ptr(mc.EnableRBAC), MaxAgentPools: to.Ptr(int32(mc.MaxAgentPools)), ResourceUID: to.Ptr(mc.ResourceUID),
		KubernetesVersion: to.Ptr(mc.KubernetesVersion), CurrentKubernetesVersion: to.Ptr(mc.CurrentVersion),
		NetworkProfile: networkWire(mc.Network), PowerState: powerWire(mc.PowerState), ProvisioningState: to.Ptr(mc.ProvisioningState)}
	for _, pl := range mc.Pools {
		p.AgentPoolProfiles = append(p.AgentPoolProfiles, poolWire(pl))
	}
	m.Properties = p
	return m
}

func identityState(in *acs.ManagedClusterIdentity) *aksIdentity {
	return &aksIdentity{Type: strOf(in.Type), PrincipalID: str(in.PrincipalID), TenantID: str(in.TenantID)}
}

func networkWire(n aksNetwork) *acs.NetworkProfile {
	return &acs.NetworkProfile{NetworkPlugin: optOf[acs.NetworkPlugin](n.Plugin), NetworkPluginMode: optOf[acs.NetworkPluginMode](n.PluginMode),
		NetworkPolicy: optOf[acs.NetworkPolicy](n.Policy), PodCidr: opt(n.PodCIDR), ServiceCidr: opt(n.ServiceCIDR), DNSServiceIP: opt(n.DNSServiceIP),
		LoadBalancerSKU: optOf[acs.LoadBalancerSKU](n.LoadBalancerSKU), OutboundType: optOf[acs.OutboundType](n.OutboundType)}
}

func networkState(n *acs.NetworkProfile) aksNetwork {
	return aksNetwork{Plugin: strOf(n.NetworkPlugin), PluginMode: strOf(n.NetworkPluginMode), Policy: strOf(n.NetworkPolicy),
		PodCIDR: str(n.PodCidr), ServiceCIDR: str(n.ServiceCidr), DNSServiceIP: str(n.DNSServiceIP),
		LoadBalancerSKU: strOf(n.LoadBalancerSKU), OutboundType: strOf(n.OutboundType)}
}

// poolWire is the pool as a cluster's agent pool profile.
func poolWire(p *aksPool) *acs.ManagedClusterAgentPoolProfile {
	w := &acs.ManagedClusterAgentPoolProfile{Name: to.Ptr(p.Name), Mode: optOf[acs.AgentPoolMode](p.Mode), Type: optOf[acs.AgentPoolType](p.Type),
		OSType: optOf[acs.OSType](p.OSType), VMSize: opt(p.VMSize), Count: to.Ptr(int32(p.Count)), MinCount: intWire(p.MinCount), MaxCount: intWire(p.MaxCount),
		AvailabilityZones: strsWire(p.Zones), OrchestratorVersion: opt(p.OrchestratorVersion), CurrentOrchestratorVersion: opt(p.CurrentVersion),
		NodeLabels: tagsWire(p.Labels), NodeTaints: strsWire(p.Taints), ScaleSetPriority: optOf[acs.ScaleSetPriority](p.Priority),
		ScaleSetEvictionPolicy: optOf[acs.ScaleSetEvictionPolicy](p.EvictionPolicy), ProvisioningState: opt(p.ProvisioningState), PowerState: powerWire(p.PowerState)}
	if p.AutoScaling != nil {
		w.EnableAutoScaling = to.Ptr(*p.AutoScaling)
	}
	if p.SpotMaxPrice != nil {
		w.SpotMaxPrice = to.Ptr(*p.SpotMaxPrice)
	}
	return w
}

// poolState is the pool a checked agent pool profile (checkPool) describes.
func poolState(w *acs.ManagedClusterAgentPoolProfile) *aksPool {
	p := &aksPool{Name: str(w.Name), Mode: strOf(w.Mode), Type: strOf(w.Type), OSType: strOf(w.OSType), VMSize: str(w.VMSize), Count: int(i32(w.Count)),
		MinCount: intState(w.MinCount), MaxCount: intState(w.MaxCount), Zones: strsState(w.AvailabilityZones),
		OrchestratorVersion: str(w.OrchestratorVersion), CurrentVersion: str(w.CurrentOrchestratorVersion), Labels: tagsState(w.NodeLabels),
		Taints: strsState(w.NodeTaints), Priority: strOf(w.ScaleSetPriority), EvictionPolicy: strOf(w.ScaleSetEvictionPolicy),
		ProvisioningState: str(w.ProvisioningState)}
	if w.PowerState != nil {
		p.PowerState = strOf(w.PowerState.Code)
	}
	if w.EnableAutoScaling != nil {
		p.AutoScaling = to.Ptr(*w.EnableAutoScaling)
	}
	if w.SpotMaxPrice != nil {
		p.SpotMaxPrice = to.Ptr(*w.SpotMaxPrice)
	}
	return p
}

// poolFromResource reads an agentPools resource's properties as a profile named name.
func poolFromResource(name string, props *acs.ManagedClusterAgentPoolProfileProperties) *acs.ManagedClusterAgentPoolProfile {
	b, _ := json.Marshal(props)
	var np acs.ManagedClusterAgentPoolProfile
	_ = json.Unmarshal(b, &np)
	np.Name = &name
	return &np
}

// agentPool is a cluster's pool as the agentPools resource.
func agentPool(mc *managedCluster, p *aksPool) *acs.AgentPool {
	b, _ := json.Marshal(poolWire(p))
	var props acs.ManagedClusterAgentPoolProfileProperties
	_ = json.Unmarshal(b, &props)
	return &acs.AgentPool{ID: to.Ptr(mc.ID + "/agentPools/" + p.Name), Name: to.Ptr(p.Name),
		Type: to.Ptr("Microsoft.ContainerService/managedClusters/agentPools"), Properties: &props}
}

// UnmarshalJSON reads a cluster saved in nuv's form or, from a state file written while clusters
// were kept in ARM's form, under "mc".
func (mc *managedCluster) UnmarshalJSON(b []byte) error {
	type plain managedCluster
	if err := json.Unmarshal(b, (*plain)(mc)); err != nil {
		return err
	}
	var legacy struct {
		MC *acs.ManagedCluster `json:"mc"`
	}
	if err := json.Unmarshal(b, &legacy); err != nil || legacy.MC == nil {
		return err
	}
	m := legacy.MC
	mc.ID, mc.Name, mc.Location, mc.Tags = str(m.ID), str(m.Name), str(m.Location), tagsState(m.Tags)
	if m.SKU != nil {
		mc.SKU = aksSKU{Name: strOf(m.SKU.Name), Tier: strOf(m.SKU.Tier)}
	}
	if m.Identity != nil {
		mc.Identity = identityState(m.Identity)
	}
	if p := m.Properties; p != nil {
		mc.KubernetesVersion, mc.CurrentVersion = str(p.KubernetesVersion), str(p.CurrentKubernetesVersion)
		mc.DNSPrefix, mc.NodeResourceGroup, mc.FQDN, mc.ResourceUID = str(p.DNSPrefix), str(p.NodeResourceGroup), str(p.Fqdn), str(p.ResourceUID)
		mc.EnableRBAC, mc.MaxAgentPools = p.EnableRBAC != nil && *p.EnableRBAC, int(i32(p.MaxAgentPools))
		mc.ProvisioningState = str(p.ProvisioningState)
		if p.PowerState != nil {
			mc.PowerState = strOf(p.PowerState.Code)
		}
		if p.NetworkProfile != nil {
			mc.Network = networkState(p.NetworkProfile)
		}
		mc.Pools = nil
		for _, w := range p.AgentPoolProfiles {
			mc.Pools = append(mc.Pools, poolState(w))
		}
	}
	return nil
}

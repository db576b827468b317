package azure

import "time"

// AKS's state: what the emulator keeps of managed clusters and their agent pools, in its own
// types. The routes answer with ARM's forms (aks_wire.go), made from these by wire().

// managedCluster is a managed cluster as the emulator keeps it: its settings and status, its
// agent pools, the operation in progress and how far its control plane (a local cluster) has come.
type managedCluster struct {
	// Group is the resource group the cluster is in (as it was named at creation).
	Group    string            `json:"group"`
	ID       string            `json:"id"`
	Name     string            `json:"name"`
	Location string            `json:"location"`
	Tags     map[string]string `json:"tags"`
	SKU      aksSKU            `json:"sku"`
	Identity *aksIdentity      `json:"identity,omitempty"`
	// KubernetesVersion is the version asked for (1.35 or 1.35.2); CurrentVersion the patch
	// version it resolved to.
	KubernetesVersion string `json:"kubernetesVersion"`
	CurrentVersion    string `json:"currentVersion"`
	DNSPrefix         string `json:"dnsPrefix"`
	NodeResourceGroup string `json:"nodeResourceGroup"`
	FQDN              string `json:"fqdn"`
	ResourceUID       string `json:"resourceUid"`
	EnableRBAC        bool   `json:"enableRbac"`
	MaxAgentPools     int    `json:"maxAgentPools"`
	// ProvisioningState is Creating, Updating, Upgrading, Succeeded, Failed or Deleting.
	ProvisioningState string `json:"provisioningState"`
	// PowerState is Running or Stopped.
	PowerState string     `json:"powerState"`
	Network    aksNetwork `json:"network"`
	Pools      []*aksPool `json:"pools"`

	// Due is when the operation in progress may finish (at the earliest).
	Due time.Time `json:"due,omitempty"`
	// Op is the operation in progress (or the last one).
	Op string `json:"op,omitempty"`
	// Gen counts the changes that the control plane must follow; Synced is the last one it has.
	Gen    int `json:"gen"`
	Synced int `json:"synced"`
	// Pools in transition (pool name -> operation id), besides the cluster's own operation.
	PoolOps map[string]string `json:"poolOps,omitempty"`
	// Gone lists pools being deleted (removed once their operation is due).
	Gone map[string]bool `json:"gone,omitempty"`
}

// aksSKU is a cluster's SKU: its name (Base) and tier (Free, Standard, Premium).
type aksSKU struct {
	Name string `json:"name,omitempty"`
	Tier string `json:"tier,omitempty"`
}

// aksIdentity is a cluster's managed identity; PrincipalID and TenantID are made for a
// system-assigned one.
type aksIdentity struct {
	Type        string `json:"type,omitempty"`
	PrincipalID string `json:"principalId,omitempty"`
	TenantID    string `json:"tenantId,omitempty"`
}

// aksNetwork is a cluster's network profile.
type aksNetwork struct {
	// Plugin is azure, kubenet or none; PluginMode overlay (or empty).
	Plugin          string `json:"plugin"`
	PluginMode      string `json:"pluginMode,omitempty"`
	Policy          string `json:"policy,omitempty"`
	PodCIDR         string `json:"podCidr,omitempty"`
	ServiceCIDR     string `json:"serviceCidr,omitempty"`
	DNSServiceIP    string `json:"dnsServiceIp,omitempty"`
	LoadBalancerSKU string `json:"loadBalancerSku,omitempty"`
	OutboundType    string `json:"outboundType,omitempty"`
}

// aksPool is an agent pool as the emulator keeps it.
type aksPool struct {
	Name string `json:"name"`
	// Mode is System or User; Type VirtualMachineScaleSets; OSType Linux.
	Mode   string `json:"mode"`
	Type   string `json:"type,omitempty"`
	OSType string `json:"osType,omitempty"`
	VMSize string `json:"vmSize"`
	Count  int    `json:"count"`
	// AutoScaling is whether the pool scales between MinCount and MaxCount (nil: not said).
	AutoScaling *bool    `json:"autoScaling,omitempty"`
	MinCount    *int     `json:"minCount,omitempty"`
	MaxCount    *int     `json:"maxCount,omitempty"`
	Zones       []string `json:"zones"`
	// OrchestratorVersion is the version asked for; CurrentVersion the patch version it resolved to.
	OrchestratorVersion string            `json:"orchestratorVersion"`
	CurrentVersion      string            `json:"currentVersion"`
	Labels              map[string]string `json:"labels"`
	// Taints are key=value:Effect.
	Taints []string `json:"taints"`
	// Priority is Regular or Spot (empty: not said); EvictionPolicy and SpotMaxPrice go with Spot.
	Priority       string   `json:"priority,omitempty"`
	EvictionPolicy string   `json:"evictionPolicy,omitempty"`
	SpotMaxPrice   *float32 `json:"spotMaxPrice,omitempty"`
	// ProvisioningState is Creating, Updating, Scaling, Upgrading, Succeeded, Failed or Deleting.
	ProvisioningState string `json:"provisioningState"`
	// PowerState is Running or Stopped.
	PowerState string `json:"powerState"`
}

// spot is whether the pool runs on Spot virtual machines.
func (p *aksPool) spot() bool { return p.Priority == "Spot" }

// clonePool is a deep copy of p.
func clonePool(p *aksPool) *aksPool { return clone(p) }

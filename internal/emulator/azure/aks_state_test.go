package azure

import (
	"encoding/json"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
)

// A cluster survives state.json in nuv's form, and a state file holding it in ARM's form (as the
// emulator wrote it before) reads the same.
func TestClusterStateRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		mc   *managedCluster
	}{
		{"spot and autoscaling pools", &managedCluster{Group: "rg", ID: "/subscriptions/s/resourcegroups/rg/providers/Microsoft.ContainerService/managedClusters/mc",
			Name: "mc", Location: "eastus", Tags: map[string]string{"a": "b"}, SKU: aksSKU{Name: "Base", Tier: "Standard"},
			Identity:          &aksIdentity{Type: "SystemAssigned", PrincipalID: "p", TenantID: "t"},
			KubernetesVersion: "1.34", CurrentVersion: "1.34.8", DNSPrefix: "mc-rg", NodeResourceGroup: "MC_rg_mc_eastus", FQDN: "mc-rg-1.hcp.eastus.azmk8s.io",
			ResourceUID: "u", EnableRBAC: true, MaxAgentPools: 100, ProvisioningState: "Succeeded", PowerState: "Running",
			Network: aksNetwork{Plugin: "azure", PluginMode: "overlay", PodCIDR: "10.244.0.0/16", ServiceCIDR: "10.0.0.0/16", DNSServiceIP: "10.0.0.10", LoadBalancerSKU: "standard", OutboundType: "loadBalancer"},
			Pools: []*aksPool{
				{Name: "sys", Mode: "System", Type: "VirtualMachineScaleSets", OSType: "Linux", VMSize: "Standard_D2s_v3", Count: 2, AutoScaling: to.Ptr(false),
					Zones: []string{"2", "1"}, OrchestratorVersion: "1.34", CurrentVersion: "1.34.8", Labels: map[string]string{}, ProvisioningState: "Succeeded", PowerState: "Running"},
				{Name: "spot", Mode: "User", VMSize: "Standard_D4s_v3", Count: 1, AutoScaling: to.Ptr(true), MinCount: to.Ptr(0), MaxCount: to.Ptr(3),
					OrchestratorVersion: "1.34", CurrentVersion: "1.34.8", Taints: []string{"a=b:NoSchedule"}, Priority: "Spot", EvictionPolicy: "Delete",
					SpotMaxPrice: to.Ptr[float32](-1), ProvisioningState: "Deleting", PowerState: "Running"},
			},
			Op: "op1", Gen: 3, Synced: 2, PoolOps: map[string]string{"spot": "op2"}, Gone: map[string]bool{"spot": true}}},
		{"no identity, no tags", &managedCluster{Group: "rg", ID: "id", Name: "mc", Location: "westeurope", SKU: aksSKU{Name: "Base", Tier: "Free"},
			KubernetesVersion: "1.35", CurrentVersion: "1.35.2", ProvisioningState: "Creating", PowerState: "Running", Network: aksNetwork{Plugin: "kubenet"},
			Pools: []*aksPool{{Name: "sys", Mode: "System", VMSize: "Standard_DS2_v2", Count: 1, OrchestratorVersion: "1.35", CurrentVersion: "1.35.2", ProvisioningState: "Creating"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, _ := json.Marshal(tc.mc.wire())
			b, err := json.Marshal(tc.mc)
			if err != nil {
				t.Fatal(err)
			}
			var again managedCluster
			if err := json.Unmarshal(b, &again); err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(again.wire()); string(got) != string(want) {
				t.Errorf("saved and read:\n%s\nwant\n%s", got, want)
			}
			if again.Op != tc.mc.Op || again.Gen != tc.mc.Gen || again.Synced != tc.mc.Synced || len(again.PoolOps) != len(tc.mc.PoolOps) || len(again.Gone) != len(tc.mc.Gone) {
				t.Errorf("bookkeeping lost: %+v", again)
			}
			legacy, _ := json.Marshal(map[string]any{"group": tc.mc.Group, "mc": json.RawMessage(want), "op": tc.mc.Op, "gen": tc.mc.Gen, "synced": tc.mc.Synced})
			var old managedCluster
			if err := json.Unmarshal(legacy, &old); err != nil {
				t.Fatalf("ARM-form state: %v", err)
			}
			if got, _ := json.Marshal(old.wire()); string(got) != string(want) {
				t.Errorf("ARM-form state reads as:\n%s\nwant\n%s", got, want)
			}
			if old.Group != "rg" || old.Op != tc.mc.Op || old.Gen != tc.mc.Gen {
				t.Errorf("ARM-form bookkeeping lost: %+v", old)
			}
		})
	}
}

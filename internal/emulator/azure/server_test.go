package azure

import (
	"context"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	acs "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
)

func TestResourceGroupsThroughSDK(t *testing.T) {
	e := startEmulator(t, "", 0)
	ctx := context.Background()
	_, err := e.Groups.Get(ctx, "rg1", nil)
	wantCode(t, err, "ResourceGroupNotFound")
	r, err := e.Groups.CreateOrUpdate(ctx, "rg1", armresources.ResourceGroup{Location: to.Ptr("East US"), Tags: map[string]*string{"nuv.dev/cluster": to.Ptr("a")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *r.Location != "eastus" || *r.Properties.ProvisioningState != "Succeeded" || *r.Tags["nuv.dev/cluster"] != "a" {
		t.Fatalf("created group %+v", r)
	}
	_, err = e.Groups.CreateOrUpdate(ctx, "rg2", armresources.ResourceGroup{Location: to.Ptr("atlantis")}, nil)
	wantCode(t, err, "LocationNotAvailableForResourceGroup")
	poller, err := e.Groups.BeginDelete(ctx, "rg1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := poller.PollUntilDone(ctx, nil); err != nil {
		t.Fatal(err)
	}
	_, err = e.Groups.Get(ctx, "rg1", nil)
	wantCode(t, err, "ResourceGroupNotFound")
}

func TestClusterErrorsThroughSDK(t *testing.T) {
	e := startEmulator(t, "", 0)
	ctx := context.Background()
	mc := func(loc, version, size string) acs.ManagedCluster {
		return acs.ManagedCluster{Location: to.Ptr(loc), Properties: &acs.ManagedClusterProperties{KubernetesVersion: to.Ptr(version),
			AgentPoolProfiles: []*acs.ManagedClusterAgentPoolProfile{{Name: to.Ptr("system"), Mode: to.Ptr(acs.AgentPoolModeSystem), Count: to.Ptr[int32](1), VMSize: to.Ptr(size)}}}}
	}
	_, err := e.Clusters.BeginCreateOrUpdate(ctx, "nope", "c", mc("eastus", "1.35", "Standard_D2s_v3"), nil)
	wantCode(t, err, "ResourceGroupNotFound")
	if _, err := e.Groups.CreateOrUpdate(ctx, "rg", armresources.ResourceGroup{Location: to.Ptr("eastus")}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, loc, version, size, code, target string
	}{
		{"version", "eastus", "1.20", "Standard_D2s_v3", "InvalidParameter", "properties.kubernetesVersion"},
		{"size", "eastus", "1.35", "Standard_Nope", "InvalidParameter", "vmSize"},
		{"size not in region", "westus", "1.35", "Standard_NC6s_v3", "InvalidParameter", "vmSize"},
		{"location", "mars", "1.35", "Standard_D2s_v3", "LocationNotAvailableForResourceType", ""},
	} {
		_, err := e.Clusters.BeginCreateOrUpdate(ctx, "rg", "c", mc(tc.loc, tc.version, tc.size), nil)
		wantCode(t, err, tc.code)
		if !strings.Contains(err.Error(), tc.target) {
			t.Errorf("%s: %v does not name %s", tc.name, err, tc.target)
		}
	}
	_, err = e.Clusters.Get(ctx, "rg", "c", nil)
	wantCode(t, err, "ResourceNotFound")
}

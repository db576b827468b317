package azure

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	acs "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func pollDone[T any](t *testing.T, p *runtime.Poller[T]) T {
	t.Helper()
	r, err := p.PollUntilDone(context.Background(), &runtime.PollUntilDoneOptions{Frequency: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// nodesOf returns "pool:mode:vmSize" of each node of the cluster a kubeconfig reaches, checking
// AKS's node markers on each.
func nodesOf(t *testing.T, kubeconfig []byte, nodeRG string) []string {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	l, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range l.Items {
		if n.Labels["kubernetes.azure.com/cluster"] != nodeRG || !strings.HasPrefix(n.Spec.ProviderID, "azure:///subscriptions/") ||
			!strings.Contains(n.Spec.ProviderID, "/virtualMachineScaleSets/aks-"+n.Labels["kubernetes.azure.com/agentpool"]+"-vmss/") {
			t.Errorf("node %s is not marked as AKS marks it: labels %v, providerID %s", n.Name, n.Labels, n.Spec.ProviderID)
		}
		out = append(out, n.Labels["kubernetes.azure.com/agentpool"]+":"+n.Labels["kubernetes.azure.com/mode"]+":"+n.Labels["node.kubernetes.io/instance-type"])
	}
	slices.Sort(out)
	return out
}

// TestIntegrationManagedClusterThroughSDK drives the emulator with the SDK alone: a managed
// cluster created as a long-running operation (a second PUT meanwhile refused, the emulator
// restarted in the middle), its user kubeconfig reaching a real control plane whose nodes are its
// pools, a pool added, scaled and deleted, and the resource group deleted with the cluster, its
// node resource group and its control plane.
func TestIntegrationManagedClusterThroughSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a local control plane behind the managed cluster; skipped under -short")
	}
	dir := t.TempDir()
	e := startEmulator(t, dir, 500*time.Millisecond)
	ctx := context.Background()
	t.Cleanup(func() { _ = NewLocalBackend(dir, nil).Delete(context.Background(), LocalName(clusterKey("rg", "mc"))) })
	if _, err := e.Groups.CreateOrUpdate(ctx, "rg", armresources.ResourceGroup{Location: to.Ptr("eastus")}, nil); err != nil {
		t.Fatal(err)
	}
	mc := acs.ManagedCluster{Location: to.Ptr("eastus"), Properties: &acs.ManagedClusterProperties{KubernetesVersion: to.Ptr("1.35"),
		AgentPoolProfiles: []*acs.ManagedClusterAgentPoolProfile{{Name: to.Ptr("sys"), Mode: to.Ptr(acs.AgentPoolModeSystem), Count: to.Ptr[int32](2), VMSize: to.Ptr("Standard_D2s_v3")}}}}
	poller, err := e.Clusters.BeginCreateOrUpdate(ctx, "rg", "mc", mc, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Clusters.BeginCreateOrUpdate(ctx, "rg", "mc", mc, nil)
	wantCode(t, err, "OperationNotAllowed")
	got, err := e.Clusters.Get(ctx, "rg", "mc", nil)
	if err != nil || *got.Properties.ProvisioningState != "Creating" {
		t.Fatalf("cluster being created: %v %v", got.Properties.ProvisioningState, err)
	}
	token, err := poller.ResumeToken()
	if err != nil {
		t.Fatal(err)
	}
	// Restart the emulator in the middle of the operation: it finishes after the restart.
	e.Stop()
	e = startEmulatorAt(t, dir, 500*time.Millisecond, e.Addr)
	poller, err = e.Clusters.BeginCreateOrUpdate(ctx, "rg", "mc", mc, &acs.ManagedClustersClientBeginCreateOrUpdateOptions{ResumeToken: token})
	if err != nil {
		t.Fatal(err)
	}
	created := pollDone(t, poller)
	if *created.Properties.ProvisioningState != "Succeeded" || *created.Properties.CurrentKubernetesVersion != "1.35.5" {
		t.Fatalf("created: %s %s", *created.Properties.ProvisioningState, *created.Properties.CurrentKubernetesVersion)
	}
	nodeRG := *created.Properties.NodeResourceGroup
	if _, err := e.Groups.Get(ctx, nodeRG, nil); err != nil {
		t.Fatalf("node resource group %s: %v", nodeRG, err)
	}
	creds, err := e.Clusters.ListClusterUserCredentials(ctx, "rg", "mc", nil)
	if err != nil {
		t.Fatal(err)
	}
	kc := creds.Kubeconfigs[0].Value
	if got := strings.Join(nodesOf(t, kc, nodeRG), " "); got != "sys:system:Standard_D2s_v3 sys:system:Standard_D2s_v3" {
		t.Fatalf("nodes: %s", got)
	}

	// A user pool: added, scaled, deleted; the last system pool cannot go.
	pool := acs.AgentPool{Properties: &acs.ManagedClusterAgentPoolProfileProperties{Count: to.Ptr[int32](1), VMSize: to.Ptr("Standard_D4s_v3"), Mode: to.Ptr(acs.AgentPoolModeUser),
		ScaleSetPriority: to.Ptr(acs.ScaleSetPrioritySpot), NodeLabels: map[string]*string{"tier": to.Ptr("app")}}}
	pp, err := e.Pools.BeginCreateOrUpdate(ctx, "rg", "mc", "user", pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	pollDone(t, pp)
	pool.Properties.Count = to.Ptr[int32](3)
	pp, err = e.Pools.BeginCreateOrUpdate(ctx, "rg", "mc", "user", pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := pollDone(t, pp); *r.Properties.Count != 3 || *r.Properties.ProvisioningState != "Succeeded" {
		t.Fatalf("scaled pool: %d %s", *r.Properties.Count, *r.Properties.ProvisioningState)
	}
	if got := strings.Join(nodesOf(t, kc, nodeRG), " "); got != "sys:system:Standard_D2s_v3 sys:system:Standard_D2s_v3 user:user:Standard_D4s_v3 user:user:Standard_D4s_v3 user:user:Standard_D4s_v3" {
		t.Fatalf("nodes after the scale: %s", got)
	}
	_, err = e.Pools.BeginDelete(ctx, "rg", "mc", "sys", nil)
	wantCode(t, err, "OperationNotAllowed")
	pool.Properties.VMSize = to.Ptr("Standard_D8s_v3")
	_, err = e.Pools.BeginCreateOrUpdate(ctx, "rg", "mc", "user", pool, nil)
	wantCode(t, err, "PropertyChangeNotAllowed")
	dp, err := e.Pools.BeginDelete(ctx, "rg", "mc", "user", nil)
	if err != nil {
		t.Fatal(err)
	}
	pollDone(t, dp)
	_, err = e.Pools.Get(ctx, "rg", "mc", "user", nil)
	wantCode(t, err, "ResourceNotFound")
	if got := strings.Join(nodesOf(t, kc, nodeRG), " "); got != "sys:system:Standard_D2s_v3 sys:system:Standard_D2s_v3" {
		t.Fatalf("nodes after the pool's deletion: %s", got)
	}

	// Deleting the resource group deletes the cluster, its node resource group and control plane.
	gp, err := e.Groups.BeginDelete(ctx, "rg", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gp.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"rg", nodeRG} {
		_, err = e.Groups.Get(ctx, g, nil)
		wantCode(t, err, "ResourceGroupNotFound")
	}
	if names, _ := NewLocalBackend(dir, nil).Provider.Names(); len(names) > 0 {
		t.Fatalf("control planes left: %v", names)
	}
}

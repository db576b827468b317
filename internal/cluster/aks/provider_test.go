package aks_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	acs "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/aks"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

func newEngine(t *testing.T, env map[string]string) (*engine.Engine, *aks.Provider) {
	p := &aks.Provider{Project: t.TempDir(), Getenv: func(k string) string { return env[k] }, Poll: 100 * time.Millisecond}
	return &engine.Engine{Providers: map[string]cluster.Provider{"aks": p}, Store: state.Dir{Path: filepath.Join(t.TempDir(), "state")}}, p
}

// Credentials that do not work stop the plan and the apply before anything is made, with one
// message naming each source tried.
func TestCredentialsRefusedBeforeAnything(t *testing.T) {
	env, srv, url := serveEmulator(t)
	good := env["AZURE_CLIENT_SECRET"]
	for _, tc := range []struct {
		name  string
		set   func(map[string]string)
		fault string
		want  []string
	}{
		{"none", func(m map[string]string) { delete(m, "AZURE_CLIENT_SECRET") }, "",
			[]string{"no usable Azure credentials", "environment: AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET are not all set", "workload identity", "Azure CLI"}},
		{"wrong secret", func(m map[string]string) { m["AZURE_CLIENT_SECRET"] = "wrong" }, "",
			[]string{"no usable Azure credentials", "environment (AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET)", "AADSTS7000215"}},
		{"expired secret", func(m map[string]string) { m["AZURE_CLIENT_SECRET"] = good }, `{"operation":"Token","kind":"expired-secret"}`,
			[]string{"no usable Azure credentials", "AADSTS7000222", "expired"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]string{}
			for k, v := range env {
				m[k] = v
			}
			tc.set(m)
			if tc.fault != "" {
				postFault(t, env, url, tc.fault)
			}
			e, _ := newEngine(t, m)
			for _, do := range []func() error{
				func() error {
					_, err := e.Plan(context.Background(), decode(t, aksSpec(1, "1.35", "Standard_D4s_v3")))
					return err
				},
				func() error {
					_, err := e.Apply(context.Background(), decode(t, aksSpec(1, "1.35", "Standard_D4s_v3")), engine.ApplyOptions{})
					return err
				},
			} {
				err := do()
				for _, w := range tc.want {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Fatalf("error %v does not say %q", err, w)
					}
				}
			}
			_ = srv
		})
	}
	// Nothing was made.
	clearFaults(t, env, url)
	e, _ := newEngine(t, env)
	plan, err := e.Plan(context.Background(), decode(t, aksSpec(1, "1.35", "Standard_D4s_v3")))
	if err != nil || plan.Count(cluster.Create) != 4 {
		t.Fatalf("after refused credentials: %v %v", plan, err)
	}
}

// A resource group of the same name that nuv did not make is a conflict: apply refuses and
// leaves it alone.
func TestForeignResourceGroupLeftAlone(t *testing.T) {
	env, _, _ := serveEmulator(t)
	e, p := newEngine(t, env)
	_ = p
	groups := groupsClient(t, env)
	if _, err := groups.CreateOrUpdate(context.Background(), "az1-rg", armresources.ResourceGroup{Location: to.Ptr("eastus"), Tags: map[string]*string{"owner": to.Ptr("someone")}}, nil); err != nil {
		t.Fatal(err)
	}
	c := decode(t, aksSpec(1, "1.35", "Standard_D4s_v3"))
	plan, err := e.Plan(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if got := planText(plan); !strings.Contains(got, "! conflict resource-group/az1-rg") {
		t.Fatalf("plan with a foreign group:\n%s", got)
	}
	if _, err := e.Apply(context.Background(), c, engine.ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "nuv did not make them") {
		t.Fatalf("apply over a foreign group: %v", err)
	}
	g, err := groups.Get(context.Background(), "az1-rg", nil)
	if err != nil || *g.Tags["owner"] != "someone" || g.Tags["nuv.dev/cluster"] != nil {
		t.Fatalf("the foreign group was touched: %+v %v", g, err)
	}
	if _, err := os.Stat(filepath.Join(e.Providers["aks"].(*aks.Provider).Project, "clusters")); err == nil {
		t.Fatal("a kubeconfig directory was made")
	}
}

// The example spec the repository ships is valid and writes its Terraform.
func TestExampleSpec(t *testing.T) {
	cs, err := spec.ReadFile(filepath.Join("..", "..", "..", "clusters", "specs", "aks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := &aks.Provider{Project: t.TempDir(), Getenv: func(k string) string {
		return map[string]string{"AZURE_SUBSCRIPTION_ID": "00000000-1111-2222-3333-444444444444"}[k]
	}}
	for _, c := range cs {
		if errs := p.Validate(c); len(errs) > 0 {
			t.Fatalf("%s: %v", c.Source, errs)
		}
		d, err := p.Desired(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Terraform(c, d); err != nil {
			t.Fatal(err)
		}
	}
}

// Validate reports every problem of the aks section and the spec with its field path.
func TestValidate(t *testing.T) {
	p := &aks.Provider{Getenv: func(string) string { return "" }}
	c := decode(t, `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: bad}
spec:
  provider: aks
  zones: [a]
  controlPlane: {count: 3}
  nodeGroups:
  - {name: system-pool, count: 1, spot: true}
  - {name: x, min: 1}
  aks: {networkPlugin: calico, skuTier: Gold, color: blue, existingResourceGroup: "yes"}
`)
	var got []string
	for _, e := range p.Validate(c) {
		got = append(got, e.Path)
	}
	want := []string{"spec.aks.color", "spec.aks.existingResourceGroup", "spec.aks.networkPlugin", "spec.aks.skuTier", "spec.aks.subscription",
		"spec.controlPlane.count", "spec.nodeGroups[0].name", "spec.nodeGroups[0].spot", "spec.nodeGroups[1].min", "spec.region", "spec.zones[0]"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("paths:\n got %v\nwant %v", got, want)
	}
}

// A spec that names an existing resource group which does not exist is refused at plan time; one
// that exists is used and never deleted.
func TestExistingResourceGroup(t *testing.T) {
	env, _, _ := serveEmulator(t)
	e, _ := newEngine(t, env)
	body := strings.Replace(aksSpec(1, "1.35", "Standard_D4s_v3"), "aks: {resourceGroup: az1-rg,", "aks: {resourceGroup: shared, existingResourceGroup: true,", 1)
	_, err := e.Plan(context.Background(), decode(t, body))
	if err == nil || !strings.Contains(err.Error(), "aks.yaml:") || !strings.Contains(err.Error(), `spec.aks.resourceGroup: resource group "shared" does not exist`) {
		t.Fatalf("plan with a missing existing group: %v", err)
	}
	if _, err := groupsClient(t, env).CreateOrUpdate(context.Background(), "shared", armresources.ResourceGroup{Location: to.Ptr("eastus")}, nil); err != nil {
		t.Fatal(err)
	}
	plan, err := e.Plan(context.Background(), decode(t, body))
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range plan.Changes {
		if strings.HasPrefix(ch.Key, "resource-group/") {
			t.Fatalf("the plan touches the existing group:\n%s", planText(plan))
		}
	}
}

// A managed cluster of the same name that nuv did not make is a conflict, and so are its pools:
// apply refuses and leaves it alone.
func TestIntegrationForeignClusterLeftAlone(t *testing.T) {
	env, _, _ := azureEnv(t)
	e, _ := newEngine(t, env)
	body := strings.Replace(aksSpec(1, "1.35", "Standard_D4s_v3"), "aks: {resourceGroup: az1-rg,", "aks: {resourceGroup: theirs, existingResourceGroup: true,", 1)
	ctx := context.Background()
	if _, err := groupsClient(t, env).CreateOrUpdate(ctx, "theirs", armresources.ResourceGroup{Location: to.Ptr("eastus")}, nil); err != nil {
		t.Fatal(err)
	}
	clusters := clustersClient(t, env)
	mc := acs.ManagedCluster{Location: to.Ptr("eastus"), Tags: map[string]*string{"owner": to.Ptr("someone")}, Properties: &acs.ManagedClusterProperties{
		AgentPoolProfiles: []*acs.ManagedClusterAgentPoolProfile{{Name: to.Ptr("pool1"), Mode: to.Ptr(acs.AgentPoolModeSystem), Count: to.Ptr[int32](1), VMSize: to.Ptr("Standard_D2s_v3")}}}}
	poller, err := clusters.BeginCreateOrUpdate(ctx, "theirs", "az1", mc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := poller.PollUntilDone(ctx, nil); err != nil {
		t.Fatal(err)
	}
	c := decode(t, body)
	plan, err := e.Plan(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if got := planText(plan); !strings.Contains(got, "! conflict managed-cluster/az1") || plan.Count(cluster.Delete) > 0 {
		t.Fatalf("plan with a foreign cluster:\n%s", got)
	}
	if _, err := e.Apply(ctx, c, engine.ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "managed-cluster/az1") {
		t.Fatalf("apply over a foreign cluster: %v", err)
	}
	if _, err := e.Delete(ctx, "az1"); err == nil {
		t.Log("delete of a cluster nuv has no record of: refused or nothing to do")
	}
	got, err := clusters.Get(ctx, "theirs", "az1", nil)
	if err != nil || *got.Tags["owner"] != "someone" || *got.Properties.ProvisioningState != "Succeeded" || len(got.Properties.AgentPoolProfiles) != 1 {
		t.Fatalf("the foreign cluster was touched: %+v %v", got, err)
	}
	del, err := clusters.BeginDelete(ctx, "theirs", "az1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := del.PollUntilDone(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

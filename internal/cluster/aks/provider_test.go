package aks_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/aks"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
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

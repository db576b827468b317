package aks_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/aks"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen/tfgentest"
)

const sub = "00000000-1111-2222-3333-444444444444"

// TestTerraformGolden writes the azurerm module of two specs and checks it against golden files
// and terraform fmt.
func TestTerraformGolden(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"basic", aksSpec(2, "1.35", "Standard_D4s_v3")},
		{"autoscale-spot-zones", `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: prod}
spec:
  provider: aks
  region: westeurope
  zones: ["1", "2"]
  kubernetesVersion: "1.36"
  networking: {podCIDR: 10.244.0.0/16, serviceCIDR: 10.96.0.0/16}
  tags: {team: platform}
  nodeGroups:
  - {name: system, count: 3, instanceType: Standard_D4s_v5, diskSize: 64}
  - {name: batch, min: 0, max: 10, instanceType: Standard_F4s_v2, spot: true, labels: {workload: batch}}
  aks: {subscription: ` + sub + `, resourceGroup: shared-rg, existingResourceGroup: true, networkPlugin: kubenet, skuTier: Standard}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &aks.Provider{Project: t.TempDir(), Getenv: func(k string) string {
				if k == "AZURE_SUBSCRIPTION_ID" {
					return sub
				}
				return ""
			}}
			c := decode(t, tc.body)
			if errs := p.Validate(c); len(errs) > 0 {
				t.Fatal(errs)
			}
			desired, err := p.Desired(c)
			if err != nil {
				t.Fatal(err)
			}
			files, err := p.Terraform(c, desired)
			if err != nil {
				t.Fatal(err)
			}
			// The kubeconfig path is the test's temporary project: not part of the module.
			for n, b := range files {
				if strings.Contains(string(b), p.Project) {
					t.Fatalf("%s names the project directory", n)
				}
			}
			tfgentest.Check(t, filepath.Join("testdata", "terraform", tc.name), files)
		})
	}
}

package gke_test

import (
	"path/filepath"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/gke"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen/tfgentest"
)

// TestTerraform: the module nuv writes for a zonal and a regional spec, against golden files, and
// terraform fmt -check clean.
func TestTerraform(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"zonal", `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: demo}
spec:
  provider: gke
  kubernetesVersion: "1.35"
  tags: {team: ops}
  nodeGroups:
  - {name: web, count: 2, instanceType: e2-standard-4, labels: {tier: web}}
  - {name: batch, min: 0, max: 5, spot: true, taints: ["batch=true:NoSchedule"], diskSize: 50}
  gke: {project: my-project, location: us-central1-a}
`},
		{"regional", `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: prod}
spec:
  provider: gke
  controlPlane: {count: 3}
  zones: [us-central1-a, us-central1-b, us-central1-c]
  networking: {podCIDR: 10.20.0.0/14, serviceCIDR: 10.24.0.0/20}
  nodeGroups:
  - {name: system, count: 1, instanceType: n2-standard-4}
  - {name: gpu, count: 1, instanceType: g2-standard-8, taints: ["nvidia.com/gpu=present:NoExecute"]}
  gke:
    project: my-project
    location: us-central1
    releaseChannel: REGULAR
    nodePools: [{name: gpu, zones: [us-central1-b], imageType: UBUNTU_CONTAINERD}]
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := spec.Decode(tc.name+".yaml", []byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			p := &gke.Provider{}
			if errs := p.Validate(cs[0]); len(errs) > 0 {
				t.Fatal(errs)
			}
			desired, err := p.Desired(cs[0])
			if err != nil {
				t.Fatal(err)
			}
			files, err := p.Terraform(cs[0], desired)
			if err != nil {
				t.Fatal(err)
			}
			tfgentest.Check(t, filepath.Join("testdata", "terraform", tc.name), files)
		})
	}
}

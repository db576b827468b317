package eks

import (
	"context"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen/tfgentest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// pkgCluster has the shape of package karpenter's Cluster: KarpenterPackage adapts functions
// taking it, as it adapts that package's.
type pkgCluster struct {
	Name, NodeRole, AMIAlias      string
	Tags                          map[string]string
	SubnetIDs, SecurityGroupIDs   []string
	SubnetTags, SecurityGroupTags map[string]string
}

// givenObjects is a Karpenter whose objects are given by the test: it checks how the provider
// renders whatever package karpenter maps a group to (the mapping itself is that package's), and
// records the cluster it was asked about.
func givenObjects(objs []*unstructured.Unstructured, asked *pkgCluster) Karpenter {
	notCalled := func(context.Context, *rest.Config, []*unstructured.Unstructured) error {
		panic("not called: Terraform only renders")
	}
	return KarpenterPackage(func(*spec.Cluster) []spec.FieldError { return nil },
		func(c pkgCluster, g spec.NodeGroup) ([]*unstructured.Unstructured, error) {
			*asked = c
			return objs, nil
		},
		func(string, string) []*unstructured.Unstructured { panic("not called") },
		func(context.Context, *rest.Config) error { panic("not called") }, notCalled, notCalled)
}

// TestTerraformKarpenterManifests: a karpenter group's objects become kubernetes_manifest
// resources (nested maps, lists, numbers and booleans kept), with a kubernetes provider that
// authenticates through nuv -eks-token, and the module stays terraform-fmt clean.
func TestTerraformKarpenterManifests(t *testing.T) {
	e := startEmulator(t, 0)
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "burst"},
		"spec": map[string]any{"limits": map[string]any{"nodes": int64(5)}, "template": map[string]any{"spec": map[string]any{
			"requirements": []any{map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"spot"}}},
			"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "burst"}}}},
	}}
	class := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": map[string]any{"name": "burst"},
		"spec": map[string]any{"role": "nuv-kp-nodes", "amiSelectorTerms": []any{map[string]any{"alias": "al2023@latest"}},
			"subnetSelectorTerms": []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "kp"}}}, "detailedMonitoring": false},
	}}
	p := New(t.TempDir(), "nuv", e.getenv, nil)
	var asked pkgCluster
	p.Karpenter = givenObjects([]*unstructured.Unstructured{pool, class}, &asked)
	c := parse(t, `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: kp}
spec:
  provider: eks
  nodeGroups:
  - {name: system, count: 1}
  - {name: burst, manager: karpenter, max: 5, spot: true}
`)
	eng := newEngine(t, p)
	files, err := eng.Terraform(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := tfgen.Check(files); err != nil {
		t.Fatal(err)
	}
	main := string(files["main.tf"])
	for _, want := range []string{
		`resource "kubernetes_manifest" "burst-nodepool" {`, `resource "kubernetes_manifest" "burst-ec2nodeclass" {`,
		`kind       = "NodePool"`, `nodes = 5`, `values   = ["spot"]`, `detailedMonitoring = false`, `alias = "al2023@latest"`,
		`depends_on = [aws_eks_cluster.kp]`, `provider "kubernetes" {`, `host                   = aws_eks_cluster.kp.endpoint`,
		`args        = ["-eks-token", "--cluster", "kp"]`, `source  = "hashicorp/kubernetes"`,
	} {
		if !strings.Contains(main, want) {
			t.Errorf("main.tf lacks %q", want)
		}
	}
	if asked.Name != "kp" || asked.NodeRole != "nuv-kp-nodes" || asked.SubnetIDs != nil {
		t.Errorf("the mapping was asked about %+v", asked)
	}
	if strings.Contains(main, `aws_eks_node_group" "burst"`) {
		t.Error("a karpenter group was also written as a managed node group")
	}
	tfgentest.Fmt(t, files)

	p.Karpenter = nil
	if _, err := newEngine(t, p).Terraform(c); err == nil || !strings.Contains(err.Error(), "spec.nodeGroups[1].manager: this nuv has no Karpenter support built in") {
		t.Fatalf("without Karpenter support: %v", err)
	}
}

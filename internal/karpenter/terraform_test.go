package karpenter

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen/tfgentest"
	"github.com/zclconf/go-cty/cty"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestTerraformGolden renders the golden groups the way the eks provider's module does (variables
// from tfgen, the Karpenter objects in their own file after the cluster) and checks the module
// against its golden files and terraform fmt -check.
func TestTerraformGolden(t *testing.T) {
	var objs []*unstructured.Unstructured
	for _, tc := range goldenGroups[:3] {
		o, err := Objects(tc.c, tc.g)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o...)
	}
	m := tfgen.NewModule()
	m.Variables("eu-west-1", map[string]string{LabelCluster: "dev"})
	if err := Terraform(m.File("karpenter.tf"), objs, tfgen.Ref("aws_eks_cluster", "main"), tfgen.Ref("aws_iam_role", "node")); err != nil {
		t.Fatal(err)
	}
	files := m.Bytes()
	tfgentest.Check(t, filepath.Join("testdata", "terraform", "dev"), files)

	// The manifests read back from the HCL are the objects nuv applies, value for value.
	f, diags := hclsyntax.ParseConfig(files["karpenter.tf"], "karpenter.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	blocks := f.Body.(*hclsyntax.Body).Blocks
	if len(blocks) != len(objs) {
		t.Fatalf("%d blocks for %d objects", len(blocks), len(objs))
	}
	byName := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		byName[TerraformName(o)] = o
	}
	for _, b := range blocks {
		o := byName[b.Labels[1]]
		if b.Type != "resource" || b.Labels[0] != "kubernetes_manifest" || o == nil {
			t.Fatalf("block %s %v", b.Type, b.Labels)
		}
		got, diags := b.Body.Attributes["manifest"].Expr.Value(nil)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		want, err := ctyOf(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		if !got.RawEquals(want) {
			t.Errorf("%s: manifest differs from the object:\n%#v\nwant\n%#v", b.Labels[1], got, want)
		}
		deps := string(hclwriteTokens(b.Body.Attributes["depends_on"].SrcRange, files["karpenter.tf"]))
		if o.GetKind() == KindNodePool && !strings.Contains(deps, "kubernetes_manifest.karpenter_ec2nodeclass_"+o.GetName()) {
			t.Errorf("%s does not depend on its EC2NodeClass: %s", b.Labels[1], deps)
		}
	}
}

func hclwriteTokens(r hcl.Range, src []byte) []byte { return r.SliceBytes(src) }

func TestTerraformRefusesOtherKinds(t *testing.T) {
	m := tfgen.NewModule()
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}}}
	if err := Terraform(m.File("k.tf"), []*unstructured.Unstructured{o}); err == nil || !strings.Contains(err.Error(), "not a kind nuv maps") {
		t.Fatalf("err = %v", err)
	}
	if _, err := ctyOf(map[string]any{"a": []any{struct{}{}}}); err == nil || !strings.Contains(err.Error(), "a: [0]: value of type struct {} has no Terraform form") {
		t.Fatalf("err = %v", err)
	}
	if v, _ := ctyOf(map[string]any{}); !v.RawEquals(cty.EmptyObjectVal) {
		t.Errorf("empty map = %#v", v)
	}
}

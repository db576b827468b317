package karpenter

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
	"github.com/zclconf/go-cty/cty"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TerraformNote opens the Karpenter part of a module: what Terraform needs before it can plan it.
const TerraformNote = `# Karpenter node groups: one EC2NodeClass and one NodePool per group, applied by the
# hashicorp/kubernetes provider (configure it for the cluster). kubernetes_manifest reads each
# kind's schema at plan time, so Karpenter's CRDs (NodePool, NodeClaim, EC2NodeClass) must be on
# the cluster first: Karpenter's chart installs them, and so does "nuv cluster apply".
`

// TerraformName is the block label of an object's kubernetes_manifest resource.
func TerraformName(o *unstructured.Unstructured) string {
	return tfgen.Name("karpenter_" + strings.ToLower(o.GetKind()) + "_" + o.GetName())
}

// Terraform appends to body one kubernetes_manifest resource per object of Objects, server-side
// applied with field manager "nuv" as Apply does. Each depends on dependsOn (the cluster, its node
// role: references such as tfgen.Ref("aws_eks_cluster", "main")), and each NodePool on the
// EC2NodeClass it names.
func Terraform(body *hclwrite.Body, objs []*unstructured.Unstructured, dependsOn ...hclwrite.Tokens) error {
	body.AppendUnstructuredTokens(hclwrite.Tokens{{Type: hclsyntax.TokenComment, Bytes: []byte(TerraformNote)}})
	classes := map[string]string{}
	for _, o := range sortByKind(objs, false) {
		if _, err := resourceOf(o); err != nil {
			return err
		}
		manifest, err := ctyOf(o.Object)
		if err != nil {
			return fmt.Errorf("karpenter: terraform for %s %q: %w", o.GetKind(), o.GetName(), err)
		}
		name := TerraformName(o)
		if o.GetKind() == KindNodeClass {
			classes[o.GetName()] = name
		}
		deps := slices.Clone(dependsOn)
		if o.GetKind() == KindNodePool {
			ref, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "nodeClassRef", "name")
			if c, ok := classes[ref]; ok {
				deps = append(deps, tfgen.Ref("kubernetes_manifest", c))
			}
		}
		body.AppendNewline()
		b := body.AppendNewBlock("resource", []string{"kubernetes_manifest", name}).Body()
		b.SetAttributeValue("manifest", manifest)
		b.AppendNewline()
		fm := b.AppendNewBlock("field_manager", nil).Body()
		fm.SetAttributeValue("name", cty.StringVal(FieldManager))
		fm.SetAttributeValue("force_conflicts", cty.True)
		if len(deps) > 0 {
			b.AppendNewline()
			b.SetAttributeRaw("depends_on", tfgen.List(deps...))
		}
	}
	return nil
}

// ctyOf converts an unstructured value to cty: objects for maps, tuples for lists.
func ctyOf(v any) (cty.Value, error) {
	switch v := v.(type) {
	case nil:
		return cty.NullVal(cty.DynamicPseudoType), nil
	case string:
		return cty.StringVal(v), nil
	case bool:
		return cty.BoolVal(v), nil
	case int64:
		return cty.NumberIntVal(v), nil
	case int:
		return cty.NumberIntVal(int64(v)), nil
	case float64:
		return cty.NumberFloatVal(v), nil
	case map[string]any:
		if len(v) == 0 {
			return cty.EmptyObjectVal, nil
		}
		attrs := make(map[string]cty.Value, len(v))
		for k, e := range v {
			c, err := ctyOf(e)
			if err != nil {
				return cty.NilVal, fmt.Errorf("%s: %w", k, err)
			}
			attrs[k] = c
		}
		return cty.ObjectVal(attrs), nil
	case []any:
		if len(v) == 0 {
			return cty.EmptyTupleVal, nil
		}
		elems := make([]cty.Value, len(v))
		for i, e := range v {
			c, err := ctyOf(e)
			if err != nil {
				return cty.NilVal, fmt.Errorf("[%d]: %w", i, err)
			}
			elems[i] = c
		}
		return cty.TupleVal(elems), nil
	}
	return cty.NilVal, fmt.Errorf("value of type %T has no Terraform form", v)
}

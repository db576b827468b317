package karpenter

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// ReplaceFields are the Fields whose change needs the NodePool replaced (see Replaces).
var ReplaceFields = []string{"nodepool.mode"}

// fieldPaths are the parts of each object that Objects sets, by field name: what a plan compares.
// Server defaults (disruption, expireAfter, metadataOptions) live elsewhere and are not compared.
var fieldPaths = lazy.Value[map[string]map[string][]string]{New: func() map[string]map[string][]string {
	return map[string]map[string][]string{
		KindNodePool: {
			"nodepool.replicas":     {"spec", "replicas"},
			"nodepool.limits":       {"spec", "limits"},
			"nodepool.labels":       {"spec", "template", "metadata", "labels"},
			"nodepool.requirements": {"spec", "template", "spec", "requirements"},
			"nodepool.taints":       {"spec", "template", "spec", "taints"},
			"nodepool.nodeClassRef": {"spec", "template", "spec", "nodeClassRef"},
		},
		KindNodeClass: {
			"nodeclass.role":                {"spec", "role"},
			"nodeclass.amiSelectorTerms":    {"spec", "amiSelectorTerms"},
			"nodeclass.subnetSelectorTerms": {"spec", "subnetSelectorTerms"},
			"nodeclass.securityGroupTerms":  {"spec", "securityGroupSelectorTerms"},
			"nodeclass.blockDevices":        {"spec", "blockDeviceMappings"},
			"nodeclass.tags":                {"spec", "tags"},
		},
	}
}}

// Fields summarises one group's objects (as Objects makes them, or as Observe reads them back) as
// the flat properties the lifecycle engine compares between desired and actual: every field the
// mapping sets, rendered as one line ("nodepool.limits": "nodes=10"), "" when absent, and
// "nodepool.mode" (static or dynamic). A missing object gives "" for its fields, so a plan shows
// what it would set.
func Fields(objs []*unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	byKind := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if o != nil {
			byKind[o.GetKind()] = o
		}
	}
	for kind, paths := range fieldPaths.Get() {
		for name, path := range paths {
			if o := byKind[kind]; o != nil {
				if v, ok, _ := unstructured.NestedFieldNoCopy(o.Object, path...); ok {
					out[name] = render(v)
					continue
				}
			}
			out[name] = ""
		}
	}
	switch np := byKind[KindNodePool]; {
	case np == nil:
		out["nodepool.mode"] = ""
	case out["nodepool.replicas"] != "":
		out["nodepool.mode"] = "static"
	default:
		out["nodepool.mode"] = "dynamic"
	}
	return out
}

// render writes a value on one line: maps as k=v sorted by key, lists joined by "; ".
func render(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case map[string]any:
		parts := make([]string, 0, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			s := render(v[k])
			if _, nested := v[k].(map[string]any); nested {
				s = "{" + s + "}"
			} else if l, list := v[k].([]any); list && len(l) > 1 {
				s = "[" + strings.ReplaceAll(s, "; ", " ") + "]"
			}
			parts = append(parts, k+"="+s)
		}
		return strings.Join(parts, ", ")
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = render(e)
		}
		return strings.Join(parts, "; ")
	default:
		return fmt.Sprint(v)
	}
}

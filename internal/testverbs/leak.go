package testverbs

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// The labels that mark what the operator's manifests (part-of) and the operator itself
// (managed-by) create, and the operator's own pods (name).
var leakSelectors = []string{
	"app.kubernetes.io/part-of=whisk-operator",
	"app.kubernetes.io/managed-by=whisk-operator",
	"app.kubernetes.io/name=whisk-operator",
}

// leakKinds are the resources dtest lists before and after, by label.
var leakKinds = []schema.GroupVersionResource{
	{Version: "v1", Resource: "namespaces"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "persistentvolumeclaims"},
	{Version: "v1", Resource: "pods"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
}

// whisks is listed whole (a Whisk carries no label of its own).
var whisks = schema.GroupVersionResource{Group: "nuv.dev", Version: "v1alpha1", Resource: "whisks"}

// inventory lists every object the operator and its instances could leave behind, as
// "resource namespace/name" strings, sorted.
func inventory(ctx context.Context, dyn dynamic.Interface) ([]string, error) {
	seen := map[string]bool{}
	add := func(gvr schema.GroupVersionResource, ns, name string) {
		r := gvr.Resource
		if gvr.Group != "" {
			r += "." + gvr.Group
		}
		if ns != "" {
			name = ns + "/" + name
		}
		seen[r+" "+name] = true
	}
	for _, gvr := range leakKinds {
		for _, sel := range leakSelectors {
			list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: sel})
			if err != nil {
				return nil, fmt.Errorf("list %s (%s): %w", gvr.Resource, sel, err)
			}
			for _, it := range list.Items {
				add(gvr, it.GetNamespace(), it.GetName())
			}
		}
	}
	list, err := dyn.Resource(whisks).List(ctx, metav1.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("list whisks: %w", err)
	}
	if err == nil {
		for _, it := range list.Items {
			add(whisks, it.GetNamespace(), it.GetName())
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// leaked is what after has that before did not.
func leaked(before, after []string) []string {
	had := map[string]bool{}
	for _, b := range before {
		had[b] = true
	}
	var out []string
	for _, a := range after {
		if !had[a] {
			out = append(out, a)
		}
	}
	return out
}

func summarize(objs []string, max int) string {
	if len(objs) <= max {
		return strings.Join(objs, ", ")
	}
	return strings.Join(objs[:max], ", ") + fmt.Sprintf(" and %d more", len(objs)-max)
}

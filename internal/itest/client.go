package itest

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// client is what the steps talk to the cluster with.
type client struct {
	dyn    dynamic.Interface
	cs     kubernetes.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newClient(cfg *rest.Config) (*client, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return &client{dyn: dyn, cs: cs, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}, nil
}

// resource returns the interface for u's kind, putting a namespaced object without a namespace
// into ns. A kind unknown to the cached discovery is looked up again (a CRD the test just created).
func (c *client) resource(u *unstructured.Unstructured, ns string) (dynamic.ResourceInterface, error) {
	gvk := u.GroupVersionKind()
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		u.SetNamespace("")
		return c.dyn.Resource(m.Resource), nil
	}
	if u.GetNamespace() == "" {
		u.SetNamespace(ns)
	}
	return c.dyn.Resource(m.Resource).Namespace(u.GetNamespace()), nil
}

// ref names an object in messages: kind namespace/name (or kind with labels).
func ref(u *unstructured.Unstructured) string {
	name := u.GetName()
	if name == "" {
		name = fmt.Sprintf("%v", u.GetLabels())
	}
	if ns := u.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", u.GetKind(), ns, name)
	}
	return fmt.Sprintf("%s %s", u.GetKind(), name)
}

var _ = context.Background

package testverbs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/deploy"
)

// teardown leaves the cluster as dtest found it after a failure, whatever broke: deploy.Destroy
// first; if that fails (e.g. the instance file is what broke), every Whisk is deleted while the
// operator still runs (its finalizer removes their components) and Destroy is tried with the
// default instance; what is still left is deleted by label.
func teardown(ctx context.Context, env *cli.Env, o deploy.Options, dyn dynamic.Interface) error {
	err := deploy.Destroy(ctx, o)
	if err == nil {
		return nil
	}
	fmt.Fprintf(env.Out, "teardown: destroy failed (%v); deleting every Whisk and the operator\n", err)
	if werr := deleteAll(ctx, dyn, whisks); werr != nil {
		fmt.Fprintf(env.Out, "teardown: %v\n", werr)
	}
	o2 := o
	o2.Getenv = func(k string) string {
		if k == "WHISK" {
			return ""
		}
		return o.Getenv(k)
	}
	err = deploy.Destroy(ctx, o2)
	if err == nil {
		return nil
	}
	fmt.Fprintf(env.Out, "teardown: destroy with the default instance failed too (%v); deleting by label\n", err)
	return deleteLabelled(ctx, dyn)
}

// deleteAll deletes every object of a namespaced resource in every namespace.
func deleteAll(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource) error {
	list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, it := range list.Items {
		if err := dyn.Resource(gvr).Namespace(it.GetNamespace()).Delete(ctx, it.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// deleteLabelled deletes what inventory lists, namespaces and CRDs last.
func deleteLabelled(ctx context.Context, dyn dynamic.Interface) error {
	objs, err := inventory(ctx, dyn)
	if err != nil {
		return err
	}
	last := map[string]bool{"namespaces": true, "customresourcedefinitions": true}
	var errs []error
	for _, pass := range []bool{false, true} {
		for _, o := range objs {
			res, name, _ := strings.Cut(o, " ")
			resource, group, _ := strings.Cut(res, ".")
			if last[resource] != pass {
				continue
			}
			gvr := schema.GroupVersionResource{Group: group, Resource: resource, Version: "v1"}
			if group == "nuv.dev" {
				gvr.Version = "v1alpha1"
			}
			ns, n, namespaced := strings.Cut(name, "/")
			var ri dynamic.ResourceInterface = dyn.Resource(gvr)
			if namespaced {
				ri = dyn.Resource(gvr).Namespace(ns)
			} else {
				n = ns
			}
			if err := ri.Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete %s: %w", o, err))
			}
		}
	}
	return errors.Join(errs...)
}

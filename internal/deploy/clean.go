package deploy

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Labels nuv's clean-up finds objects by.
const (
	// InstanceSelector selects every object the operator created for a Whisk (PVCs included, via
	// the claim templates).
	// (The reference operator's controller.LabelManagedBy=ManagedByValue; kept as a literal so nuv
	// does not link the operator's libraries.)
	InstanceSelector = "app.kubernetes.io/managed-by=whisk-operator"
	// OperatorSelector selects every object of the operator's own manifests.
	OperatorSelector = "app.kubernetes.io/part-of=whisk-operator"
)

// labelledKinds are the kinds clean searches by label, in deletion order.
var labelledKinds = []schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "pods"},
	{Version: "v1", Resource: "secrets"}, // the controller's generated API key
	{Version: "v1", Resource: "persistentvolumeclaims"},
}

// Labelled lists the objects of the labelledKinds matching selector in every namespace, as
// "kind ns/name"; tests use it to show nothing leaked.
func Labelled(ctx context.Context, o Options, selector string) ([]string, error) {
	t, err := prepare(ctx, &o)
	if err != nil {
		return nil, err
	}
	objs, err := t.labelled(ctx, selector)
	var names []string
	for _, u := range objs {
		names = append(names, objRef(u))
	}
	return names, err
}

func (t *target) labelled(ctx context.Context, selector string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, gvr := range labelledKinds {
		list, err := t.dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return out, fmt.Errorf("list %s -l %s: %w", gvr.Resource, selector, err)
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// Clean deletes everything the operator and its instances created, by label (PVCs included), every
// Whisk (its finalizer removed, since its components go too) and the operator itself.
func Clean(ctx context.Context, o Options) error {
	start := time.Now()
	t, err := prepare(ctx, &o)
	if err != nil {
		return err
	}
	if t.localName != "" && !o.DryRun {
		if newHostRun(o.Home, t.localName).stop(5 * time.Second) {
			fmt.Fprintln(o.Out, "  host operator stopped")
		}
	}
	fmt.Fprintf(o.Out, "cleaning cluster %s\n", t.name)
	items, err := t.whiskItems(ctx)
	if err != nil {
		return err
	}
	var doomed []*unstructured.Unstructured
	for i := range items {
		w := &items[i]
		if len(w.GetFinalizers()) > 0 {
			if err := t.dropFinalizers(ctx, w, o.DryRun, o.Out); err != nil {
				return err
			}
		}
		doomed = append(doomed, w)
	}
	made, err := t.labelled(ctx, InstanceSelector)
	if err != nil {
		return err
	}
	doomed = append(doomed, made...)
	opObjs, err := operatorObjects(o, t, false)
	if err != nil {
		return err
	}
	// Deleted from the last: the operator's manifests, reversed, go after the instances' objects.
	all := make([]*unstructured.Unstructured, 0, len(doomed)+len(opObjs))
	all = append(all, opObjs...)
	for i := len(doomed) - 1; i >= 0; i-- {
		all = append(all, doomed[i])
	}
	n, err := t.deleteAndWait(ctx, all, o)
	if err != nil {
		return err
	}
	if o.DryRun {
		fmt.Fprintf(o.Out, "dry run: %d objects would be deleted; nothing was changed\n", n)
		return nil
	}
	fmt.Fprintf(o.Out, "%d objects deleted in %.1fs\n", n, time.Since(start).Seconds())
	return nil
}

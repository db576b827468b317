package deploy

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// whiskGVR is the Whisk resource.
var whiskGVR = schema.GroupVersionResource{Group: "nuv.dev", Version: "v1alpha1", Resource: "whisks"}

// deleteAndWait deletes objs in reverse order and, unless dry-running, waits until each is gone.
func (t *target) deleteAndWait(ctx context.Context, objs []*unstructured.Unstructured, o Options) (int, error) {
	n := 0
	var pending []*unstructured.Unstructured
	for i := len(objs) - 1; i >= 0; i-- {
		obj := objs[i]
		ch, err := t.remove(ctx, obj, o.DryRun, o.Out)
		if err != nil {
			return n, err
		}
		if ch == deleted {
			n++
			if !o.DryRun {
				fmt.Fprintf(o.Out, "  %s deleted\n", objRef(obj))
				pending = append(pending, obj)
			}
		}
	}
	for _, obj := range pending {
		check := gone
		if obj.GetKind() == "Whisk" {
			check = whiskGone
		}
		if err := t.waitFor(ctx, obj, o.Timeout, o.Out, check); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Destroy deletes the instance, then the operator, waiting for each deletion (the operator's
// finalizer cleans up each Whisk's components, PVCs included, before the operator goes).
func Destroy(ctx context.Context, o Options) error {
	start := time.Now()
	t, err := prepare(ctx, &o)
	if err != nil {
		return err
	}
	file, inst, err := instanceObjects(o, t)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "destroying the instance (%s) on cluster %s\n", file, t.name)
	if _, err := t.deleteAndWait(ctx, inst, o); err != nil {
		return err
	}
	if !o.DryRun {
		if left, err := t.whisks(ctx); err != nil {
			return err
		} else if len(left) > 0 {
			return fmt.Errorf("%d Whisk(s) not in %s remain (%s): the operator must finalize them before it goes; delete them, or run `nuv clean`",
				len(left), file, strings.Join(left, ", "))
		}
	}
	objs, err := operatorObjects(o, t, false)
	if err != nil {
		return err
	}
	if t.localName != "" && !o.DryRun {
		if newHostRun(o.Home, t.localName).stop(5 * time.Second) {
			fmt.Fprintln(o.Out, "  host operator stopped")
		}
	}
	fmt.Fprintf(o.Out, "destroying the operator on cluster %s\n", t.name)
	if _, err := t.deleteAndWait(ctx, objs, o); err != nil {
		return err
	}
	if o.DryRun {
		fmt.Fprintln(o.Out, "dry run: nothing was changed")
		return nil
	}
	fmt.Fprintf(o.Out, "destroyed in %.1fs\n", time.Since(start).Seconds())
	return nil
}

// whisks lists every Whisk ("ns/name"); none when the CRD is not installed.
func (t *target) whisks(ctx context.Context) ([]string, error) {
	items, err := t.whiskItems(ctx)
	var names []string
	for _, w := range items {
		names = append(names, w.GetNamespace()+"/"+w.GetName())
	}
	return names, err
}

func (t *target) whiskItems(ctx context.Context) ([]unstructured.Unstructured, error) {
	list, err := t.dyn.Resource(whiskGVR).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list whisks: %w", err)
	}
	return list.Items, nil
}

// Defin removes the finalizers of stuck Whisks (being deleted but held by a finalizer), or of every
// Whisk with all, and lists what it touched.
func Defin(ctx context.Context, o Options, all bool) error {
	t, err := prepare(ctx, &o)
	if err != nil {
		return err
	}
	items, err := t.whiskItems(ctx)
	if err != nil {
		return err
	}
	touched := 0
	for _, w := range items {
		if len(w.GetFinalizers()) == 0 || (!all && w.GetDeletionTimestamp() == nil) {
			continue
		}
		if err := t.dropFinalizers(ctx, &w, o.DryRun, o.Out); err != nil {
			return err
		}
		touched++
	}
	if touched == 0 {
		fmt.Fprintln(o.Out, "no stuck Whisk (none is being deleted with a finalizer left)")
	}
	return nil
}

func (t *target) dropFinalizers(ctx context.Context, w *unstructured.Unstructured, dryRun bool, out io.Writer) error {
	opts := metav1.PatchOptions{}
	verb := "removed"
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
		verb = "would remove"
	}
	_, err := t.dyn.Resource(whiskGVR).Namespace(w.GetNamespace()).Patch(ctx, w.GetName(), types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), opts)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove finalizers of whisk %s/%s: %w", w.GetNamespace(), w.GetName(), err)
	}
	fmt.Fprintf(out, "whisk %s/%s: %s finalizers %s\n", w.GetNamespace(), w.GetName(), verb, strings.Join(w.GetFinalizers(), ", "))
	return nil
}

// whiskGone is gone with a hint: a Whisk's finalizer is removed by the operator, so a Whisk that
// stays needs a running operator (or `nuv defin`).
func whiskGone(obj *unstructured.Unstructured) (bool, string) {
	done, why := gone(obj)
	if !done && len(obj.GetFinalizers()) > 0 {
		why += "; the operator removes its finalizer once the components are cleaned up (is it running? `nuv defin` frees a stuck Whisk)"
	}
	return done, why
}

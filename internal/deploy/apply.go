package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/nuv-dev/nuv/internal/kobj"
	"github.com/nuv-dev/nuv/internal/secrets"
)

// change is what applying one object did (or would do, in a dry run).
type change string

const (
	created   change = "created"
	changed   change = "configured"
	unchanged change = "unchanged"
	deleted   change = "deleted"
)

// resource returns the dynamic client of obj's kind (namespaced when the kind is).
func (t *target) resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, schema.GroupVersionResource, error) {
	gvk := obj.GroupVersionKind()
	m, err := t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		t.mapper.Reset()
		m, err = t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		hint := ""
		if gvk.Group == "nuv.dev" {
			hint = " (`nuv operator` installs its CustomResourceDefinition)"
		}
		return nil, schema.GroupVersionResource{}, fmt.Errorf("%s %s: the cluster does not serve kind %s%s: %w", gvk.Kind, obj.GetName(), gvk.GroupVersion().WithKind(gvk.Kind), hint, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = "default"
			obj.SetNamespace(ns)
		}
		return t.dyn.Resource(m.Resource).Namespace(ns), m.Resource, nil
	}
	return t.dyn.Resource(m.Resource), m.Resource, nil
}

// objRef names an object for people: "deployment nuv-system/whisk-operator".
func objRef(obj *unstructured.Unstructured) string {
	k := strings.ToLower(obj.GetKind())
	if obj.GetNamespace() != "" {
		return k + " " + obj.GetNamespace() + "/" + obj.GetName()
	}
	return k + " " + obj.GetName()
}

// apply server-side applies obj with nuv's field manager and reports what changed, judged by the
// resourceVersion. In a dry run it prints a diff of the current object against the server's
// dry-run result to out.
func (t *target) apply(ctx context.Context, obj *unstructured.Unstructured, dryRun bool, out io.Writer) (change, error) {
	ri, _, err := t.resource(obj)
	if err != nil {
		return "", err
	}
	cur, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cur = nil
	} else if err != nil {
		return "", fmt.Errorf("%s: %w", objRef(obj), err)
	}
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return "", err
	}
	opts := metav1.PatchOptions{FieldManager: FieldManager, Force: ptr(true)}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	res, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	if err != nil {
		if dryRun && cur == nil && apierrors.IsNotFound(err) {
			// e.g. the namespace it goes into would be created by an earlier object of this run
			fmt.Fprintf(out, "+ %s would be created (after the objects it depends on)\n", objRef(obj))
			return created, nil
		}
		return "", fmt.Errorf("apply %s: %w", objRef(obj), err)
	}
	ch := unchanged
	switch {
	case cur == nil:
		ch = created
	case res.GetResourceVersion() != cur.GetResourceVersion():
		ch = changed
	}
	if dryRun {
		before, after := dryRunPair(cur, res)
		if before == after {
			ch = unchanged
		} else if cur != nil {
			ch = changed
		}
		printDiff(t.masker.Writer(out), objRef(obj), ch, before, after)
	}
	return ch, nil
}

// dryRunPair renders the live object (nil: none) and the server's dry-run answer for a diff, with
// a Secret's data redacted: a value shows as *** when unchanged and as "*** (before)" / "***
// (after)" when it changes, so the diff still says which keys change and never what they hold.
func dryRunPair(cur, res *unstructured.Unstructured) (before, after string) {
	a := res.DeepCopy()
	var b *unstructured.Unstructured
	if cur != nil {
		b = cur.DeepCopy()
	}
	if a.GetKind() == "Secret" {
		var bo map[string]any
		if b != nil {
			bo = b.Object
		}
		differ := changedSecretKeys(bo, a.Object)
		secrets.RedactObject(a.Object)
		markSecretKeys(a.Object, differ, " (after)")
		if b != nil {
			secrets.RedactObject(b.Object)
			markSecretKeys(b.Object, differ, " (before)")
		}
	}
	after = comparable(a)
	if b != nil {
		before = comparable(b)
	}
	return before, after
}

// changedSecretKeys lists "data/key" and "stringData/key" whose values differ between two Secrets.
func changedSecretKeys(before, after map[string]any) map[string]bool {
	differ := map[string]bool{}
	for _, field := range []string{"data", "stringData"} {
		bm, _ := before[field].(map[string]any)
		am, _ := after[field].(map[string]any)
		for k, v := range am {
			if bv, ok := bm[k]; !ok || bv != v {
				differ[field+"/"+k] = true
			}
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				differ[field+"/"+k] = true
			}
		}
	}
	return differ
}

func markSecretKeys(obj map[string]any, differ map[string]bool, suffix string) {
	for _, field := range []string{"data", "stringData"} {
		if m, ok := obj[field].(map[string]any); ok {
			for k := range m {
				if differ[field+"/"+k] {
					m[k] = secrets.Placeholder + suffix
				}
			}
		}
	}
}

// comparable renders an object without the fields the server changes on every write.
func comparable(u *unstructured.Unstructured) string {
	c := u.DeepCopy()
	for _, f := range [][]string{
		{"metadata", "managedFields"}, {"metadata", "resourceVersion"}, {"metadata", "generation"},
		{"metadata", "uid"}, {"metadata", "creationTimestamp"}, {"status"},
	} {
		unstructured.RemoveNestedField(c.Object, f...)
	}
	b, _ := yaml.Marshal(c.Object)
	return string(b)
}

func printDiff(out io.Writer, ref string, ch change, before, after string) {
	switch ch {
	case unchanged:
		fmt.Fprintf(out, "= %s unchanged\n", ref)
		return
	case created:
		fmt.Fprintf(out, "+ %s would be created\n", ref)
	default:
		fmt.Fprintf(out, "~ %s would change\n", ref)
	}
	d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(before), B: difflib.SplitLines(after),
		FromFile: "live", ToFile: "applied", Context: 2,
	})
	for _, line := range strings.SplitAfter(d, "\n") {
		if line != "" {
			fmt.Fprint(out, "    "+line)
		}
	}
}

// remove deletes obj (background propagation). In a dry run the server checks the delete and nuv
// prints what would go. It reports deleted, or unchanged when the object was already gone.
func (t *target) remove(ctx context.Context, obj *unstructured.Unstructured, dryRun bool, out io.Writer) (change, error) {
	ri, _, err := t.resource(obj)
	if err != nil {
		if meta.IsNoMatchError(err) || strings.Contains(err.Error(), "does not serve kind") {
			return unchanged, nil // its CRD is gone: so is the object
		}
		return "", err
	}
	opts := metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	err = ri.Delete(ctx, obj.GetName(), opts)
	if apierrors.IsNotFound(err) {
		return unchanged, nil
	}
	if err != nil {
		return "", fmt.Errorf("delete %s: %w", objRef(obj), err)
	}
	if dryRun {
		fmt.Fprintf(out, "- %s would be deleted\n", objRef(obj))
	}
	return deleted, nil
}

var getOpts = metav1.GetOptions{}

func ptr[T any](v T) *T { return &v }

// unstructuredContainers returns the images of a workload's pod template containers.
func unstructuredContainers(u *unstructured.Unstructured) ([]string, bool, error) {
	return kobj.ContainerImages(u)
}

package karpenter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/kobj"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

var (
	crdGVR       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	nodePoolGVR  = schema.GroupVersionResource{Group: GroupCore, Version: Version, Resource: "nodepools"}
	nodeClassGVR = schema.GroupVersionResource{Group: GroupAWS, Version: Version, Resource: "ec2nodeclasses"}
)

// pollInterval is how often Install and Delete look again while they wait.
const pollInterval = 250 * time.Millisecond

// ErrNotInstalled is returned when the cluster lacks Karpenter's CRDs (Install puts them there).
var ErrNotInstalled = errors.New("the Karpenter CRDs are not installed on the cluster")

// ForeignError is an object with a name nuv wants that nuv did not make (or made for another
// cluster): nuv never changes or deletes it.
type ForeignError struct {
	Kind, Name string
	// Owner is the nuv.dev/cluster label it carries ("" when none).
	Owner string
}

func (e *ForeignError) Error() string {
	who := "has no " + LabelCluster + " label"
	if e.Owner != "" {
		who = fmt.Sprintf("belongs to nuv cluster %q", e.Owner)
	}
	return fmt.Sprintf("%s %q exists but is not this cluster's (it %s): nuv leaves it alone; rename the node group or remove the object", e.Kind, e.Name, who)
}

// RejectedError is an object the API server refused: its kind and name, and each field with the
// server's message (OpenAPI schema or CEL rule of Karpenter's CRD).
type RejectedError struct {
	Kind, Name string
	// Causes are "field: message" lines, as the API server gave them.
	Causes []string
	Err    error
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("%s %q rejected by the API server: %s", e.Kind, e.Name, strings.Join(e.Causes, "; "))
}

func (e *RejectedError) Unwrap() error { return e.Err }

// rejected turns an Invalid (422) or BadRequest answer into a RejectedError; other errors pass
// through wrapped with the object.
func rejected(o *unstructured.Unstructured, verb string, err error) error {
	var se apierrors.APIStatus
	if errors.As(err, &se) && (apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)) {
		st := se.Status()
		var causes []string
		if st.Details != nil {
			for _, c := range st.Details.Causes {
				line := c.Message
				if c.Field != "" {
					line = c.Field + ": " + c.Message
				}
				causes = append(causes, line)
			}
		}
		if len(causes) == 0 {
			causes = []string{st.Message}
		}
		return &RejectedError{Kind: o.GetKind(), Name: o.GetName(), Causes: causes, Err: err}
	}
	if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) && verb == "apply" {
		return fmt.Errorf("karpenter: %s %s %q: %w (%w)", verb, o.GetKind(), o.GetName(), ErrNotInstalled, err)
	}
	return fmt.Errorf("karpenter: %s %s %q: %w", verb, o.GetKind(), o.GetName(), err)
}

func client(cfg *rest.Config) (dynamic.Interface, error) {
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("karpenter: client: %w", err)
	}
	return dc, nil
}

// resourceOf returns where objects of o's kind live; only the kinds Objects makes.
func resourceOf(o *unstructured.Unstructured) (schema.GroupVersionResource, error) {
	switch o.GroupVersionKind() {
	case nodePoolGVR.GroupVersion().WithKind(KindNodePool):
		return nodePoolGVR, nil
	case nodeClassGVR.GroupVersion().WithKind(KindNodeClass):
		return nodeClassGVR, nil
	}
	return schema.GroupVersionResource{}, fmt.Errorf("karpenter: %s %q is not a kind nuv maps (want %s/%s %s or %s/%s %s)",
		o.GetObjectKind().GroupVersionKind(), o.GetName(), GroupCore, Version, KindNodePool, GroupAWS, Version, KindNodeClass)
}

// AnnotationVersion records, on the CRDs nuv installs, the Karpenter module version they come from.
const AnnotationVersion = "nuv.dev/karpenter-version"

// Install server-side applies Karpenter's CRDs (CRDs), labelled as nuv's, and waits, within ctx,
// until the API server serves them (Established). Applying them again changes nothing. A CRD that
// is already there and is not nuv's (Karpenter's chart installed it, maybe at a newer version) is
// left as it is: Install only waits for it to be Established.
func Install(ctx context.Context, cfg *rest.Config) error {
	crds, err := CRDs()
	if err != nil {
		return err
	}
	dc, err := client(cfg)
	if err != nil {
		return err
	}
	ri := dc.Resource(crdGVR)
	for _, c := range crds {
		live, err := ri.Get(ctx, c.Name, metav1.GetOptions{})
		switch {
		case err == nil && live.GetLabels()[LabelManagedBy] != managedByValue:
			continue
		case err != nil && !apierrors.IsNotFound(err):
			return fmt.Errorf("karpenter: CRD %s: %w", c.Name, err)
		}
		c.Labels = map[string]string{LabelManagedBy: managedByValue}
		c.Annotations = map[string]string{AnnotationVersion: ModuleVersion}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
		if err != nil {
			return fmt.Errorf("karpenter: CRD %s: %w", c.Name, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion("apiextensions.k8s.io/v1")
		u.SetKind("CustomResourceDefinition")
		delete(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		data, err := json.Marshal(u)
		if err != nil {
			return fmt.Errorf("karpenter: CRD %s: %w", c.Name, err)
		}
		if _, err := ri.Patch(ctx, c.Name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: FieldManager, Force: ptr(true)}); err != nil {
			return rejected(u, "install", err)
		}
	}
	for _, c := range crds {
		var last *kobj.Condition
		for {
			u, err := ri.Get(ctx, c.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("karpenter: CRD %s: %w", c.Name, err)
			}
			if last = kobj.FindCondition(u, "Established"); last != nil && last.Status == "True" {
				break
			}
			if err := sleep(ctx); err != nil {
				return fmt.Errorf("karpenter: CRD %s not Established%s: %w", c.Name, last.Suffix(), err)
			}
		}
	}
	return nil
}

// Installed reports whether the cluster serves all of Karpenter's CRDs that nuv needs.
func Installed(ctx context.Context, cfg *rest.Config) (bool, error) {
	dc, err := client(cfg)
	if err != nil {
		return false, err
	}
	for _, n := range crdNames {
		u, err := dc.Resource(crdGVR).Get(ctx, n, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("karpenter: CRD %s: %w", n, err)
		}
		if c := kobj.FindCondition(u, "Established"); c == nil || c.Status != "True" {
			return false, nil
		}
	}
	return true, nil
}

// owner checks that o, if it exists, is labelled as cluster's; it returns the live object (nil when
// there is none).
func owner(ctx context.Context, ri dynamic.ResourceInterface, o *unstructured.Unstructured, cluster string) (*unstructured.Unstructured, error) {
	live, err := ri.Get(ctx, o.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if got := live.GetLabels()[LabelCluster]; got != cluster || cluster == "" {
		return nil, &ForeignError{Kind: o.GetKind(), Name: o.GetName(), Owner: got}
	}
	return live, nil
}

// clusterOf is the nuv cluster an object of Objects is labelled with.
func clusterOf(o *unstructured.Unstructured) (string, error) {
	c := o.GetLabels()[LabelCluster]
	if c == "" {
		return "", fmt.Errorf("karpenter: %s %q has no %s label: nuv applies and deletes only the objects Objects makes", o.GetKind(), o.GetName(), LabelCluster)
	}
	return c, nil
}

// Apply server-side applies objects of Objects (field manager "nuv"), node classes before the
// pools that use them. An object of the same name that is not this cluster's is refused
// (ForeignError) before anything is written; what the API server refuses comes back as a
// RejectedError naming the object, the field and the message of Karpenter's schema or CEL rule.
func Apply(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	dc, err := client(cfg)
	if err != nil {
		return err
	}
	ordered := sortByKind(objs, false)
	for _, o := range ordered {
		gvr, err := resourceOf(o)
		if err != nil {
			return err
		}
		cl, err := clusterOf(o)
		if err != nil {
			return err
		}
		if _, err := owner(ctx, dc.Resource(gvr), o, cl); err != nil {
			var fe *ForeignError
			if errors.As(err, &fe) {
				return fmt.Errorf("karpenter: %w", err)
			}
			return rejected(o, "apply", err)
		}
	}
	for _, o := range ordered {
		gvr, _ := resourceOf(o)
		data, err := json.Marshal(o)
		if err != nil {
			return fmt.Errorf("karpenter: %s %q: %w", o.GetKind(), o.GetName(), err)
		}
		if _, err := dc.Resource(gvr).Patch(ctx, o.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: FieldManager, Force: ptr(true)}); err != nil {
			return rejected(o, "apply", err)
		}
	}
	return nil
}

// Observed is what a cluster has of Karpenter's objects.
type Observed struct {
	// Installed is false when the CRDs are missing (then there are no objects either).
	Installed bool
	// Objects are the NodePools and EC2NodeClasses labelled as the cluster's, node classes first.
	Objects []*unstructured.Unstructured
	// Foreign are the other NodePools and EC2NodeClasses (nuv's for another cluster, or not nuv's):
	// a group whose name is among them cannot be created.
	Foreign []*unstructured.Unstructured
}

// Group returns the cluster's objects of one node group (nil when it has none).
func (o *Observed) Group(name string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range o.Objects {
		if u.GetName() == name {
			out = append(out, u)
		}
	}
	return out
}

// ForeignNamed returns the foreign objects named name (nil when none).
func (o *Observed) ForeignNamed(name string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range o.Foreign {
		if u.GetName() == name {
			out = append(out, u)
		}
	}
	return out
}

// Groups lists the node groups the cluster's objects belong to, sorted.
func (o *Observed) Groups() []string {
	seen := map[string]bool{}
	for _, u := range o.Objects {
		seen[u.GetName()] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Observe reads the NodePools and EC2NodeClasses of the cluster (what the engine's Observe needs):
// those labelled nuv.dev/cluster=cluster, and the others apart.
func Observe(ctx context.Context, cfg *rest.Config, cluster string) (*Observed, error) {
	ok, err := Installed(ctx, cfg)
	if err != nil || !ok {
		return &Observed{}, err
	}
	dc, err := client(cfg)
	if err != nil {
		return nil, err
	}
	out := &Observed{Installed: true}
	for _, gvr := range []schema.GroupVersionResource{nodeClassGVR, nodePoolGVR} {
		l, err := dc.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("karpenter: list %s: %w", gvr.Resource, err)
		}
		for i := range l.Items {
			u := &l.Items[i]
			if u.GetLabels()[LabelCluster] == cluster && cluster != "" {
				out.Objects = append(out.Objects, u)
			} else {
				out.Foreign = append(out.Foreign, u)
			}
		}
	}
	return out, nil
}

// Delete deletes objects of Objects, pools before the node classes they use, and waits (within
// ctx) until each is gone (Karpenter's finalizers drain and terminate the nodes first). Objects
// already gone are skipped; an object that is not the cluster's is refused (ForeignError).
func Delete(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	dc, err := client(cfg)
	if err != nil {
		return err
	}
	for _, o := range sortByKind(objs, true) {
		gvr, err := resourceOf(o)
		if err != nil {
			return err
		}
		cl, err := clusterOf(o)
		if err != nil {
			return err
		}
		ri := dc.Resource(gvr)
		live, err := owner(ctx, ri, o, cl)
		if err != nil {
			var fe *ForeignError
			if errors.As(err, &fe) {
				return fmt.Errorf("karpenter: %w", err)
			}
			return rejected(o, "delete", err)
		}
		if live == nil {
			continue
		}
		uid := live.GetUID()
		err = ri.Delete(ctx, o.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return rejected(o, "delete", err)
		}
		for {
			live, err := ri.Get(ctx, o.GetName(), metav1.GetOptions{})
			if apierrors.IsNotFound(err) || err == nil && live.GetUID() != uid {
				break
			}
			if err != nil {
				return rejected(o, "delete", err)
			}
			if err := sleep(ctx); err != nil {
				return fmt.Errorf("karpenter: %s %q still there (finalizers %v): %w", o.GetKind(), o.GetName(), live.GetFinalizers(), err)
			}
		}
	}
	return nil
}

// sortByKind orders node classes before node pools (reverse: pools first), keeping the order
// within a kind.
func sortByKind(objs []*unstructured.Unstructured, poolsFirst bool) []*unstructured.Unstructured {
	out := append([]*unstructured.Unstructured(nil), objs...)
	rank := func(o *unstructured.Unstructured) int {
		if (o.GetKind() == KindNodePool) == poolsFirst {
			return 0
		}
		return 1
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

func sleep(ctx context.Context) error {
	t := time.NewTimer(pollInterval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func ptr[T any](v T) *T { return &v }

package upgrade

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// WhiskGVR is the reference operator's instance resource.
var WhiskGVR = schema.GroupVersionResource{Group: "nuv.dev", Version: "v1alpha1", Resource: "whisks"}

var workloadKinds = []struct {
	kind string
	gvr  schema.GroupVersionResource
}{
	{"Deployment", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}},
	{"StatefulSet", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}},
}

// Snapshot is an instance as it was at one moment: its UID and the workloads it owns (by owner
// reference), with their UIDs, labels and annotations.
type Snapshot struct {
	Namespace, Name, UID string
	Workloads            map[string]Workload // "Deployment ns/name"
}

// Workload is one object an instance owns.
type Workload struct {
	UID         string
	Labels      map[string]string
	Annotations map[string]string
}

// Take reads the instance ns/name and the Deployments and StatefulSets it owns.
func Take(ctx context.Context, dyn dynamic.Interface, ns, name string) (*Snapshot, error) {
	w, err := dyn.Resource(WhiskGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("Whisk %s/%s: %w", ns, name, err)
	}
	s := &Snapshot{Namespace: ns, Name: name, UID: string(w.GetUID()), Workloads: map[string]Workload{}}
	for _, k := range workloadKinds {
		list, err := dyn.Resource(k.gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("%ss of Whisk %s/%s: %w", k.kind, ns, name, err)
		}
		for _, o := range list.Items {
			if owned(&o, w.GetUID()) {
				s.Workloads[k.kind+" "+ns+"/"+o.GetName()] = Workload{UID: string(o.GetUID()), Labels: o.GetLabels(), Annotations: o.GetAnnotations()}
			}
		}
	}
	return s, nil
}

func owned(o *unstructured.Unstructured, uid types.UID) bool {
	for _, r := range o.GetOwnerReferences() {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// Instance names the snapshot's instance as namespace/name.
func (s *Snapshot) Instance() string { return s.Namespace + "/" + s.Name }

// Compare tells whether after is the same instance as s (same UID) and lists what changed on its
// workloads: labels and annotations added, changed or removed, workloads recreated (a new UID),
// added or gone. The list is sorted.
func (s *Snapshot) Compare(after *Snapshot) (sameUID bool, changed []string) {
	sameUID = s.UID != "" && s.UID == after.UID
	keys := map[string]bool{}
	for k := range s.Workloads {
		keys[k] = true
	}
	for k := range after.Workloads {
		keys[k] = true
	}
	for k := range keys {
		b, inB := s.Workloads[k]
		a, inA := after.Workloads[k]
		switch {
		case !inA:
			changed = append(changed, k+": gone")
			continue
		case !inB:
			changed = append(changed, k+": added")
			continue
		case a.UID != b.UID:
			changed = append(changed, k+": recreated")
		}
		changed = append(changed, diffMap(k, "label", b.Labels, a.Labels)...)
		changed = append(changed, diffMap(k, "annotation", b.Annotations, a.Annotations)...)
	}
	sort.Strings(changed)
	return sameUID, changed
}

// skipped tells the annotations that change on every rollout or apply and say nothing about the
// operator.
func skipped(what, key string) bool {
	return what == "annotation" && (key == "deployment.kubernetes.io/revision" || key == "kubectl.kubernetes.io/last-applied-configuration")
}

func diffMap(obj, what string, before, after map[string]string) []string {
	var out []string
	for k, v := range after {
		if skipped(what, k) {
			continue
		}
		old, ok := before[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: %s %s=%s added", obj, what, k, short(v)))
		case old != v:
			out = append(out, fmt.Sprintf("%s: %s %s %s -> %s", obj, what, k, short(old), short(v)))
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok && !skipped(what, k) {
			out = append(out, fmt.Sprintf("%s: %s %s removed", obj, what, k))
		}
	}
	return out
}

func short(v string) string {
	v = strings.ReplaceAll(v, "\n", " ")
	if len(v) > 60 {
		return v[:57] + "..."
	}
	return v
}

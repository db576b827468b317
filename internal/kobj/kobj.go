// Package kobj reads Kubernetes objects in their unstructured form the way nuv's verbs need it:
// the conditions in an object's status (and one line that describes one), a Deployment's rollout
// and its images, and objects decoded from JSON. The deploy verbs, the add-ons and the slim front
// (`nuv status`) share it, so it links nothing beyond apimachinery's unstructured objects (the
// objects of a kustomize build are package kustomized's).
package kobj

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Condition is one entry of status.conditions.
type Condition struct {
	Type, Status, Reason, Message string
	// ObservedGeneration is the generation the condition was computed for (0 when not given).
	ObservedGeneration int64
}

// FindCondition returns the condition of type typ in u's status, or nil.
func FindCondition(u *unstructured.Unstructured, typ string) *Condition {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		var og int64
		switch v := m["observedGeneration"].(type) {
		case int64:
			og = v
		case float64:
			og = int64(v)
		}
		return &Condition{Type: typ, Status: s("status"), Reason: s("reason"), Message: s("message"), ObservedGeneration: og}
	}
	return nil
}

// Suffix describes c for the end of a progress or error line: "; Available=False (Reason):
// message", or "" for a nil condition.
func (c *Condition) Suffix() string {
	if c == nil {
		return ""
	}
	s := fmt.Sprintf("; %s=%s", c.Type, c.Status)
	if c.Reason != "" {
		s += " (" + c.Reason + ")"
	}
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

// FromJSON decodes one object from JSON (a YAML document converted with sigs.k8s.io/yaml). An
// object without apiVersion or kind is an error saying which is missing; unlike
// unstructured.UnmarshalJSON the message never quotes the object (it may hold secrets).
func FromJSON(js []byte) (*unstructured.Unstructured, error) {
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	var missing []string
	for _, k := range []string{"apiVersion", "kind"} {
		if s, _ := m[k].(string); s == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no %s (every object needs apiVersion, kind and metadata)", strings.Join(missing, " and no "))
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, fmt.Errorf("%s: %w", m["kind"], err)
	}
	return u, nil
}

// DeploymentAvailable is the check of a Deployment rollout: the current generation observed,
// every replica updated and available, the Available condition true; otherwise why not.
func DeploymentAvailable(obj *unstructured.Unstructured) (bool, string) {
	if obj == nil {
		return false, "not found"
	}
	gen := obj.GetGeneration()
	og, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	want, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	upd, _, _ := unstructured.NestedInt64(obj.Object, "status", "updatedReplicas")
	avail, _, _ := unstructured.NestedInt64(obj.Object, "status", "availableReplicas")
	total, _, _ := unstructured.NestedInt64(obj.Object, "status", "replicas")
	cond := FindCondition(obj, "Available")
	switch {
	case og < gen:
		return false, "rollout not yet observed by the deployment controller"
	case upd < want:
		return false, fmt.Sprintf("%d/%d replicas updated", upd, want)
	case total > upd:
		return false, fmt.Sprintf("%d old replicas pending termination", total-upd)
	case avail < want:
		return false, fmt.Sprintf("%d/%d replicas available%s", avail, want, cond.Suffix())
	case cond == nil || cond.Status != "True":
		return false, "Available condition not true" + cond.Suffix()
	}
	return true, ""
}

// ContainerImages returns the images of a workload's pod template containers; ok is false when
// it has no spec.template.spec.containers.
func ContainerImages(u *unstructured.Unstructured) (images []string, ok bool, err error) {
	cs, ok, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if !ok || err != nil {
		return nil, ok, err
	}
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok {
			s, _ := m["image"].(string)
			images = append(images, s)
		}
	}
	return images, true, nil
}

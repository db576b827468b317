// Package kobj reads Kubernetes objects in their unstructured form the way nuv's verbs need it:
// the conditions in an object's status (and one line that describes one), and the objects a
// kustomize build produced. The deploy verbs and the add-ons share it.
package kobj

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/resmap"
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

// FromResMap returns the objects of a kustomize build; what names the build in errors.
func FromResMap(rm resmap.ResMap, what string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		data, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("kustomize %s: %w", what, err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("kustomize %s: %w", what, err)
		}
		objs = append(objs, u)
	}
	return objs, nil
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

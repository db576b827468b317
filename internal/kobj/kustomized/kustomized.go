// Package kustomized turns the resources of a kustomize build into unstructured objects. It lives
// apart from package kobj so that kobj's readers stay free of kustomize (the slim front links
// kobj).
package kustomized

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/resmap"
)

// Objects returns the objects of a kustomize build; what names the build in errors.
func Objects(rm resmap.ResMap, what string) ([]*unstructured.Unstructured, error) {
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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of Whisk.
var GroupVersion = schema.GroupVersion{Group: "nuv.dev", Version: "v1alpha1"}

// AddToScheme registers Whisk and WhiskList in a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Whisk{}, &WhiskList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

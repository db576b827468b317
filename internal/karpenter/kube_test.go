package karpenter

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestErrorsNameObjectFieldAndMessage: what the API server answers is turned into errors that
// name the object, each field and its message (the integration test sees the real answers).
func TestErrorsNameObjectFieldAndMessage(t *testing.T) {
	np := mustObjects(t, testCluster, goldenGroups[0].g)[1]
	gk := schema.GroupKind{Group: GroupCore, Kind: KindNodePool}
	invalid := apierrors.NewInvalid(gk, "web", field.ErrorList{
		field.Invalid(field.NewPath("spec", "template", "spec", "requirements"), "", "requirements with operator 'In' must have a value defined"),
		field.Required(field.NewPath("spec", "template", "spec", "nodeClassRef"), ""),
	})
	for _, tc := range []struct {
		name string
		err  error
		want string
		is   error
	}{
		{"invalid", invalid, `NodePool "web" rejected by the API server: spec.template.spec.requirements: Invalid value: "": requirements with operator 'In' must have a value defined; spec.template.spec.nodeClassRef: Required value`, nil},
		{"bad request", apierrors.NewBadRequest("spec.limits: bad quantity"), `NodePool "web" rejected by the API server: spec.limits: bad quantity`, nil},
		{"no CRD", &meta.NoKindMatchError{GroupKind: gk}, `karpenter: apply NodePool "web": the Karpenter CRDs are not installed`, ErrNotInstalled},
		{"resource not served", apierrors.NewNotFound(schema.GroupResource{Group: GroupCore, Resource: "nodepools"}, "web"), `karpenter: apply NodePool "web": the Karpenter CRDs are not installed`, ErrNotInstalled},
		{"other", fmt.Errorf("connection refused"), `karpenter: apply NodePool "web": connection refused`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := rejected(np, "apply", tc.err)
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got  %v\nwant %s...", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%v is not %v", err, tc.is)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("%v does not wrap the API error", err)
			}
		})
	}
	for _, tc := range []struct {
		e    ForeignError
		want string
	}{
		{ForeignError{Kind: KindNodePool, Name: "web"}, `NodePool "web" exists but is not this cluster's (it has no nuv.dev/cluster label)`},
		{ForeignError{Kind: KindNodeClass, Name: "web", Owner: "prod"}, `EC2NodeClass "web" exists but is not this cluster's (it belongs to nuv cluster "prod")`},
	} {
		if !strings.HasPrefix(tc.e.Error(), tc.want) {
			t.Errorf("got  %v\nwant %s...", tc.e.Error(), tc.want)
		}
	}
}

func TestKindsAndOrder(t *testing.T) {
	objs := append(Named("dev", "a"), Named("dev", "b")...)
	var got []string
	for _, o := range sortByKind(objs, true) {
		got = append(got, o.GetKind()+"/"+o.GetName())
	}
	if strings.Join(got, " ") != "NodePool/a NodePool/b EC2NodeClass/a EC2NodeClass/b" {
		t.Errorf("delete order %v", got)
	}
	got = nil
	for _, o := range sortByKind(objs, false) {
		got = append(got, o.GetKind()+"/"+o.GetName())
	}
	if strings.Join(got, " ") != "EC2NodeClass/a EC2NodeClass/b NodePool/a NodePool/b" {
		t.Errorf("apply order %v", got)
	}
	for _, o := range objs {
		if c, err := clusterOf(o); err != nil || c != "dev" {
			t.Errorf("clusterOf(%s) = %q, %v", o.GetName(), c, err)
		}
		if _, err := resourceOf(o); err != nil {
			t.Error(err)
		}
	}
	o := objs[0].DeepCopy()
	o.SetAPIVersion("karpenter.k8s.aws/v1beta1")
	if _, err := resourceOf(o); err == nil || !strings.Contains(err.Error(), "not a kind nuv maps") {
		t.Errorf("v1beta1: %v", err)
	}
	o.SetLabels(nil)
	if _, err := clusterOf(o); err == nil || !strings.Contains(err.Error(), "has no nuv.dev/cluster label") {
		t.Errorf("unlabelled: %v", err)
	}
}

package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeepCopyIsIndependent(t *testing.T) {
	two := int32(2)
	w := &Whisk{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Labels: map[string]string{"a": "b"}},
		Spec:       WhiskSpec{Controller: ControllerSpec{Enabled: true, Replicas: &two}},
		Status:     WhiskStatus{Conditions: []metav1.Condition{{Type: ConditionReady, Status: metav1.ConditionTrue}}},
	}
	c := w.DeepCopy()
	*c.Spec.Controller.Replicas = 5
	c.Labels["a"] = "x"
	c.Status.Conditions[0].Status = metav1.ConditionFalse
	if *w.Spec.Controller.Replicas != 2 || w.Labels["a"] != "b" || w.Status.Conditions[0].Status != metav1.ConditionTrue {
		t.Fatalf("copy shares memory with the original: %+v", w)
	}
	l := &WhiskList{Items: []Whisk{*w}}
	lc := l.DeepCopyObject().(*WhiskList)
	lc.Items[0].Name = "other"
	if l.Items[0].Name != "w" {
		t.Fatal("list copy shares items")
	}
}

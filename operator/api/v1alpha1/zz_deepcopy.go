package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DeepCopyInto copies w into out.
func (w *Whisk) DeepCopyInto(out *Whisk) {
	*out = *w
	out.TypeMeta = w.TypeMeta
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	w.Spec.DeepCopyInto(&out.Spec)
	w.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a copy of w.
func (w *Whisk) DeepCopy() *Whisk {
	if w == nil {
		return nil
	}
	out := new(Whisk)
	w.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (w *Whisk) DeepCopyObject() runtime.Object { return w.DeepCopy() }

// DeepCopyInto copies l into out.
func (l *WhiskList) DeepCopyInto(out *WhiskList) {
	*out = *l
	out.TypeMeta = l.TypeMeta
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Whisk, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of l.
func (l *WhiskList) DeepCopy() *WhiskList {
	if l == nil {
		return nil
	}
	out := new(WhiskList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *WhiskList) DeepCopyObject() runtime.Object { return l.DeepCopy() }

// DeepCopyInto copies s into out.
func (s *WhiskSpec) DeepCopyInto(out *WhiskSpec) {
	*out = *s
	out.Controller.Replicas = copyInt32(s.Controller.Replicas)
	out.Static.Replicas = copyInt32(s.Static.Replicas)
}

// DeepCopyInto copies s into out.
func (s *WhiskStatus) DeepCopyInto(out *WhiskStatus) {
	*out = *s
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

func copyInt32(p *int32) *int32 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// DeepCopy returns a copy of s.
func (s *WhiskStatus) DeepCopy() *WhiskStatus {
	if s == nil {
		return nil
	}
	out := new(WhiskStatus)
	s.DeepCopyInto(out)
	return out
}

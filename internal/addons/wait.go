package addons

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nuv-dev/nuv/internal/kobj"
)

// ready judges one observed state of an object: ready, and if not, why (one line).
type ready func(obj *unstructured.Unstructured) (bool, string)

// readiness returns the check of a kind nuv waits for, or nil for kinds ready once applied.
func readiness(kind string) ready {
	switch kind {
	case "CustomResourceDefinition":
		return crdEstablished
	case "Deployment":
		return deploymentReady
	case "StatefulSet":
		return statefulSetReady
	case "DaemonSet":
		return daemonSetReady
	}
	return nil
}

// pollEvery is how often a wait reads the object again.
const pollEvery = 250 * time.Millisecond

// NotReadyError is a wait that ran out of time: the last thing seen about the object.
type NotReadyError struct {
	Timeout time.Duration
	Last    string
}

func (e *NotReadyError) Error() string {
	return fmt.Sprintf("not ready after %s: %s", e.Timeout, e.Last)
}

// waitReady polls the object until its kind's check passes or timeout ends, printing each new
// reason it is not ready yet.
func (t *Target) waitReady(ctx context.Context, addon string, r ObjRef, timeout time.Duration, w io.Writer) error {
	check := readiness(r.Kind)
	if check == nil {
		return nil
	}
	pr := &progress{w: w, ref: addon + ": " + r.String()}
	return t.poll(ctx, r, timeout, func(u *unstructured.Unstructured) (bool, string) {
		if u == nil {
			return false, "not found"
		}
		ok, why := check(u)
		if !ok {
			pr.report(why)
		}
		return ok, why
	})
}

// waitGone polls until the object no longer exists.
func (t *Target) waitGone(ctx context.Context, r ObjRef, timeout time.Duration, w io.Writer) error {
	pr := &progress{w: w, ref: r.String()}
	return t.poll(ctx, r, timeout, func(u *unstructured.Unstructured) (bool, string) {
		if u == nil {
			return true, ""
		}
		why := "still present"
		if u.GetDeletionTimestamp() != nil {
			why = "being deleted"
		}
		if f := u.GetFinalizers(); len(f) > 0 {
			why += fmt.Sprintf(" (finalizers: %v)", f)
		}
		pr.report(why)
		return false, why
	})
}

func (t *Target) poll(ctx context.Context, r ObjRef, timeout time.Duration, done func(*unstructured.Unstructured) (bool, string)) error {
	deadline := time.Now().Add(timeout)
	last := "not observed yet"
	for {
		u, err := t.get(ctx, r)
		if err != nil {
			return err
		}
		ok, why := done(u)
		if ok {
			return nil
		}
		last = why
		if time.Now().After(deadline) {
			return &NotReadyError{Timeout: timeout, Last: last}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %s)", ctx.Err(), last)
		case <-time.After(pollEvery):
		}
	}
}

func crdEstablished(u *unstructured.Unstructured) (bool, string) {
	c := kobj.FindCondition(u, "Established")
	if c != nil && c.Status == "True" {
		return true, ""
	}
	return false, "not Established yet" + c.Suffix()
}

func deploymentReady(u *unstructured.Unstructured) (bool, string) {
	want := int64(1)
	if v, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); ok {
		want = v
	}
	og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	upd, _, _ := unstructured.NestedInt64(u.Object, "status", "updatedReplicas")
	avail, _, _ := unstructured.NestedInt64(u.Object, "status", "availableReplicas")
	total, _, _ := unstructured.NestedInt64(u.Object, "status", "replicas")
	cond := kobj.FindCondition(u, "Available")
	switch {
	case og < u.GetGeneration():
		return false, "rollout not yet observed by the deployment controller"
	case upd < want:
		return false, fmt.Sprintf("%d/%d replicas updated%s", upd, want, kobj.FindCondition(u, "Progressing").Suffix())
	case total > upd:
		return false, fmt.Sprintf("%d old replicas pending termination", total-upd)
	case avail < want:
		return false, fmt.Sprintf("%d/%d replicas available%s", avail, want, cond.Suffix())
	case want > 0 && (cond == nil || cond.Status != "True"):
		return false, "Available condition not true" + cond.Suffix()
	}
	return true, ""
}

func statefulSetReady(u *unstructured.Unstructured) (bool, string) {
	want := int64(1)
	if v, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); ok {
		want = v
	}
	og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	rdy, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
	upd, _, _ := unstructured.NestedInt64(u.Object, "status", "updatedReplicas")
	switch {
	case og < u.GetGeneration():
		return false, "rollout not yet observed by the statefulset controller"
	case upd < want:
		return false, fmt.Sprintf("%d/%d replicas updated", upd, want)
	case rdy < want:
		return false, fmt.Sprintf("%d/%d replicas ready", rdy, want)
	}
	return true, ""
}

func daemonSetReady(u *unstructured.Unstructured) (bool, string) {
	og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	desired, _, _ := unstructured.NestedInt64(u.Object, "status", "desiredNumberScheduled")
	rdy, _, _ := unstructured.NestedInt64(u.Object, "status", "numberReady")
	upd, _, _ := unstructured.NestedInt64(u.Object, "status", "updatedNumberScheduled")
	switch {
	case og < u.GetGeneration():
		return false, "rollout not yet observed by the daemonset controller"
	case upd < desired:
		return false, fmt.Sprintf("%d/%d pods updated", upd, desired)
	case rdy < desired:
		return false, fmt.Sprintf("%d/%d pods ready", rdy, desired)
	}
	return true, ""
}

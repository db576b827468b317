package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/nuv-dev/nuv/internal/kobj"
)

// check judges one observed state of an object: done, and if not, why (one line).
// obj is nil when the object does not exist.
type check func(obj *unstructured.Unstructured) (done bool, why string)

// TimeoutError reports a wait that ran out of time: the object and the last thing seen about it.
type TimeoutError struct {
	Object  string
	Timeout time.Duration
	Last    string // last condition / reason seen
	Events  []string
}

func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("timed out after %s waiting for %s: %s", e.Timeout, e.Object, e.Last)
	if len(e.Events) > 0 {
		msg += "\n  recent events:\n    " + strings.Join(e.Events, "\n    ")
	}
	return msg
}

// absenceDone reports whether ok is satisfied by the object's absence (a wait for a deletion).
func absenceDone(ok check) bool {
	done, _ := ok(nil)
	return done
}

// waitFor watches obj until ok says done or timeout passes, printing to out each new reason it is
// not done yet (and new warning events about it and its children). On timeout it returns a
// *TimeoutError naming the object, its last condition and its recent events.
func (t *target) waitFor(ctx context.Context, obj *unstructured.Unstructured, timeout time.Duration, out io.Writer, ok check) error {
	ri, _, err := t.resource(obj)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ref := objRef(obj)
	lastWhy := "not observed yet"
	seenEvents := map[string]bool{}
	report := func(why string) {
		if why != lastWhy {
			fmt.Fprintf(out, "  … %s: %s\n", ref, why)
			lastWhy = why
		}
	}
	showEvents := func() {
		for _, e := range t.events(ctx, obj, true) {
			if !seenEvents[e] {
				seenEvents[e] = true
				fmt.Fprintf(out, "  ! %s\n", e)
			}
		}
	}
	sel := fields.OneTermEqualSelector("metadata.name", obj.GetName()).String()
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	for {
		list, err := ri.List(ctx, metav1.ListOptions{FieldSelector: sel})
		if apierrors.IsNotFound(err) && absenceDone(ok) {
			return nil // the object's type went away (its CRD was deleted): so did the object
		}
		if err != nil {
			if ctx.Err() != nil {
				return t.timeoutErr(obj, timeout, lastWhy)
			}
			return fmt.Errorf("watch %s: %w", ref, err)
		}
		var cur *unstructured.Unstructured
		if len(list.Items) > 0 {
			cur = &list.Items[0]
		}
		if done, why := ok(cur); done {
			return nil
		} else {
			report(why)
		}
		w, err := ri.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.GetResourceVersion(), AllowWatchBookmarks: true})
		if apierrors.IsNotFound(err) && absenceDone(ok) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return t.timeoutErr(obj, timeout, lastWhy)
			}
			return fmt.Errorf("watch %s: %w", ref, err)
		}
		done, err := func() (bool, error) {
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return false, t.timeoutErr(obj, timeout, lastWhy)
				case <-tick.C:
					showEvents()
				case ev, open := <-w.ResultChan():
					if !open {
						return false, nil // re-list and watch again
					}
					switch ev.Type {
					case watch.Error:
						if st := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(st) || apierrors.IsGone(st) {
							return false, nil
						}
						return false, fmt.Errorf("watch %s: %v", ref, apierrors.FromObject(ev.Object))
					case watch.Bookmark:
						continue
					}
					var u *unstructured.Unstructured
					if ev.Type != watch.Deleted {
						u, _ = ev.Object.(*unstructured.Unstructured)
					}
					if done, why := ok(u); done {
						return true, nil
					} else {
						report(why)
					}
				}
			}
		}()
		if err != nil || done {
			return err
		}
	}
}

func (t *target) timeoutErr(obj *unstructured.Unstructured, timeout time.Duration, last string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return &TimeoutError{Object: objRef(obj), Timeout: timeout, Last: last, Events: t.events(ctx, obj, false)}
}

// events returns the recent events about obj and its children (objects named <name>-...), newest
// last; warningsOnly keeps only warnings.
func (t *target) events(ctx context.Context, obj *unstructured.Unstructured, warningsOnly bool) []string {
	ns := obj.GetNamespace()
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	list, err := t.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var evs []corev1.Event
	for _, e := range list.Items {
		n := e.InvolvedObject.Name
		if n != obj.GetName() && !strings.HasPrefix(n, obj.GetName()+"-") {
			continue
		}
		if warningsOnly && e.Type != corev1.EventTypeWarning {
			continue
		}
		evs = append(evs, e)
	}
	sort.SliceStable(evs, func(i, j int) bool { return eventTime(evs[i]).Before(eventTime(evs[j])) })
	if len(evs) > 5 {
		evs = evs[len(evs)-5:]
	}
	var out []string
	for _, e := range evs {
		out = append(out, fmt.Sprintf("%s %s %s/%s: %s", e.Type, e.Reason, strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name, strings.TrimSpace(e.Message)))
	}
	return out
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// IsTimeout tells whether err is a wait that ran out of time.
func IsTimeout(err error) bool {
	var te *TimeoutError
	return errors.As(err, &te)
}

// gone is the check of a deletion wait.
func gone(obj *unstructured.Unstructured) (bool, string) {
	if obj == nil {
		return true, ""
	}
	why := "still present"
	if obj.GetDeletionTimestamp() != nil {
		why = "being deleted"
	}
	if f := obj.GetFinalizers(); len(f) > 0 {
		why += fmt.Sprintf(" (finalizers: %s)", strings.Join(f, ", "))
	}
	return false, why
}

// deploymentAvailable is the check of a Deployment rollout (kobj.DeploymentAvailable: the current
// generation observed, every replica updated and available, the Available condition true).
func deploymentAvailable(obj *unstructured.Unstructured) (bool, string) {
	return kobj.DeploymentAvailable(obj)
}

// whiskReady is the check of a Whisk: Ready true for the current generation; otherwise the
// component conditions that are not true.
func whiskReady(obj *unstructured.Unstructured) (bool, string) {
	if obj == nil {
		return false, "not found"
	}
	ready := kobj.FindCondition(obj, "Ready")
	if ready == nil {
		return false, "no Ready condition yet (is the operator running?)"
	}
	if ready.ObservedGeneration < obj.GetGeneration() {
		return false, fmt.Sprintf("generation %d not yet reconciled (is the operator running?); last Ready=%s (%s)", obj.GetGeneration(), ready.Status, ready.Reason)
	}
	if ready.Status == "True" {
		return true, ""
	}
	return false, fmt.Sprintf("Ready=%s (%s): %s", ready.Status, ready.Reason, ready.Message)
}

package upgrade

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// Leaders returns the holders of the leader-election Leases in namespace ns (lease name -> holder
// identity): an operator built on controller-runtime holds one while it reconciles.
func Leaders(ctx context.Context, cs kubernetes.Interface, ns string) (map[string]string, error) {
	list, err := cs.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("leases in %s: %w", ns, err)
	}
	out := map[string]string{}
	for _, l := range list.Items {
		if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
			out[l.Name] = *l.Spec.HolderIdentity
		}
	}
	return out, nil
}

// WaitNewOperator waits until the upgraded operator runs and leads: its Deployment ns/name fully
// rolled out (every replica updated and available, none of the old left), and, when the operator
// held leader-election Leases before the upgrade (before, from Leaders), one of them held by
// someone else: a new operator process that has started its controllers. Without that wait the
// instance's state read right after the upgrade would still be the old operator's work.
func WaitNewOperator(ctx context.Context, cs kubernetes.Interface, ns, name string, before map[string]string, timeout time.Duration, out io.Writer) error {
	deadline := time.Now().Add(timeout)
	for last := ""; ; {
		why, err := newOperatorPending(ctx, cs, ns, name, before)
		if err != nil {
			return err
		}
		if why == "" {
			return nil
		}
		if why != last {
			fmt.Fprintf(out, "  … %s\n", why)
			last = why
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the upgraded operator did not take over within %s: %s", timeout, why)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func newOperatorPending(ctx context.Context, cs kubernetes.Interface, ns, name string, before map[string]string) (string, error) {
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("operator Deployment %s/%s: %w", ns, name, err)
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	if st.ObservedGeneration < d.Generation || st.UpdatedReplicas < want || st.Replicas > st.UpdatedReplicas || st.AvailableReplicas < want {
		return fmt.Sprintf("operator %s/%s rolling out: %d/%d updated, %d available, %d in all", ns, name, st.UpdatedReplicas, want, st.AvailableReplicas, st.Replicas), nil
	}
	if len(before) == 0 {
		return "", nil
	}
	now, err := Leaders(ctx, cs, ns)
	if err != nil {
		return "", err
	}
	for lease, holder := range before {
		if h := now[lease]; h != "" && h != holder {
			return "", nil
		}
	}
	var names []string
	for lease := range before {
		names = append(names, lease)
	}
	sort.Strings(names)
	return fmt.Sprintf("waiting for the upgraded operator to take the lease %s", strings.Join(names, ", ")), nil
}

// WaitQuiet waits until Whisk ns/whisk is Ready, every workload it owns has rolled out (observed
// its generation, all replicas updated and ready), and neither it nor those workloads changed for
// quiet: what the upgraded operator does to an existing instance has been done.
func WaitQuiet(ctx context.Context, dyn dynamic.Interface, ns, whisk string, quiet, timeout time.Duration, out io.Writer) error {
	deadline := time.Now().Add(timeout)
	var (
		mark    string
		since   time.Time
		lastWhy string
	)
	for {
		fp, why, err := fingerprint(ctx, dyn, ns, whisk)
		if err != nil {
			return err
		}
		switch {
		case why != "":
			mark = ""
			if why != lastWhy {
				fmt.Fprintf(out, "  … %s\n", why)
				lastWhy = why
			}
		case fp != mark:
			mark, since = fp, time.Now()
		case time.Since(since) >= quiet:
			return nil
		}
		if time.Now().After(deadline) {
			if why == "" {
				why = "its workloads kept changing"
			}
			return fmt.Errorf("Whisk %s/%s did not settle after the upgrade within %s: %s", ns, whisk, timeout, why)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// fingerprint is the resource versions of the Whisk and its workloads, or why they are not
// settled (not Ready, a rollout under way).
func fingerprint(ctx context.Context, dyn dynamic.Interface, ns, whisk string) (string, string, error) {
	w, err := dyn.Resource(WhiskGVR).Namespace(ns).Get(ctx, whisk, metav1.GetOptions{})
	if err != nil {
		return "", "", fmt.Errorf("Whisk %s/%s: %w", ns, whisk, err)
	}
	if !conditionTrue(w, "Ready") {
		return "", fmt.Sprintf("whisk %s/%s: not Ready", ns, whisk), nil
	}
	parts := []string{"whisk=" + w.GetResourceVersion()}
	for _, k := range workloadKinds {
		list, err := dyn.Resource(k.gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", "", err
		}
		for _, o := range list.Items {
			if !owned(&o, w.GetUID()) {
				continue
			}
			if why := rollingOut(&o); why != "" {
				return "", fmt.Sprintf("%s %s/%s: %s", strings.ToLower(k.kind), ns, o.GetName(), why), nil
			}
			parts = append(parts, k.kind+"/"+o.GetName()+"="+o.GetResourceVersion())
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ","), "", nil
}

func conditionTrue(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return m["status"] == "True"
		}
	}
	return false
}

// rollingOut says why a Deployment or StatefulSet is not rolled out, "" when it is.
func rollingOut(o *unstructured.Unstructured) string {
	gen := o.GetGeneration()
	obs, _, _ := unstructured.NestedInt64(o.Object, "status", "observedGeneration")
	want, found, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	updated, _, _ := unstructured.NestedInt64(o.Object, "status", "updatedReplicas")
	ready, _, _ := unstructured.NestedInt64(o.Object, "status", "readyReplicas")
	all, _, _ := unstructured.NestedInt64(o.Object, "status", "replicas")
	switch {
	case obs < gen:
		return "spec change not yet observed"
	case updated < want || all > want:
		return fmt.Sprintf("%d/%d replicas updated, %d in all", updated, want, all)
	case ready < want:
		return fmt.Sprintf("%d/%d replicas ready", ready, want)
	}
	if o.GetKind() == "StatefulSet" {
		cur, _, _ := unstructured.NestedString(o.Object, "status", "currentRevision")
		upd, _, _ := unstructured.NestedString(o.Object, "status", "updateRevision")
		if upd != "" && cur != upd {
			return "revision " + upd + " rolling out"
		}
	}
	return ""
}

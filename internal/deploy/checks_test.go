package deploy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	objs, err := decodeObjects("test.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return objs[0]
}

func TestDeploymentAvailable(t *testing.T) {
	const head = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 2}\nspec: {replicas: 2}\n"
	for _, tc := range []struct {
		name, status string
		done         bool
		why          string
	}{
		{"old generation", "status: {observedGeneration: 1}", false, "not yet observed"},
		{"updating", "status: {observedGeneration: 2, updatedReplicas: 1}", false, "1/2 replicas updated"},
		{"old pods", "status: {observedGeneration: 2, updatedReplicas: 2, replicas: 3}", false, "1 old replicas"},
		{"unavailable", "status: {observedGeneration: 2, updatedReplicas: 2, replicas: 2, availableReplicas: 1, conditions: [{type: Available, status: 'False', reason: MinimumReplicasUnavailable}]}", false, "1/2 replicas available; Available=False (MinimumReplicasUnavailable)"},
		{"available", "status: {observedGeneration: 2, updatedReplicas: 2, replicas: 2, availableReplicas: 2, conditions: [{type: Available, status: 'True'}]}", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, why := deploymentAvailable(obj(t, head+tc.status))
			if done != tc.done || !strings.Contains(why, tc.why) {
				t.Errorf("got %v %q, want %v containing %q", done, why, tc.done, tc.why)
			}
		})
	}
	if done, why := deploymentAvailable(nil); done || why != "not found" {
		t.Errorf("nil: %v %q", done, why)
	}
}

func TestWhiskReady(t *testing.T) {
	const head = "apiVersion: nuv.dev/v1alpha1\nkind: Whisk\nmetadata: {name: w, generation: 3}\n"
	for _, tc := range []struct {
		name, status string
		done         bool
		why          string
	}{
		{"no status", "", false, "no Ready condition yet"},
		{"stale", "status: {conditions: [{type: Ready, status: 'True', reason: Ready, observedGeneration: 2}]}", false, "generation 3 not yet reconciled"},
		{"failing", "status: {conditions: [{type: Ready, status: 'False', reason: ReconcileError, message: forbidden, observedGeneration: 3}]}", false, "Ready=False (ReconcileError): forbidden"},
		{"ready", "status: {conditions: [{type: Ready, status: 'True', reason: Ready, observedGeneration: 3}]}", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, why := whiskReady(obj(t, head+tc.status))
			if done != tc.done || !strings.Contains(why, tc.why) {
				t.Errorf("got %v %q, want %v containing %q", done, why, tc.done, tc.why)
			}
		})
	}
}

func TestGone(t *testing.T) {
	if done, _ := gone(nil); !done {
		t.Error("a missing object is gone")
	}
	done, why := gone(obj(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gone1\n  deletionTimestamp: '2026-01-01T00:00:00Z'\n  finalizers: [a/b]\n"))
	if done || why != "being deleted (finalizers: a/b)" {
		t.Errorf("got %v %q", done, why)
	}
}

func TestTimeoutErrorNamesObjectConditionAndEvents(t *testing.T) {
	err := error(&TimeoutError{Object: "whisk default/w", Timeout: 2e9, Last: "Ready=False (Progressing): redis: 0/1", Events: []string{"Warning FailedScheduling pod/w-redis-0: no nodes"}})
	for _, want := range []string{"timed out after 2s", "whisk default/w", "Ready=False (Progressing)", "FailedScheduling"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q missing from %q", want, err.Error())
		}
	}
	if !IsTimeout(err) {
		t.Error("IsTimeout is false")
	}
}

func TestSortForApply(t *testing.T) {
	var objs []*unstructured.Unstructured
	for _, k := range []string{"Deployment", "Whisk", "ClusterRole", "CustomResourceDefinition", "Namespace", "ServiceAccount"} {
		u := &unstructured.Unstructured{}
		u.SetKind(k)
		objs = append(objs, u)
	}
	sortForApply(objs)
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind())
	}
	if want := "Namespace CustomResourceDefinition ServiceAccount ClusterRole Deployment Whisk"; strings.Join(got, " ") != want {
		t.Errorf("order = %v, want %s", got, want)
	}
}

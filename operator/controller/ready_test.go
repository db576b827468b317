package controller

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeploymentReady(t *testing.T) {
	two := int32(2)
	meta := metav1.ObjectMeta{Name: "d", Generation: 2}
	for _, tc := range []struct {
		name   string
		status appsv1.DeploymentStatus
		ready  bool
		why    string
	}{
		{"not observed", appsv1.DeploymentStatus{ObservedGeneration: 1}, false, "not yet observed"},
		{"updating", appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 1}, false, "1/2 replicas updated"},
		{"unavailable", appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 2, AvailableReplicas: 1}, false, "1/2 replicas available"},
		{"old pods", appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 2, AvailableReplicas: 2}, false, "1 old replicas"},
		{"ready", appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}, true, "2/2 replicas available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: &two}, Status: tc.status}
			ok, why := deploymentReady(d)
			if ok != tc.ready || !strings.Contains(why, tc.why) {
				t.Errorf("got %v %q, want %v containing %q", ok, why, tc.ready, tc.why)
			}
		})
	}
}

func TestStatefulSetReady(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "s", Generation: 1}
	for _, tc := range []struct {
		name   string
		status appsv1.StatefulSetStatus
		ready  bool
		why    string
	}{
		{"not observed", appsv1.StatefulSetStatus{}, false, "not yet observed"},
		{"rolling", appsv1.StatefulSetStatus{ObservedGeneration: 1, CurrentRevision: "a", UpdateRevision: "b"}, false, "rolling out revision b"},
		{"not ready", appsv1.StatefulSetStatus{ObservedGeneration: 1, CurrentRevision: "a", UpdateRevision: "a"}, false, "0/1 replicas ready"},
		{"ready", appsv1.StatefulSetStatus{ObservedGeneration: 1, ReadyReplicas: 1, CurrentRevision: "a", UpdateRevision: "a"}, true, "1/1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := statefulSetReady(&appsv1.StatefulSet{ObjectMeta: meta, Status: tc.status})
			if ok != tc.ready || !strings.Contains(why, tc.why) {
				t.Errorf("got %v %q, want %v containing %q", ok, why, tc.ready, tc.why)
			}
		})
	}
}

func TestJobDone(t *testing.T) {
	for _, tc := range []struct {
		name         string
		conds        []batchv1.JobCondition
		done, failed bool
	}{
		{"running", nil, false, false},
		{"complete", []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}, true, false},
		{"failed", []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Message: "backoff"}}, false, true},
		{"complete false", []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionFalse}}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, failed, _ := jobDone(&batchv1.Job{Status: batchv1.JobStatus{Conditions: tc.conds}})
			if done != tc.done || failed != tc.failed {
				t.Errorf("got done=%v failed=%v", done, failed)
			}
		})
	}
}

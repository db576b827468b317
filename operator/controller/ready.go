package controller

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// deploymentReady tells whether a Deployment has rolled out its current spec, and why not.
func deploymentReady(d *appsv1.Deployment) (bool, string) {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	switch {
	case st.ObservedGeneration < d.Generation:
		return false, fmt.Sprintf("deployment %s: spec change not yet observed", d.Name)
	case st.UpdatedReplicas < want:
		return false, fmt.Sprintf("deployment %s: %d/%d replicas updated", d.Name, st.UpdatedReplicas, want)
	case st.AvailableReplicas < want:
		return false, fmt.Sprintf("deployment %s: %d/%d replicas available", d.Name, st.AvailableReplicas, want)
	case st.Replicas > want:
		return false, fmt.Sprintf("deployment %s: %d old replicas terminating", d.Name, st.Replicas-want)
	}
	return true, fmt.Sprintf("deployment %s: %d/%d replicas available", d.Name, st.AvailableReplicas, want)
}

// statefulSetReady tells whether a StatefulSet has rolled out its current spec, and why not.
func statefulSetReady(s *appsv1.StatefulSet) (bool, string) {
	want := int32(1)
	if s.Spec.Replicas != nil {
		want = *s.Spec.Replicas
	}
	st := s.Status
	switch {
	case st.ObservedGeneration < s.Generation:
		return false, fmt.Sprintf("statefulset %s: spec change not yet observed", s.Name)
	case st.UpdateRevision != "" && st.CurrentRevision != st.UpdateRevision:
		return false, fmt.Sprintf("statefulset %s: rolling out revision %s (%d/%d updated)", s.Name, st.UpdateRevision, st.UpdatedReplicas, want)
	case st.ReadyReplicas < want:
		return false, fmt.Sprintf("statefulset %s: %d/%d replicas ready", s.Name, st.ReadyReplicas, want)
	}
	return true, fmt.Sprintf("statefulset %s: %d/%d replicas ready", s.Name, st.ReadyReplicas, want)
}

// jobDone tells whether a Job completed; failed reports a Job that gave up.
func jobDone(j *batchv1.Job) (done, failed bool, why string) {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, false, fmt.Sprintf("job %s: complete", j.Name)
		case batchv1.JobFailed:
			return false, true, fmt.Sprintf("job %s failed: %s", j.Name, c.Message)
		}
	}
	return false, false, fmt.Sprintf("job %s: %d active, %d succeeded, %d failed", j.Name, j.Status.Active, j.Status.Succeeded, j.Status.Failed)
}

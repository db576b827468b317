package kit

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name string, status corev1.ConditionStatus) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if status != "" {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
			{Type: corev1.NodeReady, Status: status}}
	}
	return n
}

// TestReadyCount: every registered node Ready and at least the spec's number registered, else the
// status names what is missing.
func TestReadyCount(t *testing.T) {
	cp0, cp1 := node("bsm-control-plane-0", corev1.ConditionTrue), node("bsm-control-plane-1", corev1.ConditionTrue)
	for _, tc := range []struct {
		name  string
		nodes []corev1.Node
		want  int
		err   string
	}{
		{"all Ready", []corev1.Node{cp0, cp1}, 2, ""},
		{"more than the spec, all Ready", []corev1.Node{cp0, cp1}, 1, ""},
		{"one NotReady", []corev1.Node{cp0, cp1, node("bsm-workers-0", corev1.ConditionFalse)}, 3,
			"2 of 3 nodes Ready (bsm-workers-0 NotReady)"},
		{"no Ready condition yet", []corev1.Node{node("bsm-workers-0", ""), cp0}, 2,
			"1 of 2 nodes Ready (bsm-workers-0 NotReady)"},
		{"not registered yet", []corev1.Node{cp0}, 4, "1 of 4 nodes Ready, 3 not registered yet"},
		{"none", nil, 1, "0 of 1 nodes Ready, 1 not registered yet"},
		{"unknown and missing", []corev1.Node{node("a", corev1.ConditionUnknown)}, 2, "0 of 2 nodes Ready (a NotReady), 1 not registered yet"},
	} {
		err := readyCount(tc.nodes, tc.want)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.err {
			t.Errorf("%s: readyCount = %q, want %q", tc.name, got, tc.err)
		}
	}
}

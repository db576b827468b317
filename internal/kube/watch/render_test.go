package watch

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestRenderGolden(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	notReady := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse}
	nodes := []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "dev-node-2", CreationTimestamp: at(3 * time.Hour)}, Spec: corev1.NodeSpec{Unschedulable: true},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{notReady}, NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.36.3"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "dev-node-1", CreationTimestamp: at(72 * time.Hour)},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready}, NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.36.3"}}},
	}
	del := metav1.NewTime(now)
	pods := []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "app", CreationTimestamp: at(90 * time.Second)},
			Spec:   corev1.PodSpec{NodeName: "dev-node-1", Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Ready: true, RestartCount: 2}, {Ready: false, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "app", CreationTimestamp: at(10 * time.Minute), DeletionTimestamp: &del},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "app"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}},
	}
	svcs := []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "app", CreationTimestamp: at(5 * time.Minute)},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}, {Port: 443, Protocol: corev1.ProtocolTCP}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default", CreationTimestamp: at(72 * time.Hour)},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.1", Ports: []corev1.ServicePort{{Port: 443, Protocol: corev1.ProtocolTCP}}}},
	}
	got := Render(nodes, pods, svcs, now)
	p := filepath.Join("testdata", "render.txt")
	if *update {
		os.WriteFile(p, []byte(got), 0o644)
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("render differs:\n--- got\n%s\n--- want\n%s", got, want)
	}
	// Change lines drop updates that change nothing visible (node heartbeats).
	n2 := nodes[1].DeepCopy()
	n2.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(now)
	if summary(nodes[1]) != summary(n2) {
		t.Error("a heartbeat changes the summary")
	}
	if s := summary(pods[0]); s != "app/web-1 CrashLoopBackOff 1/2 restarts=2 node=dev-node-1" {
		t.Errorf("pod summary %q", s)
	}
}

package localkube_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// scaleNodes is the size of the many-node test: 200 in the suite (on a shared 2-core machine
// 1,000 nodes take over a minute, which bench/clusters measures), NUV_TEST_NODES to change it (up
// to localkube.MaxNodes).
func scaleNodes(t *testing.T) int {
	v := os.Getenv("NUV_TEST_NODES")
	if v == "" {
		return 200
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 2 || n > localkube.MaxNodes {
		t.Fatalf("NUV_TEST_NODES=%q: want a number of nodes between 2 and %d", v, localkube.MaxNodes)
	}
	return n
}

// TestIntegrationLocalClusterManyNodes creates a cluster of two node groups, most nodes in the
// default group and a tenth in a labelled and tainted one, and checks that every node the API
// server lists is Ready and carries exactly the labels and taints nuv gives its group, that there
// are no others, and that delete stops every process.
func TestIntegrationLocalClusterManyNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a local cluster; skipped under -short")
	}
	n := scaleNodes(t)
	home, project := t.TempDir(), t.TempDir()
	p := localkube.Clusters{Home: home, Project: project, Log: localtest.Logger(t), Getenv: os.Getenv}
	ctx := context.Background()
	gpu := localkube.NodeGroup{Name: "gpu", Count: n / 10, Labels: map[string]string{"accelerator": "fake-gpu"},
		Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}}}
	groups := []localkube.NodeGroup{{Name: localkube.DefaultNodeGroup, Count: n - gpu.Count}, gpu}
	info, err := p.Create(ctx, localkube.CreateOptions{Name: "many", NodeGroups: groups})
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			if err := p.Delete(context.Background(), "many"); err != nil {
				t.Errorf("cleanup: delete: %v", err)
			}
		}
	})
	if err != nil {
		t.Fatalf("create with %d nodes: %v", n, err)
	}
	if info.Nodes != n || info.NodesReady != n {
		t.Fatalf("status after create: %d/%d nodes Ready, want %d/%d", info.NodesReady, info.Nodes, n, n)
	}
	cfg, err := p.RESTConfig("many")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != n {
		t.Fatalf("%d nodes listed, want %d", len(nodes.Items), n)
	}
	want := map[string]map[string]string{} // node name -> group labels it must carry
	for i := 0; i < n-gpu.Count; i++ {
		want[fmt.Sprintf("many-node-%d", i+1)] = map[string]string{localkube.LabelNodeGroup: localkube.DefaultNodeGroup}
	}
	for i := 0; i < gpu.Count; i++ {
		want[fmt.Sprintf("many-gpu-%d", i+1)] = map[string]string{localkube.LabelNodeGroup: "gpu", "accelerator": "fake-gpu"}
	}
	bad := 0
	for _, node := range nodes.Items {
		var problems []string
		labels, ok := want[node.Name]
		if !ok {
			problems = append(problems, "not a node nuv made")
		}
		delete(want, node.Name)
		for k, v := range labels {
			if node.Labels[k] != v {
				problems = append(problems, fmt.Sprintf("label %s=%q, want %q", k, node.Labels[k], v))
			}
		}
		for k, v := range map[string]string{"nuv.dev/cluster": "many", "nuv.dev/provider": "local", "kubernetes.io/hostname": node.Name,
			"kubernetes.io/os": "linux", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"} {
			if node.Labels[k] != v {
				problems = append(problems, fmt.Sprintf("label %s=%q, want %q", k, node.Labels[k], v))
			}
		}
		var wantTaints []corev1.Taint
		if labels[localkube.LabelNodeGroup] == "gpu" {
			wantTaints = gpu.Taints
		}
		var taints []corev1.Taint
		for _, tt := range node.Spec.Taints {
			taints = append(taints, corev1.Taint{Key: tt.Key, Value: tt.Value, Effect: tt.Effect})
		}
		if !reflect.DeepEqual(taints, wantTaints) {
			problems = append(problems, fmt.Sprintf("taints %v, want %v", taints, wantTaints))
		}
		ready := false
		for _, c := range node.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		if !ready {
			problems = append(problems, "not Ready")
		}
		if len(problems) > 0 {
			if bad++; bad <= 5 {
				t.Errorf("node %s: %v", node.Name, problems)
			}
		}
	}
	if bad > 5 {
		t.Errorf("... and %d more nodes with problems", bad-5)
	}
	if len(want) > 0 {
		t.Errorf("%d nodes missing", len(want))
	}

	dir := filepath.Join(home, "clusters", "many")
	var pids []int
	files, _ := filepath.Glob(filepath.Join(dir, "pids", "*.pid"))
	for _, f := range files {
		pids = append(pids, readPIDFile(t, f))
	}
	if len(pids) != 5 {
		t.Fatalf("%d recorded processes, want 5 (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)", len(pids))
	}
	if err := p.Delete(ctx, "many"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	deleted = true
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil && !zombie(pid) {
			t.Errorf("process %d still running after delete", pid)
		}
	}
	if left := procsMentioning(dir); len(left) > 0 {
		t.Errorf("processes still mention %s after delete: %v", dir, left)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state directory remains after delete: %v", err)
	}
}

// zombie reports whether pid is a process that exited and awaits its parent (state Z).
func zombie(pid int) bool {
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return strings.Contains(string(st), ") Z")
}

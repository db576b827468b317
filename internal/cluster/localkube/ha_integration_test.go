package localkube_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestIntegrationHA kills one etcd member and one apiserver of an HA cluster: reads and writes keep
// working through the balancer and nothing written before is lost; start repairs the cluster. The
// cluster also uses the kind flavor, checked on its nodes.
func TestIntegrationHA(t *testing.T) {
	c := localtest.Start(t, localtest.Options{Name: "ha", HA: true, Nodes: 2, Flavor: "kind"})
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(c.Config)
	dir := localkube.StateDir(c.Home, c.Name)

	t.Run("kind flavor nodes", func(t *testing.T) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, n := range nodes.Items {
			names = append(names, n.Name)
			if n.Spec.ProviderID != "kind://docker/ha/"+n.Name {
				t.Errorf("node %s providerID %q", n.Name, n.Spec.ProviderID)
			}
			if n.Labels[cluster.LabelProvider] != "local" {
				t.Errorf("node %s lacks the local provider label", n.Name)
			}
		}
		sort.Strings(names)
		if fmt.Sprint(names) != "[ha-control-plane ha-worker]" {
			t.Fatalf("nodes %v", names)
		}
		cp, _ := cs.CoreV1().Nodes().Get(ctx, "ha-control-plane", metav1.GetOptions{})
		if _, ok := cp.Labels["node-role.kubernetes.io/control-plane"]; !ok {
			t.Fatalf("control-plane label missing: %v", cp.Labels)
		}
	})

	write := func(name string) error {
		_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": name}}, metav1.CreateOptions{})
		return err
	}
	for i := 0; i < 20; i++ {
		if err := write(fmt.Sprintf("before-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	kill := func(component string) {
		pid := readPIDFile(t, filepath.Join(dir, "pids", component+".pid"))
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill %s: %v", component, err)
		}
		t.Logf("killed %s (pid %d)", component, pid)
	}
	kill("etcd-1")
	kill("kube-apiserver-0")

	// Every operation must succeed. A request cut mid-flight by the kill, or made while the surviving
	// etcd members elect a new leader (if the killed one led), fails and is retried, as any client
	// of a real HA control plane would.
	failures := 0
	retry := func(what string, f func() error) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			err := f()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s after the kills: %v", what, err)
			}
			failures++
			t.Logf("%s failed (%v), retrying", what, err)
			time.Sleep(250 * time.Millisecond)
		}
	}
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("after-%d", i)
		retry("write "+name, func() error { return write(name) })
	}
	var list *corev1.ConfigMapList
	retry("list", func() error {
		var err error
		list, err = cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		return err
	})
	have := map[string]bool{}
	for _, cm := range list.Items {
		have[cm.Name] = true
	}
	for i := 0; i < 20; i++ {
		for _, p := range []string{"before", "after"} {
			if n := fmt.Sprintf("%s-%d", p, i); !have[n] {
				t.Errorf("%s lost", n)
			}
		}
	}
	t.Logf("%d failed attempts across 21 operations after the kills", failures)
	if failures > 20 {
		t.Errorf("%d failed attempts: the cluster did not recover within a few seconds", failures)
	}

	st, err := c.Provider.Status(ctx, cluster.Named(c.Name))
	if err != nil || st.Status != cluster.Degraded {
		t.Fatalf("status after kills: %v %v", st.Status, err)
	}
	if err := c.Provider.Start(ctx, c.Name); err != nil {
		t.Fatalf("repair: %v", err)
	}
	if st, _ := c.Provider.Status(ctx, cluster.Named(c.Name)); st.Status != cluster.Running {
		t.Fatalf("status after start: %s", st.Status)
	}
	if err := write("after-repair"); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationInterruptedCreate cancels a create (what Ctrl-C does) once the apiserver process
// runs: everything started is stopped and the state directory is gone.
func TestIntegrationInterruptedCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a local cluster; skipped under -short")
	}
	home, project := t.TempDir(), t.TempDir()
	p := localkube.Clusters{Home: home, Project: project, Log: localtest.Logger(t), Getenv: os.Getenv}
	dir := localkube.StateDir(home, "intr")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		deadline := time.Now().Add(5 * time.Minute)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(dir, "pids", "kube-apiserver.pid")); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	_, err := p.Create(ctx, localkube.CreateOptions{Name: "intr"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("create: want context.Canceled, got %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("state directory remains: %v", err)
	}
	if left := procsMentioning(dir); len(left) > 0 {
		t.Fatalf("processes still running: %v", left)
	}
	if _, err := os.Stat(filepath.Join(project, "clusters", "intr.kubeconfig")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("kubeconfig written: %v", err)
	}
}

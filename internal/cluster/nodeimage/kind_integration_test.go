package nodeimage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/nuv-dev/nuv/internal/cluster/kind"
	"github.com/nuv-dev/nuv/internal/runner"
)

// kindCluster creates a kind cluster of the node image through kind's Go library and returns a
// client; the cluster is deleted when the test ends.
func kindCluster(t *testing.T, ref, clusterName string, workers int) (*cluster.Provider, *kubernetes.Clientset) {
	t.Helper()
	p := cluster.NewProvider(cluster.ProviderWithDocker())
	cfg := &v1alpha4.Cluster{
		Nodes:                []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole}},
		Networking:           v1alpha4.Networking{KubeProxyMode: v1alpha4.NFTablesProxyMode},
		KubeadmConfigPatches: KubeadmPatches(),
	}
	for i := 0; i < workers; i++ {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole})
	}
	// Deletes go the way nuv deletes its kind clusters (frozen cgroups thawed, a busy node asked
	// again, kind's idle network removed), and fail the test when they fail.
	nuvKind := &kind.Provider{Home: t.TempDir(), Getenv: os.Getenv}
	if err := nuvKind.DeleteNodes(context.Background(), clusterName); err != nil { // a cluster a killed run left behind
		t.Fatalf("delete kind cluster %s left by an earlier run: %v", clusterName, err)
	}
	t.Cleanup(func() {
		if err := nuvKind.DeleteNodes(context.Background(), clusterName); err != nil {
			t.Errorf("delete kind cluster %s: %v", clusterName, err)
		}
	})
	start := time.Now()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := p.Create(clusterName, cluster.CreateWithV1Alpha4Config(cfg), cluster.CreateWithNodeImage(ref),
		cluster.CreateWithKubeconfigPath(kc), cluster.CreateWithWaitForReady(4*time.Minute), cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false)); err != nil {
		dir := t.TempDir()
		_ = p.CollectLogs(clusterName, dir)
		t.Fatalf("kind create %s: %v (node logs in %s)", clusterName, err, dir)
	}
	t.Logf("kind create %s (%d nodes): %s", clusterName, 1+workers, time.Since(start).Round(100*time.Millisecond))
	rc, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	return p, kubernetes.NewForConfigOrDie(rc)
}

// waitFor polls cond every 2 s until it returns true or timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("%s: not after %s (%s)", what, timeout, last)
}

func nodesReady(t *testing.T, cs *kubernetes.Clientset, n int) {
	waitFor(t, fmt.Sprintf("%d nodes Ready", n), 4*time.Minute, func() (bool, string) {
		list, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		ready := 0
		var state []string
		for _, node := range list.Items {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady {
					state = append(state, node.Name+"="+string(c.Status))
					if c.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
		}
		return ready == n && len(list.Items) == n, strings.Join(state, " ")
	})
}

func podsRunning(t *testing.T, cs *kubernetes.Clientset, ns, selector string, n int) {
	waitFor(t, fmt.Sprintf("%d pods %s Running and Ready", n, selector), 4*time.Minute, func() (bool, string) {
		list, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err.Error()
		}
		ok := 0
		var state []string
		for _, p := range list.Items {
			ready := false
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					ready = true
				}
			}
			state = append(state, fmt.Sprintf("%s %s ready=%v", p.Name, p.Status.Phase, ready))
			if p.Status.Phase == corev1.PodRunning && ready {
				ok++
			}
		}
		return ok >= n, strings.Join(state, "; ")
	})
}

// TestIntegrationNodeImageKind creates a 1-node kind cluster of the node image (node Ready, CoreDNS
// Running), then a 2-node one in which a pod on each node resolves a Service name and reaches the
// pod on the other node through it and directly by its IP.
func TestIntegrationNodeImageKind(t *testing.T) {
	r := buildForTest(t)
	ctx := context.Background()
	if err := Load(ctx, Options{}, r); err != nil {
		t.Fatal(err)
	}
	t.Run("one node", func(t *testing.T) {
		p, cs := kindCluster(t, r.Ref, "nuv-nodeimage-1", 0)
		nodesReady(t, cs, 1)
		podsRunning(t, cs, "kube-system", "k8s-app=kube-dns", 2)
		podsRunning(t, cs, "kube-system", "app=nuv-podnet", 1)
		// kind's log export runs crictl and journalctl in the node
		dir := t.TempDir()
		if err := p.CollectLogs("nuv-nodeimage-1", dir); err != nil {
			t.Fatalf("kind export logs: %v", err)
		}
		images, err := os.ReadFile(filepath.Join(dir, "nuv-nodeimage-1-control-plane", "images.log"))
		if err != nil || !strings.Contains(string(images), "registry.k8s.io/pause") {
			t.Fatalf("images.log of the log export (crictl images): %q %v", images, err)
		}
	})
	t.Run("two nodes", func(t *testing.T) {
		p, cs := kindCluster(t, r.Ref, "nuv-nodeimage-2", 1)
		nodesReady(t, cs, 2)
		podsRunning(t, cs, "kube-system", "k8s-app=kube-dns", 2)
		podsRunning(t, cs, "kube-system", "app=nuv-podnet", 2)
		nodes, err := p.ListInternalNodes("nuv-nodeimage-2")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes { // the masquerade of traffic leaving the pod network
			var out bytes.Buffer
			if err := n.Command("nft", "list", "table", "inet", "nuv-podnet").SetStdout(&out).Run(); err != nil {
				t.Fatalf("%s: nft list table inet nuv-podnet: %v", n, err)
			}
			if !strings.Contains(out.String(), "ip saddr 10.244.0.0/16 ip daddr != 10.244.0.0/16 masquerade") {
				t.Fatalf("%s: nuv-podnet's table:\n%s", n, out.String())
			}
		}
		image := loadNettest(t, p, "nuv-nodeimage-2")
		crossNodeTraffic(t, cs, image)
	})
}

// loadNettest builds testdata/nettest into an image (go-containerregistry) and loads it into every
// node of the cluster as `kind load` does.
func loadNettest(t *testing.T, p *cluster.Provider, clusterName string) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "nettest")
	if err := runner.Run(context.Background(), runner.Cmd{Path: "go", Args: []string{"build", "-o", bin, "./testdata/nettest"}, Env: append(os.Environ(), "CGO_ENABLED=0")}); err != nil {
		t.Fatal(err)
	}
	layer, err := layerFile(dir, "nettest", func(tw *treeWriter) error { return tw.File("/nettest", bin, 0o755) })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.Config(img, v1.Config{Entrypoint: []string{"/nettest"}})
	if err != nil {
		t.Fatal(err)
	}
	ref := "nuv.dev/nettest:test"
	tag, _ := name.NewTag(ref)
	var buf bytes.Buffer
	if err := tarball.Write(tag, img, &buf); err != nil {
		t.Fatal(err)
	}
	nodes, err := p.ListInternalNodes(clusterName)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if err := nodeutils.LoadImageArchive(n, bytes.NewReader(buf.Bytes())); err != nil {
			t.Fatalf("load nettest into %s: %v", n, err)
		}
	}
	return ref
}

func crossNodeTraffic(t *testing.T, cs *kubernetes.Clientset, image string) {
	ctx := context.Background()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tolerate := []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	names := map[string]string{} // node -> server pod
	for i, n := range nodes.Items {
		srv := fmt.Sprintf("echo-%d", i)
		names[n.Name] = srv
		_, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: srv, Labels: map[string]string{"app": srv}},
			Spec: corev1.PodSpec{NodeName: n.Name, Tolerations: tolerate, Containers: []corev1.Container{{
				Name: "serve", Image: image, ImagePullPolicy: corev1.PullNever, Args: []string{"serve", ":8080"},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt(8080)}}, PeriodSeconds: 2},
			}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: srv},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": srv}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt(8080)}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, srv := range names {
		podsRunning(t, cs, "default", "app="+srv, 1)
	}
	ip := map[string]string{}
	for node, srv := range names {
		pod, err := cs.CoreV1().Pods("default").Get(ctx, srv, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ip[node] = pod.Status.PodIP
		t.Logf("%s on %s: pod IP %s", srv, node, pod.Status.PodIP)
	}
	// from each node, the other node's server: by Service name (DNS) and by pod IP
	var clients []string
	for i, n := range nodes.Items {
		for other, srv := range names {
			if other == n.Name {
				continue
			}
			client := fmt.Sprintf("client-%d", i)
			clients = append(clients, client)
			_, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: client},
				Spec: corev1.PodSpec{NodeName: n.Name, Tolerations: tolerate, RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
					Name: "get", Image: image, ImagePullPolicy: corev1.PullNever,
					Args: []string{"get", "http://" + srv + ".default.svc.cluster.local/", "http://" + srv + "/", "http://" + ip[other] + ":8080/"},
				}}},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, client := range clients {
		waitFor(t, client+" succeeded", 3*time.Minute, func() (bool, string) {
			pod, err := cs.CoreV1().Pods("default").Get(ctx, client, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if pod.Status.Phase == corev1.PodFailed {
				logs, _ := cs.CoreV1().Pods("default").GetLogs(client, &corev1.PodLogOptions{}).DoRaw(ctx)
				t.Fatalf("%s on %s failed:\n%s", client, pod.Spec.NodeName, logs)
			}
			return pod.Status.Phase == corev1.PodSucceeded, string(pod.Status.Phase)
		})
		logs, err := cs.CoreV1().Pods("default").GetLogs(client, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s:\n%s", client, logs)
		if strings.Count(string(logs), "-> 200 echo-") != 3 {
			t.Fatalf("%s did not get 3 answers from the other node's server:\n%s", client, logs)
		}
	}
}

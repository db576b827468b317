package kind_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/kind/kindtest"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/image/load"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
	"github.com/nuv-dev/nuv/internal/registry"
	"github.com/nuv-dev/nuv/internal/registry/relayctl"
	"github.com/nuv-dev/nuv/internal/runner"
)

// startRegistry runs nuv's registry of home in this process (what `nuv registry serve` runs) on a
// free loopback port, until the test ends.
func startRegistry(t *testing.T, home string) registry.State {
	t.Helper()
	dir := registry.Dir(home)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- registry.ServeDir(ctx, dir, "127.0.0.1:0", io.Discard) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(15 * time.Second)
	for {
		st, ok, err := registry.Status(context.Background(), dir)
		if err == nil && ok {
			if st.Socket == "" {
				t.Fatalf("the registry serves no unix socket (state %+v)", st)
			}
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry did not answer: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func docker(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := runner.Output(context.Background(), runner.Cmd{Path: "docker", Args: args})
	return strings.TrimSpace(string(out)), err
}

// TestIntegrationKindRegistry: a one-node kind cluster with `registry: true` pulls what the host
// pushed to nuv's loopback registry. An image pushed to localhost:PORT runs in a pod naming
// localhost:PORT/... (containerd's mirror through the relay container); a second image, named by
// the relay's own host, runs a pod that reaches the registry at the ConfigMap's
// hostFromClusterNetwork. A plan after apply is empty; a stopped relay is shown and started by
// apply; delete leaves no container of the cluster, removes the relay and keeps the registry.
func TestIntegrationKindRegistry(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a kind cluster; skipped under -short")
	}
	ctx := context.Background()
	if _, err := containerrt.Detect(ctx, os.Getenv); err != nil {
		t.Fatalf("%v\n(hack/test.sh starts nuv's own dockerd: `eval \"$(hack/dockerd.sh env)\"`)", err)
	}
	home, project := t.TempDir(), t.TempDir()
	log := localtest.Logger(t)
	st := startRegistry(t, home)
	host := st.Host()
	p := kindtest.Provider(t, home, project, log)
	p.RegistryHost = host
	p.Registry = func(ctx context.Context, _ *rest.Config) (string, error) {
		s, ok, err := registry.Status(ctx, registry.Dir(home))
		if err != nil || !ok {
			return "", fmt.Errorf("the test's registry stopped: %v", err)
		}
		return s.Host(), nil
	}
	store, err := state.Open("", home, "")
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	e := &engine.Engine{Providers: map[string]cluster.Provider{"kind": p}, Store: store, Out: &progress}
	const clusterName = "nuv-reg"
	c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: clusterName},
		Spec: spec.Spec{Provider: "kind", KubernetesVersion: "1.36", Registry: true}}
	relay := relayctl.Name(registry.Dir(home))
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			if _, err := e.Delete(context.Background(), clusterName); err != nil {
				t.Errorf("delete kind cluster %s: %v", clusterName, err)
			}
		}
		docker(t, "rm", "-f", relay)
	})
	// made without the registry, then asked for it: an update in place, not a replacement
	c.Spec.Registry = false
	t0 := time.Now()
	if _, err := e.Apply(ctx, c, engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply: %v\n%s", err, progress.String())
	}
	t.Logf("kind cluster up in %.1fs", time.Since(t0).Seconds())
	c.Spec.Registry = true
	t0 = time.Now()
	plan, err := e.Apply(ctx, c, engine.ApplyOptions{})
	if err != nil {
		t.Fatalf("apply with registry: true: %v\n%s", err, progress.String())
	}
	if len(plan.Changes) != 1 || plan.Changes[0].Action != cluster.Create || plan.Changes[0].Key != "registry/loopback" {
		var b bytes.Buffer
		engine.WritePlan(&b, plan)
		t.Errorf("turning registry: true on: want one create of registry/loopback, got:\n%s", b.String())
	}
	t.Logf("registry wired into the running cluster in %.1fs", time.Since(t0).Seconds())

	// the relay runs on the cluster's network, named as the ConfigMap says
	if out, err := docker(t, "inspect", "--format", `{{.State.Running}} {{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}{{.HostConfig.PortBindings}}`, relay); err != nil ||
		!strings.HasPrefix(out, "true ") || !strings.Contains(out, " kind ") || !strings.HasSuffix(out, "map[]") {
		t.Errorf("relay %s: %q %v; want running on network kind, no port published", relay, out, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", p.KubeconfigPath(clusterName))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps("kube-public").Get(ctx, "local-registry-hosting", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantDoc := fmt.Sprintf("host: %q\nhostFromContainerRuntime: %q\nhostFromClusterNetwork: %q\nhelp: %q\n", host, host, relay+":5000", load.Help)
	if got := cm.Data["localRegistryHosting.v1"]; got != wantDoc {
		t.Errorf("ConfigMap document:\n%s\nwant:\n%s", got, wantDoc)
	}

	// push from the host to the registry's loopback address
	netcheck := kindtest.NetcheckImage(t)
	pushAuth, err := registry.PushAuth(registry.Dir(home))
	if err != nil {
		t.Fatal(err)
	}
	push := remote.WithAuth(pushAuth)
	if err := remote.WriteIndex(mustRef(t, host+"/nuv/netcheck:reg"), netcheck, push); err != nil {
		t.Fatalf("push netcheck to %s: %v", host, err)
	}
	relayImg, err := relayctl.BuildImage(ctx, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(mustRef(t, host+"/nuv/relay:reg"), relayImg, push); err != nil {
		t.Fatalf("push the relay image to %s: %v", host, err)
	}

	// a pod naming localhost:PORT/...: the node's containerd pulls through the mirror
	pods := cs.CoreV1().Pods("default")
	if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "from-registry"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "netcheck", Image: host + "/nuv/netcheck:reg", ImagePullPolicy: corev1.PullAlways}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// a pod naming the relay's host (what an in-cluster build would push to) that fetches the
	// registry's /v2/ at hostFromClusterNetwork, through the cluster's DNS
	if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cluster-network"},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure, Containers: []corev1.Container{{Name: "probe",
			Image: relay + ":5000/nuv/relay:reg", ImagePullPolicy: corev1.PullAlways,
			Args: []string{"probe", "http://" + relay + ":5000/v2/"}}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "from-registry", corev1.PodRunning, 3*time.Minute)
	waitPod(t, cs, "cluster-network", corev1.PodSucceeded, 3*time.Minute)
	if logs, err := pods.GetLogs("cluster-network", &corev1.PodLogOptions{}).DoRaw(ctx); err != nil || !strings.Contains(string(logs), "OK http://"+relay+":5000/v2/") {
		t.Errorf("cluster-network pod log %q %v", logs, err)
	}

	// nothing to change after apply
	plan, err = e.Plan(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Empty() {
		var b bytes.Buffer
		engine.WritePlan(&b, plan)
		t.Errorf("plan after apply is not empty:\n%s", b.String())
	}

	// a stopped relay shows in the plan, and apply starts it
	if _, err := docker(t, "stop", relay); err != nil {
		t.Fatal(err)
	}
	plan, err = e.Plan(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	engine.WritePlan(&b, plan)
	if !strings.Contains(b.String(), "~ update registry/loopback") || !strings.Contains(b.String(), "relay: stopped -> running") {
		t.Errorf("plan with the relay stopped:\n%s", b.String())
	}
	if _, err := e.Apply(ctx, c, engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply with the relay stopped: %v", err)
	}
	if out, _ := docker(t, "inspect", "--format", "{{.State.Running}}", relay); out != "true" {
		t.Errorf("relay after the repairing apply: running=%s", out)
	}
	if plan, err = e.Plan(ctx, c); err != nil || !plan.Empty() {
		t.Errorf("plan after the repairing apply: %v %+v", err, plan)
	}

	// delete: no container of the cluster, no relay, the registry still answers
	progress.Reset()
	if _, err := e.Delete(ctx, clusterName); err != nil {
		t.Fatalf("delete: %v", err)
	}
	deleted = true
	if out, _ := docker(t, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+clusterName, "--format", "{{.Names}}"); out != "" {
		t.Errorf("containers of the cluster left: %s", out)
	}
	if out, err := docker(t, "ps", "-a", "--filter", "name=^"+relay+"$", "--format", "{{.Names}}"); err != nil || out != "" {
		t.Errorf("relay left after the last kind cluster using it was deleted: %q %v", out, err)
	}
	// kind's network stays only while other kind clusters (of other tests sharing the daemon) use it
	if out, err := docker(t, "network", "inspect", "--format", "{{range .Containers}}{{.Name}} {{end}}", "kind"); err == nil {
		if strings.Contains(out, clusterName) || strings.Contains(out, relay) {
			t.Errorf("containers of the cluster or the relay still on network kind: %s", out)
		}
		if out == "" {
			// another test's kind create may have made it a moment ago: look again
			time.Sleep(5 * time.Second)
			if again, err := docker(t, "network", "inspect", "--format", "{{range .Containers}}{{.Name}} {{end}}", "kind"); err == nil && again == "" {
				t.Errorf("network kind left behind with no container on it")
			}
		}
	}
	if _, ok, err := registry.Status(ctx, registry.Dir(home)); err != nil || !ok {
		t.Errorf("nuv's registry does not run after the cluster was deleted: %v", err)
	}
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// waitPod waits until pod name reaches phase, failing with its state and events.
func waitPod(t *testing.T, cs kubernetes.Interface, podName string, phase corev1.PodPhase, timeout time.Duration) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	for {
		pod, err := cs.CoreV1().Pods("default").Get(ctx, podName, metav1.GetOptions{})
		if err == nil && pod.Status.Phase == phase {
			return
		}
		if time.Now().After(deadline) {
			var why []string
			if err != nil {
				why = append(why, err.Error())
			} else {
				why = append(why, "phase "+string(pod.Status.Phase))
				for _, s := range pod.Status.ContainerStatuses {
					if s.State.Waiting != nil {
						why = append(why, s.State.Waiting.Reason+": "+s.State.Waiting.Message)
					}
				}
			}
			evs, _ := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + podName})
			if evs != nil {
				for _, ev := range evs.Items {
					why = append(why, ev.Reason+": "+ev.Message)
				}
			}
			t.Fatalf("pod %s not %s within %s: %s", podName, phase, timeout, strings.Join(why, "; "))
		}
		time.Sleep(2 * time.Second)
	}
}

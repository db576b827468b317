package deploy

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/kind/kindtest"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/image/imagecmd"
)

// TestIntegrationKindOperator runs the operator in a real pod: a kind cluster (the project's
// dockerd, the offline node image), `nuv image load` (task build-and-load) building the operator
// image and loading it into the node, `nuv operator` deploying it from that image until its
// Deployment is Available, and the operator reconciling a Whisk (its component objects created,
// its status written). The Whisk's component images are not loaded here, so their pods are not
// waited for: TestIntegrationKindWorkload (internal/image/debimage) builds, loads and runs them.
func TestIntegrationKindOperator(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a container runtime and a kind node image; skipped under -short")
	}
	ctx := context.Background()
	project := testProject(t)
	home := t.TempDir()
	const name = "nuv-kind-op"
	kindtest.Cluster(t, home, project, name, localtest.Logger(t))

	vars := map[string]string{"NUV_PROJECT": project, "NUV_CLUSTER": name, "NUV_HOME": home, "HOME": os.Getenv("HOME"),
		"PATH": os.Getenv("PATH"), "DOCKER_HOST": os.Getenv("DOCKER_HOST"), "GOFLAGS": os.Getenv("GOFLAGS"),
		"GOCACHE": os.Getenv("GOCACHE"), "GOMODCACHE": os.Getenv("GOMODCACHE"), "GOPROXY": os.Getenv("GOPROXY")}
	getenv := func(k string) string { return vars[k] }
	var out, errb bytes.Buffer
	t1 := time.Now()
	env := &cli.Env{Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, Log: cli.NewLogger(&errb, 1), Getenv: getenv, Dir: project}
	if err := imagecmd.Run(ctx, env, []string{"load"}); err != nil {
		t.Fatalf("nuv image load: %v\n%s", err, errb.String())
	}
	ref := strings.TrimSpace(out.String())
	t.Logf("build-and-load in %.1fs: %s\n%s", time.Since(t1).Seconds(), ref, errb.String())
	if !strings.Contains(errb.String(), "loaded "+ref+" into kind node "+name+"-control-plane") {
		t.Errorf("the image was not loaded through kind's node loading:\n%s", errb.String())
	}

	var deployOut bytes.Buffer
	t2 := time.Now()
	o := Options{Project: project, Home: home, Timeout: 4 * time.Minute, Out: &deployOut, Log: localtest.Logger(t), Getenv: getenv}
	if err := Operator(ctx, o); err != nil {
		t.Fatalf("nuv operator: %v\n%s", err, deployOut.String())
	}
	t.Logf("operator Available in %.1fs\n%s", time.Since(t2).Seconds(), deployOut.String())
	if !strings.Contains(deployOut.String(), "operator image: "+ref+" (from build-and-load") {
		t.Errorf("the operator was not deployed from the loaded image:\n%s", deployOut.String())
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(project, "clusters", name+".kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=whisk-operator"})
	if err != nil {
		t.Fatal(err)
	}
	var op *corev1.Pod
	for i := range pods.Items {
		if pods.Items[i].Status.Phase == corev1.PodRunning {
			op = &pods.Items[i]
		}
	}
	if op == nil {
		t.Fatalf("no running operator pod among %d", len(pods.Items))
	}
	if got := op.Spec.Containers[0].Image; got != ref {
		t.Errorf("the operator pod runs %s, want %s", got, ref)
	}
	if cs := op.Status.ContainerStatuses; len(cs) == 0 || !cs[0].Ready || cs[0].RestartCount > 0 {
		t.Errorf("operator container not ready or restarted: %+v", cs)
	}

	// The operator reconciles a Whisk: its objects appear, its status is written.
	raw, err := os.ReadFile(filepath.Join(project, "tests", "kind", "whisk.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	w := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &w.Object); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	if _, err := dyn.Resource(whiskGVR).Namespace("default").Create(ctx, w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		cur, err := dyn.Resource(whiskGVR).Namespace("default").Get(ctx, w.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, hasStatus := cur.Object["status"]
		owned := 0
		deps, _ := cs.AppsV1().Deployments("default").List(ctx, metav1.ListOptions{})
		sts, _ := cs.AppsV1().StatefulSets("default").List(ctx, metav1.ListOptions{})
		for _, d := range deps.Items {
			for _, r := range d.OwnerReferences {
				owned += map[bool]int{true: 1}[r.UID == cur.GetUID()]
			}
		}
		for _, s := range sts.Items {
			for _, r := range s.OwnerReferences {
				owned += map[bool]int{true: 1}[r.UID == cur.GetUID()]
			}
		}
		if hasStatus && owned > 0 {
			t.Logf("the operator reconciled the Whisk: %d owned workload(s), status %v", owned, cur.Object["status"])
			break
		}
		if time.Now().After(deadline) {
			logs, _ := cs.CoreV1().Pods(op.Namespace).GetLogs(op.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
			t.Fatalf("the Whisk was not reconciled (status %v, %d owned workloads); operator log:\n%s", hasStatus, owned, logs)
		}
		time.Sleep(2 * time.Second)
	}
	logs, err := cs.CoreV1().Pods(op.Namespace).GetLogs(op.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logs), "starting whisk-operator") || !strings.Contains(string(logs), "Starting workers") {
		t.Errorf("the operator's log does not show it starting its workers:\n%s", logs)
	}
}

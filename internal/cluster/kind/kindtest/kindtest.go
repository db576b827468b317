// Package kindtest helps tests that run real kind clusters (package kind's provider): the provider
// with nuv's offline node image, an image of
// the netcheck workload (./netcheck) loaded into the nodes through nuv's kind publisher, and a
// check that a pod on each node resolves a Service name and reaches a pod on another node.
package kindtest

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
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
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/kind"
	"github.com/nuv-dev/nuv/internal/cluster/nodeimage"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state/stores"
	"github.com/nuv-dev/nuv/internal/image/publish"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
	"github.com/nuv-dev/nuv/internal/runner"
)

// NetcheckRef is the tag of the netcheck image loaded into the nodes.
const NetcheckRef = "nuv.test/netcheck:1"

// NetcheckImage builds the netcheck program and returns it as a one-platform image index for this
// host's architecture (the nodes' platform).
func NetcheckImage(t testing.TB) v1.ImageIndex {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	goBin, err := runner.FindGo(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "netcheck")
	cmd := exec.Command(goBin, "build", "-trimpath", "-o", bin, ".")
	cmd.Dir = filepath.Join(filepath.Dir(file), "netcheck")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build netcheck: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: "netcheck", Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write(data)
	tw.Close()
	layer, err := tarball.LayerFromReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	p := publish.HostPlatform()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Config.Entrypoint = p.OS, p.Architecture, []string{"/netcheck"}
	img, err = mutate.ConfigFile(img, cf) // keeps rootfs.diff_ids: containerd checks them
	if err != nil {
		t.Fatal(err)
	}
	return mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
}

// LoadNetcheck loads the netcheck image into every node of kind cluster name through nuv's kind
// publisher (what `nuv image` build-and-load uses) and checks that every node's containerd has it.
func LoadNetcheck(t testing.TB, ctx context.Context, cluster string) {
	t.Helper()
	ref, err := name.NewTag(NetcheckRef)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&publish.Kind{Cluster: cluster}).Publish(ctx, NetcheckImage(t), ref); err != nil {
		t.Fatal(err)
	}
	nodes, err := publish.KindNodes(cluster)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if id, err := nodeutils.ImageID(n, NetcheckRef); err != nil || id == "" {
			t.Errorf("node %s lacks %s after the load: %v", n, NetcheckRef, err)
		}
	}
}

// CheckPodNetwork runs a netcheck pod on every node (pinned by nodeName, tolerating any taint)
// behind a Service of its own, each pod asking for the Service of the pod on the next node (its
// own when there is one node), and waits until every pod reports the answer of the pod it asked:
// DNS resolution of a Service name and pod-to-pod traffic between nodes. It returns each pod's
// REACHED line.
func CheckPodNetwork(t testing.TB, ctx context.Context, cs kubernetes.Interface, timeout time.Duration) []string {
	t.Helper()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	ns := "default"
	var clusterIPs []string
	for i, n := range names {
		svc := fmt.Sprintf("netcheck-%d", i)
		peer := fmt.Sprintf("netcheck-%d", (i+1)%len(names))
		// The pod is not named like its Service: a pod's own name is in its /etc/hosts, and the
		// check is about the cluster's DNS.
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: svc + "-pod", Labels: map[string]string{"app": svc}},
			Spec: corev1.PodSpec{
				NodeName:    n,
				Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				Containers: []corev1.Container{{
					Name: "netcheck", Image: NetcheckRef, ImagePullPolicy: corev1.PullNever,
					Env: []corev1.EnvVar{{Name: "PEER", Value: peer},
						{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
					Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
				}},
			},
		}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: svc},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": svc}, Ports: []corev1.ServicePort{{Port: 8080, TargetPort: intstr.FromInt32(8080)}}}}
		created, err := cs.CoreV1().Services(ns).Create(ctx, s, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		clusterIPs = append(clusterIPs, created.Spec.ClusterIP)
	}
	deadline := time.Now().Add(timeout)
	lines := make([]string, len(names))
	for {
		done := 0
		for i := range names {
			if lines[i] != "" {
				done++
				continue
			}
			logs, err := cs.CoreV1().Pods(ns).GetLogs(fmt.Sprintf("netcheck-%d-pod", i), &corev1.PodLogOptions{}).DoRaw(ctx)
			if err != nil {
				continue
			}
			for _, l := range strings.Split(string(logs), "\n") {
				if strings.HasPrefix(l, "REACHED ") {
					lines[i] = l
				}
			}
		}
		if done == len(names) {
			break
		}
		if time.Now().After(deadline) {
			var state []string
			for i := range names {
				p, err := cs.CoreV1().Pods(ns).Get(ctx, fmt.Sprintf("netcheck-%d-pod", i), metav1.GetOptions{})
				if err != nil {
					state = append(state, err.Error())
					continue
				}
				logs, _ := cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
				state = append(state, fmt.Sprintf("%s on %s: %s %s; log tail: %s", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Message, tail(string(logs), 300)))
			}
			t.Fatalf("pods did not reach each other within %s:\n%s", timeout, strings.Join(state, "\n"))
		}
		time.Sleep(2 * time.Second)
	}
	for i, l := range lines {
		j := (i + 1) % len(names)
		want := fmt.Sprintf("REACHED netcheck-%d %s -> %s", j, clusterIPs[j], names[j])
		if l != want {
			t.Errorf("the pod on %s: got %q, want %q (the Service's address from DNS, the answer of the pod on %s)", names[i], l, want, names[j])
		}
	}
	return lines
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Provider is a kind provider for tests: state under home, kubeconfigs under project, and the node
// image nuv assembles offline (cached by content; hack/test.sh builds it), as providers.New sets it.
func Provider(t testing.TB, home, project string, log cli.Logger) *kind.Provider {
	return &kind.Provider{Home: home, Project: project, Log: log, Getenv: os.Getenv,
		NodeImage: func(ctx context.Context, version, runtime string) (string, error) {
			return nodeimage.Ensure(ctx, nodeimage.Options{Version: version, Log: log, Getenv: os.Getenv, Runtime: runtime})
		}}
}

// Cluster makes a one-node kind cluster called name through the lifecycle engine (state under
// home, kubeconfig in project's clusters/), deleted when the test ends. It fails the test at once
// when no container runtime answers, saying how the test command starts one.
func Cluster(t testing.TB, home, project, name string, log cli.Logger) {
	t.Helper()
	ctx := context.Background()
	if _, err := containerrt.Detect(ctx, os.Getenv); err != nil {
		t.Fatalf("%v\n(hack/test.sh starts nuv's own dockerd: `eval \"$(hack/dockerd.sh env)\"`)", err)
	}
	store, err := stores.Open("", home, "")
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	e := &engine.Engine{Providers: map[string]cluster.Provider{"kind": Provider(t, home, project, log)}, Store: store, Out: &progress}
	c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: name},
		Spec: spec.Spec{Provider: "kind", KubernetesVersion: "1.36"}}
	t.Cleanup(func() {
		if _, err := e.Delete(context.Background(), name); err != nil {
			t.Errorf("delete kind cluster %s: %v", name, err)
		}
	})
	t0 := time.Now()
	if _, err := e.Apply(ctx, c, engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply kind cluster %s: %v\n%s", name, err, progress.String())
	}
	t.Logf("kind cluster %s up in %.1fs", name, time.Since(t0).Seconds())
}

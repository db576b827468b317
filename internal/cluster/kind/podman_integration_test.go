package kind_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cluster/kind"
	"github.com/nuv-dev/nuv/internal/cluster/kind/kindtest"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/runner"
)

// TestIntegrationKindPodman: with KIND_EXPERIMENTAL_PROVIDER=podman, nuv detects podman, loads its
// offline node image into podman's storage (podman load of the cached tarball), and the lifecycle
// engine makes a one-node kind cluster whose node is a podman container: the node Ready with
// kind's podman providerID, a pod of an image nuv loaded into the node Running and answering
// through a Service name (DNS and the pod network); the delete leaves no container, volume or
// kind network in podman. hack/test.sh sets podman up (hack/podman.sh: its own configuration and
// storage, containers through bin/nuv-runc).
func TestIntegrationKindPodman(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a kind cluster on podman; skipped under -short")
	}
	t.Setenv("KIND_EXPERIMENTAL_PROVIDER", "podman")
	ctx := context.Background()
	rt, err := kind.DetectRuntime(ctx, os.Getenv)
	if err != nil {
		t.Fatalf("%v\n(hack/test.sh sets podman up: `bash hack/podman.sh setup && eval \"$(bash hack/podman.sh env)\"`)", err)
	}
	if rt.Name != "podman" {
		t.Fatalf("KIND_EXPERIMENTAL_PROVIDER=podman detected %s", rt.Name)
	}
	podman := func(args ...string) string {
		t.Helper()
		out, err := runner.Output(ctx, runner.Cmd{Path: rt.Path, Args: args})
		if err != nil {
			t.Fatalf("podman %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	const name = "nuv-pod-1"
	home, project := t.TempDir(), t.TempDir()
	// registered before the cluster's own cleanup, so it runs after the delete
	t.Cleanup(func() {
		if t.Failed() && os.Getenv("NUV_KEEP_FAILED") != "" {
			return
		}
		if left := podman("ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+name, "--format", "{{.Names}}"); left != "" {
			t.Errorf("containers left after the delete: %s", left)
		}
		if left := podman("volume", "ls", "--quiet", "--filter", "label="+name+"-control-plane"); left != "" {
			t.Errorf("volumes left after the delete: %s", left)
		}
		if nets := podman("network", "ls", "--format", "{{.Name}}"); strings.Contains("\n"+nets+"\n", "\nkind\n") {
			if users := podman("ps", "-a", "--filter", "network=kind", "--format", "{{.Names}}"); users == "" {
				t.Errorf("kind's network is left with no container on it")
			}
		}
	})
	kindtest.Cluster(t, home, project, name, localtest.Logger(t))

	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(project, "clusters", name+".kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 1 {
		t.Fatalf("%d nodes, want 1", len(nodes.Items))
	}
	n := nodes.Items[0]
	if want := "kind://podman/" + name + "/"; !strings.HasPrefix(n.Spec.ProviderID, want) {
		t.Errorf("node %s: providerID %q, want the prefix %s (a podman node)", n.Name, n.Spec.ProviderID, want)
	}
	if got := podman("inspect", "--format", "{{.State.Running}}", name+"-control-plane"); got != "true" {
		t.Errorf("podman says the node container runs: %s", got)
	}
	kindtest.LoadNetcheck(t, ctx, name)
	for _, l := range kindtest.CheckPodNetwork(t, ctx, cs, 2*time.Minute) {
		t.Log(l)
	}
}

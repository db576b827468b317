package kind_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/kind"
	"github.com/nuv-dev/nuv/internal/cluster/kind/kindtest"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
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
	rt, err := containerrt.Detect(ctx, os.Getenv)
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

// TestIntegrationKindPodmanPlainRunc: the same podman with its containers run by runc itself
// rather than through bin/nuv-runc (what a host's podman does). On a host without
// CAP_SYS_RESOURCE (these VMs) kind's node container cannot start; nuv's error shows what podman
// printed and names the cause and the way out, and nothing is left behind. On a host with the
// capability the cluster is made like any other.
func TestIntegrationKindPodmanPlainRunc(t *testing.T) {
	if testing.Short() {
		t.Skip("asks podman for a kind cluster; skipped under -short")
	}
	t.Setenv("KIND_EXPERIMENTAL_PROVIDER", "podman")
	ctx := context.Background()
	conf := os.Getenv("CONTAINERS_CONF")
	if conf == "" {
		t.Fatal("CONTAINERS_CONF is not set: hack/test.sh selects nuv's podman configuration (`eval \"$(bash hack/podman.sh env)\"`), whose runtime this test replaces")
	}
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	runc, err := exec.LookPath("runc")
	if err != nil {
		runc = "/usr/sbin/runc"
	}
	var lines []string
	replaced := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "runc = [") {
			l, replaced = `runc = ["`+runc+`"]`, true
		}
		lines = append(lines, l)
	}
	if !replaced {
		t.Fatalf("%s has no `runc = [...]` runtime entry to replace", conf)
	}
	plain := filepath.Join(t.TempDir(), "containers.conf")
	if err := os.WriteFile(plain, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CONTAINERS_CONF", plain)
	rt, err := containerrt.Detect(ctx, os.Getenv)
	if err != nil || rt.Name != "podman" {
		t.Fatalf("podman not detected: %v %v", rt, err)
	}

	const name = "nuv-pod-runc"
	home, project := t.TempDir(), t.TempDir()
	store, err := state.Open("", home, "")
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	e := &engine.Engine{Providers: map[string]cluster.Provider{"kind": kindtest.Provider(t, home, project, localtest.Logger(t))}, Store: store, Out: &progress}
	c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: name},
		Spec: spec.Spec{Provider: "kind", KubernetesVersion: "1.36"}}
	t.Cleanup(func() {
		if _, err := e.Delete(context.Background(), name); err != nil {
			t.Errorf("delete kind cluster %s: %v", name, err)
		}
		out, err := runner.Output(context.Background(), runner.Cmd{Path: rt.Path, Args: []string{"ps", "-a", "--filter", "label=io.x-k8s.kind.cluster=" + name, "--format", "{{.Names}}"}})
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("containers left: %s %v", out, err)
		}
		nets, _ := runner.Output(context.Background(), runner.Cmd{Path: rt.Path, Args: []string{"network", "ls", "--format", "{{.Name}}"}})
		users, _ := runner.Output(context.Background(), runner.Cmd{Path: rt.Path, Args: []string{"ps", "-a", "--filter", "network=kind", "--format", "{{.Names}}"}})
		if strings.Contains("\n"+string(nets), "\nkind\n") && strings.TrimSpace(string(users)) == "" {
			t.Errorf("kind's network is left with no container on it")
		}
	})
	_, err = e.Apply(ctx, c, engine.ApplyOptions{})
	if !kind.DetectHost().NoSysResource {
		if err != nil {
			t.Fatalf("this host has CAP_SYS_RESOURCE, yet the cluster failed on podman with plain runc: %v\n%s", err, progress.String())
		}
		return
	}
	if err == nil {
		t.Fatal("a kind node started on plain runc on a host without CAP_SYS_RESOURCE")
	}
	for _, w := range []string{"podman printed:", "operation not permitted", "this host lacks CAP_SYS_RESOURCE", "bin/nuv-runc", "hack/podman.sh setup", "hack/dockerd.sh start"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
}

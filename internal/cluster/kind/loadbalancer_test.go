package kind

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
	"github.com/nuv-dev/nuv/internal/runner"
)

// TestLoadBalancerImageIsKinds reads the load balancer image from the source of the kind module
// nuv builds with (kind does not export it): a kind upgrade that changes it fails here.
func TestLoadBalancerImageIsKinds(t *testing.T) {
	out, err := runner.Output(context.Background(), runner.Cmd{Path: "go", Args: []string{"list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kind"}})
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "pkg/cluster/internal/loadbalancer/const.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`const Image = "([^"]+)"`).FindSubmatch(src)
	if m == nil {
		t.Fatalf("kind's loadbalancer/const.go has no Image constant:\n%s", src)
	}
	if string(m[1]) != LoadBalancerImage {
		t.Fatalf("kind's load balancer image is %s, nuv checks for %s", m[1], LoadBalancerImage)
	}
}

// TestIntegrationKindHARefused: a spec with three control planes, on a runtime without kind's
// load balancer image (it cannot be pulled here), is refused by plan and by apply with one
// message naming the image, why it is needed and how an air-gapped user provides it; nothing is
// created and no state record is left. With an image the runtime has in its place, the same
// check passes.
func TestIntegrationKindHARefused(t *testing.T) {
	rt := requireRuntime(t)
	ctx := context.Background()
	if _, err := rt.Output(ctx, "image", "inspect", LoadBalancerImage); err == nil {
		t.Fatalf("the runtime has %s: this test shows the refusal where it is missing (remove it from this test daemon: `docker rmi %s`)", LoadBalancerImage, LoadBalancerImage)
	}
	home := t.TempDir()
	p := &Provider{Home: home, Project: t.TempDir(), Log: localtest.Logger(t), Getenv: os.Getenv}
	var progress bytes.Buffer
	e := &engine.Engine{Providers: map[string]cluster.Provider{"kind": p}, Store: state.Dir{Path: filepath.Join(home, "state")}, Out: &progress}
	const name = "nuv-life-ha"
	c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: name},
		Spec: spec.Spec{Provider: "kind", KubernetesVersion: "1.36", ControlPlane: spec.ControlPlane{Count: 3}}}
	want := []string{"cluster " + name + ": spec.controlPlane.count is 3", "a load balancer in front of several control planes",
		"image " + LoadBalancerImage, "docker on this machine does not have", "nothing was created",
		"docker save -o envoy.tar " + LoadBalancerImage, "docker load -i envoy.tar"}
	_, perr := e.Plan(ctx, c)
	_, aerr := e.Apply(ctx, c, engine.ApplyOptions{})
	for what, err := range map[string]error{"plan": perr, "apply": aerr} {
		if err == nil {
			t.Fatalf("%s of a 3-control-plane spec without %s succeeded", what, LoadBalancerImage)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", what, err, w)
			}
		}
	}
	t.Logf("apply: %v", aerr)
	if progress.Len() > 0 {
		t.Errorf("apply started changes:\n%s", progress.String())
	}
	if cs, err := p.containers(ctx, rt, name); err != nil || len(cs) != 0 {
		t.Errorf("containers of %s: %v %v", name, cs, err)
	}
	if _, err := e.Store.Load(ctx, name); !errors.Is(err, state.ErrNoRecord) {
		t.Errorf("a state record of %s was left: %v", name, err)
	}
	// The other branch: an image the runtime has stands in for the balancer's in the check only.
	ref := "nuv.test/kind-lb-present:1"
	loadImage(t, rt, ref, map[string]string{"etc/present": "1\n"})
	p.lbImage = ref
	plan, err := e.Plan(ctx, c)
	if err != nil || plan.Count(cluster.Create) != 1 {
		t.Fatalf("plan with the image present: %v %+v", err, plan)
	}
	// one control plane never needs it
	p.lbImage = ""
	c.Spec.ControlPlane.Count = 1
	if _, err := e.Plan(ctx, c); err != nil {
		t.Fatalf("plan of one control plane: %v", err)
	}
}

// TestPreflightOneControlPlaneNeedsNoRuntime: the plan of a one-control-plane cluster is not
// refused, whatever the machine has (no runtime here: an empty PATH).
func TestPreflightOneControlPlaneNeedsNoRuntime(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	p := &Provider{Home: t.TempDir(), Project: t.TempDir(), Getenv: func(string) string { return "" }}
	c := &spec.Cluster{Metadata: spec.Metadata{Name: "one"}, Spec: spec.Spec{Provider: "kind"}}
	d, _ := p.Desired(c)
	plan := &cluster.Plan{Cluster: "one", Provider: "kind", Changes: []cluster.Change{{Action: cluster.Create, Key: d[0].Key(), Desired: &d[0]}}}
	if err := p.Preflight(context.Background(), c, plan); err != nil {
		t.Fatalf("one control plane: %v", err)
	}
	c.Spec.ControlPlane.Count = 3
	if err := p.Preflight(context.Background(), c, plan); !errors.Is(err, containerrt.ErrNoRuntime) {
		t.Fatalf("three control planes without a runtime: %v, want containerrt.ErrNoRuntime", err)
	}
}

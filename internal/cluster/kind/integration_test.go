package kind

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
	"github.com/nuv-dev/nuv/internal/runner"
)

// requireRuntime returns the container runtime the kind tests use: the project's dockerd
// (hack/dockerd.sh, DOCKER_HOST), which hack/test.sh starts.
func requireRuntime(t *testing.T) containerrt.Runtime {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a container runtime; skipped under -short")
	}
	rt, err := containerrt.Detect(context.Background(), os.Getenv)
	if err != nil {
		t.Fatalf("%v\n(hack/test.sh starts nuv's own dockerd: `eval \"$(hack/dockerd.sh env)\"`)", err)
	}
	return rt
}

// loadImage makes an image holding only files (a node image stand-in for what nuv reads before it
// creates anything) and loads it into the runtime.
func loadImage(t *testing.T, rt containerrt.Runtime, ref string, files map[string]string) {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for p, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: p, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(content))
	}
	tw.Close()
	layer, err := tarball.LayerFromReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.Config(img, v1.Config{Entrypoint: []string{"/sbin/init"}})
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	var archive bytes.Buffer
	if err := tarball.Write(tag, img, &archive); err != nil {
		t.Fatal(err)
	}
	if err := runner.Run(context.Background(), runner.Cmd{Path: rt.Path, Args: []string{"load"}, Stdin: &archive}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := rt.Output(context.Background(), "rmi", "-f", ref); err != nil {
			t.Errorf("clean-up: remove image %s: %v", ref, err)
		}
	})
}

// TestIntegrationKindVersionMismatch: a node image of another Kubernetes version than the spec's
// is refused before anything is made, both versions named, and no container is left.
func TestIntegrationKindVersionMismatch(t *testing.T) {
	rt := requireRuntime(t)
	ref := "nuv.test/kind-node-mismatch:v1.35.0"
	loadImage(t, rt, ref, map[string]string{"kind/version": "v1.35.0\n"})
	p := &Provider{Home: t.TempDir(), Project: t.TempDir(), Log: localtest.Logger(t), Getenv: os.Getenv}
	c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "nuv-mismatch"},
		Spec: spec.Spec{Provider: "kind", KubernetesVersion: "1.36"}}
	Key.Set(c, &Section{Image: ref})
	if errs := p.Validate(c); len(errs) > 0 {
		t.Fatal(errs)
	}
	d, _ := p.Desired(c)
	saved := 0
	_, err := p.Execute(context.Background(), c, cluster.Change{Action: cluster.Create, Key: d[0].Key(), Desired: &d[0]},
		func(cluster.Resource) error { saved++; return nil })
	if err == nil {
		t.Fatal("a node image of Kubernetes 1.35.0 was accepted for a 1.36 spec")
	}
	for _, w := range []string{ref, "has Kubernetes 1.35.0", "the spec asks for 1.36", "nothing was created"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if saved != 0 {
		t.Errorf("a resource was recorded (%d) although nothing was created", saved)
	}
	cs, err := p.containers(context.Background(), rt, "nuv-mismatch")
	if err != nil || len(cs) != 0 {
		t.Errorf("containers left: %v %v", cs, err)
	}
	// the container nuv created to read /kind/version is gone too
	if out, _ := rt.Output(context.Background(), "ps", "-a", "--filter", "ancestor="+ref, "--format", "{{.Names}}"); strings.TrimSpace(out) != "" {
		t.Errorf("containers of %s left: %s", ref, out)
	}
}

package nodeimage

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image/imagetest"
	"github.com/nuv-dev/nuv/internal/runner"
)

// buildForTest builds the node image (warm: seconds; hack/test.sh builds it in a stage of its
// own before the tests) with the test's log.
func buildForTest(t *testing.T) Result {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: builds a kind node image (-short skips)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	start := time.Now()
	r, err := Build(ctx, Options{Log: cli.NewLogger(testWriter{t}, 0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("node image %s: built in %s (cached: %v)", r.Ref, time.Since(start).Round(10*time.Millisecond), r.Cached)
	return r
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestIntegrationNodeImage builds the node image and checks what it holds: the binaries and their
// versions (run from the image), kind's files, the host adjustments, and the images pre-loaded
// into its containerd store (listed by containerd itself).
func TestIntegrationNodeImage(t *testing.T) {
	r := buildForTest(t)
	again, err := Build(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cached || again.Ref != r.Ref || again.Tarball != r.Tarball {
		t.Fatalf("a second build did not reuse the first: %+v", again)
	}
	tag, err := name.NewTag(r.Ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(r.Tarball, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cf.Config.Entrypoint, " "); got != "/usr/local/bin/entrypoint /sbin/init" {
		t.Errorf("entrypoint %q", got)
	}
	if cf.Config.StopSignal != "SIGRTMIN+3" || cf.Config.Labels["dev.nuv.node-image.key"] != r.Key {
		t.Errorf("stop signal %q, labels %v", cf.Config.StopSignal, cf.Config.Labels)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 2 {
		t.Fatalf("%d layers, want 2 (root file system, node)", len(layers))
	}
	// the node layer: read its small files, unpack containerd's store
	rc, err := layers[1].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	store := t.TempDir()
	files := map[string]string{}
	links := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := "/" + strings.TrimSuffix(h.Name, "/")
		switch {
		case strings.HasPrefix(p, "/var/lib/containerd/"):
			dst := filepath.Join(store, strings.TrimPrefix(p, "/var/lib/containerd/"))
			switch h.Typeflag {
			case tar.TypeDir:
				os.MkdirAll(dst, os.FileMode(h.Mode)&0o7777|0o700)
			case tar.TypeReg:
				os.MkdirAll(filepath.Dir(dst), 0o755)
				f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, os.FileMode(h.Mode)&0o7777)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.Copy(f, tr); err != nil {
					t.Fatal(err)
				}
				f.Close()
			case tar.TypeSymlink:
				os.MkdirAll(filepath.Dir(dst), 0o755)
				os.Symlink(h.Linkname, dst)
			}
		case h.Typeflag == tar.TypeSymlink:
			links[p] = h.Linkname
		case h.Typeflag == tar.TypeReg && h.Size < 1<<20:
			b, _ := io.ReadAll(tr)
			files[p] = string(b)
		case h.Typeflag == tar.TypeReg:
			files[p] = fmt.Sprintf("<%d bytes>", h.Size)
		}
	}
	for p, want := range map[string]string{
		"/kind/version":                    "v1.36.3\n",
		"/etc/sysctl.d/99-nuv-node.conf":   "net.ipv4.ip_forward=1\nnet.ipv6.conf.all.forwarding=1\n",
		"/kind/manifests/default-cni.yaml": CNIManifest(PodnetImage("1.36.3")),
	} {
		if files[p] != want {
			t.Errorf("%s = %q, want %q", p, files[p], want)
		}
	}
	for _, p := range []string{"/usr/local/bin/entrypoint", "/usr/local/bin/nuv-node", "/etc/systemd/system/kubelet.service", "/etc/containerd/cri-base.json", "/etc/containerd/config.toml"} {
		if _, ok := files[p]; !ok {
			t.Errorf("the node layer has no %s", p)
		}
	}
	if !strings.Contains(files["/etc/containerd/config.toml"], `sandbox_image = "registry.k8s.io/pause:`) {
		t.Errorf("containerd config: %s", files["/etc/containerd/config.toml"])
	}
	for p, want := range map[string]string{
		"/usr/bin/kubelet": "/usr/local/bin/nuv-node", "/usr/bin/kubeadm": "/usr/local/bin/nuv-node", "/usr/bin/kubectl": "/usr/local/bin/nuv-node",
		"/etc/systemd/system/multi-user.target.wants/kubelet.service":    "/etc/systemd/system/kubelet.service",
		"/etc/systemd/system/multi-user.target.wants/containerd.service": "/etc/systemd/system/containerd.service",
		"/opt/cni/bin/bridge": "/usr/lib/cni/bridge", "/opt/cni/bin/host-local": "/usr/lib/cni/host-local", "/opt/cni/bin/portmap": "/usr/lib/cni/portmap",
	} {
		if links[p] != want {
			t.Errorf("%s -> %q, want %q", p, links[p], want)
		}
	}
	// the pre-loaded images, as containerd lists them
	ctx := context.Background()
	cd, err := startContainerd(ctx, store, filepath.Join(t.TempDir(), "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := cd.images(ctx)
	cd.stop()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := append([]string(nil), r.Images...)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("containerd lists\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, w := range []string{"registry.k8s.io/kube-apiserver:v1.36.3", "registry.k8s.io/kube-proxy:v1.36.3", "registry.k8s.io/pause:", "registry.k8s.io/etcd:", "registry.k8s.io/coredns/coredns:", PodnetImage("1.36.3")} {
		if !strings.Contains(strings.Join(got, "\n"), w) {
			t.Errorf("no %s among the pre-loaded images", w)
		}
	}
	// the binaries, run from the image
	if err := Load(ctx, Options{}, r); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"/usr/bin/kubelet", "--version"}, "Kubernetes v1.36.3"},
		{[]string{"/usr/bin/kubeadm", "version", "-o", "short"}, "v1.36.3"},
		{[]string{"/usr/bin/kubectl", "version", "--client"}, "Client Version: v1.36.3"},
		{[]string{"/usr/bin/kube-proxy", "--version"}, "Kubernetes v1.36.3"},
		{[]string{"/usr/local/bin/containerd", "--version"}, "containerd"},
		{[]string{"/usr/sbin/runc", "--version"}, "runc version"},
		{[]string{"/usr/local/bin/nuv-node", "etcd", "--version"}, "etcd Version: 3.6"},
		{[]string{"/usr/sbin/nft", "--version"}, "nftables"},
		{[]string{"/usr/local/bin/crictl", "--version"}, "crictl version " + CrictlVersion},
	} {
		var out, errOut bytes.Buffer
		args := append([]string{"run", "--rm", "--network", "none", "--entrypoint", tc.cmd[0], r.Ref}, tc.cmd[1:]...)
		if err := runner.Run(ctx, runner.Cmd{Path: "docker", Args: args, Stdout: &out, Stderr: &errOut}); err != nil {
			t.Errorf("%v: %v\n%s", tc.cmd, err, errOut.String())
			continue
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v printed %q, want %q", tc.cmd, out.String(), tc.want)
		} else {
			t.Logf("%v: %s", tc.cmd, strings.TrimSpace(strings.SplitN(out.String(), "\n", 2)[0]))
		}
	}
}

// TestIntegrationNodeImagePush pushes the node image to a real registry on loopback (Debian's
// docker-registry, htpasswd auth, credentials from a docker config as `docker login` leaves them)
// and reads it back: the same manifest digest.
func TestIntegrationNodeImagePush(t *testing.T) {
	r := buildForTest(t)
	reg := imagetest.StartRegistry(t, "nuv", "secret-pw")
	cfgDir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(reg.User + ":" + reg.Password))
	if err := os.WriteFile(filepath.Join(cfgDir, "config.json"), []byte(`{"auths":{"`+reg.Host+`":{"auth":"`+auth+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", cfgDir)
	dst := reg.Host + "/kind/node:v1.36.3"
	start := time.Now()
	if err := Push(context.Background(), r, dst); err != nil {
		t.Fatal(err)
	}
	t.Logf("pushed %s in %s", dst, time.Since(start).Round(100*time.Millisecond))
	tag, _ := name.NewTag(r.Ref)
	img, err := tarball.ImageFromPath(r.Tarball, &tag)
	if err != nil {
		t.Fatal(err)
	}
	want, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := name.ParseReference(dst)
	desc, err := remote.Get(ref, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest != want {
		t.Fatalf("registry has %s, the tarball is %s", desc.Digest, want)
	}
	// a bad reference is refused before anything is sent
	if err := Push(context.Background(), r, "Not A Ref"); err == nil || !strings.Contains(err.Error(), `--push "Not A Ref"`) {
		t.Fatalf("bad reference: %v", err)
	}
}

// TestIntegrationEnsureTakesTheRuntimesImage: once docker holds the node image of this build's
// key, Ensure takes it without reading the cached tarball; an image of that name built with
// another key (its label) is not taken.
func TestIntegrationEnsureTakesTheRuntimesImage(t *testing.T) {
	r := buildForTest(t)
	ctx := context.Background()
	o := Options{Getenv: os.Getenv}
	ref, err := Ensure(ctx, o)
	if err != nil || ref != r.Ref {
		t.Fatalf("Ensure: %q %v, want %s", ref, err, r.Ref)
	}
	o.acceptRuntime = true
	got, err := Build(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !got.InRuntime || got.Tarball != "" || got.Key != r.Key || got.Ref != r.Ref {
		t.Fatalf("a build that accepts docker's copy: %+v", got)
	}
	if runtimeHasKey(ctx, o, r.Ref, "another-key") {
		t.Fatal("the image was taken for another key")
	}
	if runtimeHasKey(ctx, o, Repository+":v0.0.0-none", r.Key) {
		t.Fatal("an image docker does not have was taken")
	}
}

package publish

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// twoPlatformIndex is a multi-arch index of random images with real platforms in their configs.
func twoPlatformIndex(t *testing.T) v1.ImageIndex {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := random.Image(512, 1)
		if err != nil {
			t.Fatal(err)
		}
		cf, _ := img.ConfigFile()
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = "linux", arch
		img, err = mutate.ConfigFile(img, cf)
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
}

func TestSinglePlatformArchive(t *testing.T) {
	idx := twoPlatformIndex(t)
	tag := name.MustParseReference("ghcr.io/nuv-dev/whisk-operator:dev").(name.Tag)
	var buf bytes.Buffer
	if err := SinglePlatformArchive(idx, v1.Platform{OS: "linux", Architecture: "arm64"}, tag, &buf); err != nil {
		t.Fatal(err)
	}
	manifest, config := archiveManifest(t, buf.Bytes())
	if len(manifest) != 1 || len(manifest[0].RepoTags) != 1 || manifest[0].RepoTags[0] != "ghcr.io/nuv-dev/whisk-operator:dev" {
		t.Fatalf("archive manifest.json = %+v, want one image tagged ghcr.io/nuv-dev/whisk-operator:dev", manifest)
	}
	if !strings.Contains(config, `"architecture":"arm64"`) {
		t.Errorf("archive config is not the arm64 image: %s", config)
	}
	err := SinglePlatformArchive(idx, v1.Platform{OS: "linux", Architecture: "s390x"}, tag, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "linux/amd64") || !strings.Contains(err.Error(), "--platform linux/s390x") {
		t.Fatalf("missing platform: %v", err)
	}
}

type archiveEntry struct {
	Config   string
	RepoTags []string
	Layers   []string
}

func archiveManifest(t *testing.T, data []byte) ([]archiveEntry, string) {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[h.Name] = b
	}
	var m []archiveEntry
	if err := json.Unmarshal(files["manifest.json"], &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(m) == 0 {
		return m, ""
	}
	return m, string(files[m[0].Config])
}

// recordingNode stands in for a kind node container (no node image can run here): it answers
// `containerd config dump` and records what `ctr images import` receives.
type recordingNode struct {
	name     string
	commands [][]string
	imported []byte
}

func (n *recordingNode) String() string              { return n.name }
func (n *recordingNode) Role() (string, error)       { return "control-plane", nil }
func (n *recordingNode) IP() (string, string, error) { return "172.18.0.2", "", nil }
func (n *recordingNode) SerialLogs(io.Writer) error  { return nil }
func (n *recordingNode) Command(c string, a ...string) kindexec.Cmd {
	return &recordingCmd{n: n, args: append([]string{c}, a...)}
}
func (n *recordingNode) CommandContext(_ context.Context, c string, a ...string) kindexec.Cmd {
	return n.Command(c, a...)
}

type recordingCmd struct {
	n      *recordingNode
	args   []string
	stdin  io.Reader
	stdout io.Writer
}

func (c *recordingCmd) Run() error {
	c.n.commands = append(c.n.commands, c.args)
	switch c.args[0] {
	case "containerd":
		io.WriteString(c.stdout, "version = 2\n[plugins]\n[plugins.\"io.containerd.grpc.v1.cri\"]\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\nsnapshotter = \"overlayfs\"\n")
	case "ctr":
		b, err := io.ReadAll(c.stdin)
		c.n.imported = b
		return err
	}
	return nil
}
func (c *recordingCmd) SetEnv(...string) kindexec.Cmd      { return c }
func (c *recordingCmd) SetStdin(r io.Reader) kindexec.Cmd  { c.stdin = r; return c }
func (c *recordingCmd) SetStdout(w io.Writer) kindexec.Cmd { c.stdout = w; return c }
func (c *recordingCmd) SetStderr(io.Writer) kindexec.Cmd   { return c }

func TestKindLoadsSinglePlatformIntoEveryNode(t *testing.T) {
	idx := twoPlatformIndex(t)
	ns := []*recordingNode{{name: "dev-control-plane"}, {name: "dev-worker"}}
	k := &Kind{Cluster: "dev", Platform: &v1.Platform{OS: "linux", Architecture: "amd64"},
		Nodes: func(cluster string) ([]nodes.Node, error) {
			if cluster != "dev" {
				t.Errorf("nodes of cluster %q, want dev", cluster)
			}
			return []nodes.Node{ns[0], ns[1]}, nil
		}}
	ref, err := k.Publish(context.Background(), idx, name.MustParseReference("example.com/op:dev"))
	if err != nil {
		t.Fatal(err)
	}
	if ref != "example.com/op:dev" {
		t.Errorf("ref %s", ref)
	}
	for _, n := range ns {
		last := strings.Join(n.commands[len(n.commands)-1], " ")
		if last != "ctr --namespace=k8s.io images import --all-platforms --digests --snapshotter=overlayfs -" {
			t.Errorf("%s: import command %q", n.name, last)
		}
		m, config := archiveManifest(t, n.imported)
		if len(m) != 1 || !strings.Contains(config, `"architecture":"amd64"`) {
			t.Errorf("%s received %d images (config %s), want the one amd64 image", n.name, len(m), config)
		}
	}
	byDigest, err := name.NewDigest("example.com/op@sha256:" + strings.Repeat("a", 64))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Publish(context.Background(), idx, byDigest); err == nil {
		t.Error("a digest reference should be refused: nodes know images by tag")
	}
}

func TestLayoutAndArchive(t *testing.T) {
	idx := twoPlatformIndex(t)
	want, _ := idx.Digest()
	ref := name.MustParseReference("example.com/op:1")
	dir := filepath.Join(t.TempDir(), "oci")
	for i := 0; i < 2; i++ { // twice: the entry is replaced, not duplicated
		if _, err := (Layout{Dir: dir}).Publish(context.Background(), idx, ref); err != nil {
			t.Fatal(err)
		}
	}
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := top.IndexManifest()
	if len(m.Manifests) != 1 || m.Manifests[0].Digest != want || m.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "example.com/op:1" {
		t.Fatalf("layout index.json = %+v", m.Manifests)
	}
	a1 := filepath.Join(t.TempDir(), "a.tar")
	a2 := filepath.Join(t.TempDir(), "b.tar")
	for _, f := range []string{a1, a2} {
		if _, err := (Archive{File: f}).Publish(context.Background(), idx, ref); err != nil {
			t.Fatal(err)
		}
	}
	b1, _ := os.ReadFile(a1)
	b2, _ := os.ReadFile(a2)
	if len(b1) == 0 || !bytes.Equal(b1, b2) {
		t.Errorf("the same index gave different archives (%d and %d bytes)", len(b1), len(b2))
	}
}

func TestTransient(t *testing.T) {
	if transient(nil) {
		t.Error("nil is not transient")
	}
	if transient(&os.SyscallError{Syscall: "connect", Err: errConnRefused()}) {
		t.Error("connection refused must fail at once")
	}
}

func errConnRefused() error { return syscall.ECONNREFUSED }

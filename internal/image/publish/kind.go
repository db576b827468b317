package publish

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image"
)

// Kind loads the image into every node of a kind cluster through the kind library. It loads a
// single-platform docker archive (the node's platform): loading a multi-platform archive fails
// on nodes that lack the other platforms' blobs (kind issue 3795).
type Kind struct {
	// Cluster is the kind cluster name (the kubeconfig context is kind-<Cluster>).
	Cluster string
	// Platform is the nodes' platform (default linux/<host arch>).
	Platform *v1.Platform
	// Nodes lists the cluster's nodes (default: the kind provider detected on this host).
	Nodes func(cluster string) ([]nodes.Node, error)
	Log   cli.Logger
}

var _ image.Publisher = (*Kind)(nil)

// HostPlatform is linux/<the host's architecture>, the platform of local kind nodes.
func HostPlatform() v1.Platform { return v1.Platform{OS: "linux", Architecture: runtime.GOARCH} }

// Publish implements image.Publisher; ref must carry a tag (the nodes know the image by it).
func (k *Kind) Publish(ctx context.Context, idx v1.ImageIndex, ref name.Reference) (string, error) {
	tag, ok := ref.(name.Tag)
	if !ok {
		return "", fmt.Errorf("kind load needs a tagged reference, got %s", ref)
	}
	p := HostPlatform()
	if k.Platform != nil {
		p = *k.Platform
	}
	var buf bytes.Buffer
	if err := SinglePlatformArchive(idx, p, tag, &buf); err != nil {
		return "", err
	}
	list := k.Nodes
	if list == nil {
		list = KindNodes
	}
	ns, err := list(k.Cluster)
	if err != nil {
		return "", fmt.Errorf("kind cluster %q: %w", k.Cluster, err)
	}
	if len(ns) == 0 {
		return "", fmt.Errorf("kind cluster %q has no nodes (is it running? `kind get clusters`)", k.Cluster)
	}
	log := k.Log
	if log == nil {
		log = cli.Quiet()
	}
	for _, n := range ns {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if err := nodeutils.LoadImageArchive(n, bytes.NewReader(buf.Bytes())); err != nil {
			return "", fmt.Errorf("load %s into kind node %s: %w", tag, n, err)
		}
		log.Infof("loaded %s into kind node %s", tag, n)
	}
	return tag.String(), nil
}

// KindNodes lists the nodes of kind cluster name in the runtime KIND_EXPERIMENTAL_PROVIDER
// names (as the kind CLI and nuv's kind provider honour it; the library's own detection does not,
// and would pick docker wherever its client is installed), else the one the kind library detects.
func KindNodes(name string) ([]nodes.Node, error) {
	var opt cluster.ProviderOption
	switch p := os.Getenv("KIND_EXPERIMENTAL_PROVIDER"); p {
	case "docker":
		opt = cluster.ProviderWithDocker()
	case "podman":
		opt = cluster.ProviderWithPodman()
	case "nerdctl":
		opt = cluster.ProviderWithNerdctl("")
	case "":
		var err error
		if opt, err = cluster.DetectNodeProvider(); err != nil {
			return nil, fmt.Errorf("no kind node provider (docker, podman or nerdctl) found: %w", err)
		}
	default:
		return nil, fmt.Errorf("KIND_EXPERIMENTAL_PROVIDER=%q is not one of docker, nerdctl, podman", p)
	}
	return cluster.NewProvider(opt).ListInternalNodes(name)
}

// SinglePlatformArchive writes the image of platform p from idx as a docker archive tagged tag.
func SinglePlatformArchive(idx v1.ImageIndex, p v1.Platform, tag name.Tag, w io.Writer) error {
	img, err := PlatformImage(idx, p)
	if err != nil {
		return err
	}
	if err := tarball.Write(tag, img, w); err != nil {
		return fmt.Errorf("write image archive for %s: %w", p, err)
	}
	return nil
}

// PlatformImage picks the image for p from idx; the error lists the platforms it has.
func PlatformImage(idx v1.ImageIndex, p v1.Platform) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var have []string
	for _, d := range m.Manifests {
		if d.Platform == nil {
			continue
		}
		have = append(have, d.Platform.String())
		if d.Platform.OS == p.OS && d.Platform.Architecture == p.Architecture && (p.Variant == "" || p.Variant == d.Platform.Variant) {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("the image has no %s variant (it has %v): build with --platform %s", p, have, p)
}

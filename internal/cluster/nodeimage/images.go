package nodeimage

import (
	"compress/gzip"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Component is one image pre-loaded into the node's containerd.
type Component struct {
	// Ref is the image reference kubeadm (or the node's manifests) ask for.
	Ref string
	// Command is what the image runs: a name of nuv-node's (kube-apiserver, etcd, ...), "coredns" or
	// "pause".
	Command string
	// Content says what the image holds when its tag names another version (etcd's).
	Content string
}

// PodnetImage is the image of the pod network's DaemonSet (nuv-node nuv-podnet).
func PodnetImage(version string) string {
	return "nuv.dev/nuv-podnet:v" + strings.TrimPrefix(version, "v")
}

// components maps the images kubeadm lists for the version (`kubeadm config images list`) to what
// runs in them, and adds the pod network's image.
func components(kubeadmImages []string, version, etcdVersion string) ([]Component, error) {
	var out []Component
	for _, ref := range kubeadmImages {
		r, err := name.ParseReference(ref)
		if err != nil {
			return nil, fmt.Errorf("kubeadm image %q: %w", ref, err)
		}
		repo := path.Base(r.Context().RepositoryStr())
		c := Component{Ref: ref}
		switch repo {
		case "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy":
			c.Command = repo
		case "etcd":
			c.Command = "etcd"
			c.Content = "etcd " + etcdVersion + " (go.etcd.io/etcd/server/v3/etcdmain, the version nuv's go.mod pins)"
		case "coredns":
			c.Command = "coredns"
		case "pause":
			c.Command = "pause"
		default:
			return nil, fmt.Errorf("kubeadm asks for image %s, which nuv cannot assemble", ref)
		}
		out = append(out, c)
	}
	out = append(out, Component{Ref: PodnetImage(version), Command: "nuv-podnet"})
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out, nil
}

// imageInputs are the files the component images are made of.
type imageInputs struct {
	root    string // an extracted root file system (libraries, nft and iptables for kube-proxy)
	nuvNode string
	pause   string
	coredns string
}

// layerFile writes a layer with fill into dir/name.tar and returns it as a v1.Layer.
func layerFile(dir, name string, fill func(*treeWriter) error) (v1.Layer, error) {
	p := filepath.Join(dir, name+".tar")
	f, err := os.Create(p)
	if err != nil {
		return nil, err
	}
	tw := newTreeWriter(f)
	if err := fill(tw); err != nil {
		f.Close()
		return nil, fmt.Errorf("layer %s: %w", name, err)
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return tarball.LayerFromFile(p, tarball.WithCompressionLevel(gzip.BestSpeed))
}

// kubeProxyTools are the programs kube-proxy runs (nftables and iptables modes), taken from the
// node's root file system with what they load.
var kubeProxyTools = []string{"/usr/sbin/nft", "/usr/sbin/xtables-nft-multi", "/usr/sbin/xtables-legacy-multi", "/usr/sbin/conntrack"}

// buildComponentImages writes every component image into one docker-archive tarball, out.
// The images share their first layers (the C library, nuv-node), so the node stores them once.
func buildComponentImages(work, out string, in imageInputs, comps []Component, version string) error {
	libs, err := elfClosure(in.root, []string{in.nuvNode})
	if err != nil {
		return err
	}
	libc, err := layerFile(work, "libc", func(t *treeWriter) error {
		for _, l := range libs {
			if err := t.FromRoot(in.root, l); err != nil {
				return err
			}
		}
		for _, f := range []string{"/etc/nsswitch.conf", "/etc/protocols", "/etc/services", "/etc/ethertypes"} {
			if _, err := os.Stat(filepath.Join(in.root, f)); err == nil {
				if err := t.FromRoot(in.root, f); err != nil {
					return err
				}
			}
		}
		if err := t.Bytes("/etc/passwd", []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"), 0o644); err != nil {
			return err
		}
		if err := t.Bytes("/etc/group", []byte("root:x:0:\nnogroup:x:65534:\n"), 0o644); err != nil {
			return err
		}
		return t.Dir("/tmp", 0o1777)
	})
	if err != nil {
		return err
	}
	node, err := layerFile(work, "nuv-node", func(t *treeWriter) error {
		return t.File("/usr/local/bin/nuv-node", in.nuvNode, 0o755)
	})
	if err != nil {
		return err
	}
	var toolPaths []string
	for _, p := range kubeProxyTools {
		if _, err := os.Stat(filepath.Join(in.root, p)); err == nil {
			toolPaths = append(toolPaths, p)
		}
	}
	real := make([]string, 0, len(toolPaths))
	for _, p := range toolPaths {
		r, err := resolveIn(in.root, p)
		if err != nil {
			return err
		}
		real = append(real, filepath.Join(in.root, r))
	}
	toolLibs, err := elfClosure(in.root, real)
	if err != nil {
		return err
	}
	proxyTools, err := layerFile(work, "kube-proxy-tools", func(t *treeWriter) error {
		for _, p := range append(toolPaths, toolLibs...) {
			if err := t.FromRoot(in.root, p); err != nil {
				return err
			}
		}
		for _, d := range []string{"/usr/lib/x86_64-linux-gnu/xtables", "/usr/lib/aarch64-linux-gnu/xtables"} {
			if _, err := os.Stat(filepath.Join(in.root, d)); err == nil {
				if err := t.FromRoot(in.root, d); err != nil {
					return err
				}
			}
		}
		// the nft flavour of iptables, as the nodes use (kind's entrypoint picks it when the
		// node's rules are nft's)
		for _, n := range []string{"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore"} {
			if err := t.Symlink("/usr/local/sbin/"+n, "/usr/sbin/xtables-nft-multi"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	refs := map[name.Reference]v1.Image{}
	for _, c := range comps {
		var layers []v1.Layer
		var entrypoint []string
		switch c.Command {
		case "coredns":
			l, err := layerFile(work, "coredns", func(t *treeWriter) error { return t.File("/coredns", in.coredns, 0o755) })
			if err != nil {
				return err
			}
			layers, entrypoint = []v1.Layer{l}, []string{"/coredns"}
		case "pause":
			l, err := layerFile(work, "pause", func(t *treeWriter) error { return t.File("/pause", in.pause, 0o755) })
			if err != nil {
				return err
			}
			layers, entrypoint = []v1.Layer{l}, []string{"/pause"}
		default:
			link, err := layerFile(work, "link-"+c.Command, func(t *treeWriter) error {
				return t.Symlink("/usr/local/bin/"+c.Command, "nuv-node")
			})
			if err != nil {
				return err
			}
			layers = []v1.Layer{libc, node}
			if c.Command == "kube-proxy" || c.Command == "nuv-podnet" {
				layers = append(layers, proxyTools)
			}
			layers = append(layers, link)
			entrypoint = []string{"/usr/local/bin/" + c.Command}
		}
		img, err := mutate.AppendLayers(empty.Image, layers...)
		if err != nil {
			return err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return err
		}
		cf = cf.DeepCopy()
		cf.Architecture, cf.OS = goarch(), "linux"
		cf.Config.Entrypoint = entrypoint
		cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
		cf.Config.Labels = map[string]string{"dev.nuv.built-by": "nuv cluster node-image build", "dev.nuv.kubernetes-version": "v" + version}
		if c.Content != "" {
			cf.Config.Labels["dev.nuv.content"] = c.Content
		}
		img, err = mutate.ConfigFile(img, cf)
		if err != nil {
			return err
		}
		tag, err := name.NewTag(c.Ref)
		if err != nil {
			return err
		}
		refs[tag] = img
	}
	return tarball.MultiRefWriteToFile(out, refs)
}

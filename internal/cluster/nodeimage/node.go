package nodeimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	nuvsrc "github.com/nuv-dev/nuv"
	"github.com/nuv-dev/nuv/internal/image/buildcache"
	"github.com/nuv-dev/nuv/internal/runner"
)

// kindModule returns the directory of the sigs.k8s.io/kind module nuv depends on (the version of
// nuv's go.mod) and its version, downloading it through the module proxy when the module cache
// lacks it.
func kindModule(ctx context.Context, getenv func(string) string) (dir, version string, err error) {
	gomod, err := nuvsrc.KubeSources.ReadFile("go.mod")
	if err != nil {
		return "", "", err
	}
	m := regexp.MustCompile(`(?m)^\s*sigs\.k8s\.io/kind (v\S+)`).FindSubmatch(gomod)
	if m == nil {
		return "", "", fmt.Errorf("nuv's go.mod does not require sigs.k8s.io/kind")
	}
	version = string(m[1])
	goBin, err := runner.FindGo(getenv)
	if err != nil {
		return "", "", fmt.Errorf("the kind module's base files are read from the Go module cache: %w", err)
	}
	tmp, err := os.MkdirTemp("", "nuv-kindmod-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	out, err := runner.Output(ctx, runner.Cmd{Path: goBin, Args: []string{"mod", "download", "-json", "sigs.k8s.io/kind@" + version}, Dir: tmp,
		Env: append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")})
	if err != nil {
		return "", "", fmt.Errorf("the sigs.k8s.io/kind module %s: %w", version, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		return "", "", fmt.Errorf("go mod download sigs.k8s.io/kind@%s: %s %v", version, info.Error, err)
	}
	if _, err := os.Stat(filepath.Join(info.Dir, kindBaseFiles)); err != nil {
		return "", "", fmt.Errorf("the kind module %s has no %s: %w", version, kindBaseFiles, err)
	}
	return info.Dir, version, nil
}

// kindBaseFiles is where the kind module keeps the files of its base image.
const kindBaseFiles = "images/base/files"

// kindFilesHash hashes the kind base files (names, modes and contents).
func kindFilesHash(kindDir string) (string, error) {
	var parts []string
	base := filepath.Join(kindDir, kindBaseFiles)
	err := filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		parts = append(parts, rel, string(b))
		return nil
	})
	return buildcache.Key(parts...), err
}

type nodeInputs struct {
	root, kindDir, nuvNode, crictl, version, storeTar string
	restrictOOM                                       bool
	pauseRef, podnetImage                             string
	info                                              []byte
}

// nodeUnits are the units of kind's base files the node starts (as kind's base image enables them).
var nodeUnits = []string{"containerd.service", "kubelet.service", "undo-mount-hacks.service"}

// writeNodeLayer writes the node's own layer (see the package documentation) to out.
func writeNodeLayer(ctx context.Context, out string, in nodeInputs) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	t := newTreeWriter(f)
	base := filepath.Join(in.kindDir, kindBaseFiles)
	// kind's base files, with the modes of kind's Dockerfile
	err = filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		rel = "/" + filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "/LICENSES/") {
			return nil
		}
		mode := int64(0o644)
		if strings.HasPrefix(rel, "/usr/local/bin/") || strings.HasPrefix(rel, "/kind/bin/") {
			mode = 0o755
		}
		if rel == "/etc/containerd/config.toml" {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			conf, err := ContainerdConfig(string(b), in.pauseRef, in.restrictOOM)
			if err != nil {
				return err
			}
			return t.Bytes(rel, []byte(conf), mode)
		}
		return t.File(rel, p, mode)
	})
	if err != nil {
		return fmt.Errorf("kind base files: %w", err)
	}
	spec, err := runner.Output(ctx, runner.Cmd{Path: "ctr", Args: []string{"oci", "spec"}})
	if err != nil {
		return fmt.Errorf("ctr oci spec: %w", err)
	}
	criBase, err := CRIBaseSpec(spec)
	if err != nil {
		return err
	}
	if err := t.Bytes("/etc/containerd/cri-base.json", criBase, 0o644); err != nil {
		return err
	}
	for _, u := range nodeUnits {
		if err := t.Symlink("/etc/systemd/system/multi-user.target.wants/"+u, "/etc/systemd/system/"+u); err != nil {
			return err
		}
	}
	if err := t.Symlink("/etc/systemd/system/systemd-binfmt.service", "/dev/null"); err != nil {
		return err
	}
	if err := t.Dir("/etc/kubernetes/manifests", 0o755); err != nil {
		return err
	}
	// forwarding inside the node's network namespace (pods' traffic between nodes); the host's
	// own setting is not touched
	if err := t.Bytes("/etc/sysctl.d/99-nuv-node.conf", []byte("net.ipv4.ip_forward=1\nnet.ipv6.conf.all.forwarding=1\n"), 0o644); err != nil {
		return err
	}
	if err := t.File("/usr/local/bin/nuv-node", in.nuvNode, 0o755); err != nil {
		return err
	}
	if err := t.File("/usr/local/bin/crictl", in.crictl, 0o755); err != nil {
		return err
	}
	for _, n := range []string{"kubelet", "kubeadm", "kubectl", "kube-proxy"} {
		if err := t.Symlink("/usr/bin/"+n, "/usr/local/bin/nuv-node"); err != nil {
			return err
		}
	}
	// kind's units run containerd from /usr/local/bin; Debian installs it in /usr/bin
	for _, n := range []string{"containerd", "ctr", "containerd-shim-runc-v2"} {
		if _, err := os.Stat(filepath.Join(in.root, "usr/bin", n)); err != nil {
			return fmt.Errorf("the root file system has no /usr/bin/%s", n)
		}
		if err := t.Symlink("/usr/local/bin/"+n, "/usr/bin/"+n); err != nil {
			return err
		}
	}
	// Debian's CNI plugins live in /usr/lib/cni; containerd looks in /opt/cni/bin
	plugins, err := os.ReadDir(filepath.Join(in.root, "usr/lib/cni"))
	if err != nil || len(plugins) == 0 {
		return fmt.Errorf("the root file system has no CNI plugins in /usr/lib/cni: %v", err)
	}
	for _, p := range plugins {
		if err := t.Symlink("/opt/cni/bin/"+p.Name(), "/usr/lib/cni/"+p.Name()); err != nil {
			return err
		}
	}
	if err := t.Bytes("/kind/version", []byte("v"+in.version+"\n"), 0o644); err != nil {
		return err
	}
	if err := t.Bytes("/kind/manifests/default-cni.yaml", []byte(CNIManifest(in.podnetImage)), 0o644); err != nil {
		return err
	}
	if err := t.Bytes("/kind/nuv-node-image.json", in.info, 0o644); err != nil {
		return err
	}
	// containerd's store, with the pre-loaded images
	sf, err := os.Open(in.storeTar)
	if err != nil {
		return err
	}
	defer sf.Close()
	tr := tar.NewReader(sf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", in.storeTar, err)
		}
		p := "/" + strings.TrimSuffix(path.Clean(strings.TrimPrefix(h.Name, "./")), "/")
		if p == "/." || p == "/" || t.seen[p] {
			continue
		}
		t.seen[p] = true
		h.Name = strings.TrimPrefix(h.Name, "./")
		if err := t.tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.Copy(t.tw, tr); err != nil {
			return err
		}
	}
	if err := t.Close(); err != nil {
		return err
	}
	return f.Close()
}

// ContainerdConfig adapts kind's containerd configuration to the node nuv builds: the sandbox
// image is the pause image kubeadm asks for (pre-loaded), and restrict_oom_score_adj is set where
// the host refuses negative OOM scores (pause asks for -998). It fails when kind's file no longer
// has the settings it edits.
func ContainerdConfig(kind, pauseRef string, restrictOOM bool) (string, error) {
	sandbox := regexp.MustCompile(`(?m)^(\s*sandbox_image\s*=\s*)"[^"]*"`)
	if !sandbox.MatchString(kind) {
		return "", fmt.Errorf("kind's containerd config.toml has no sandbox_image setting")
	}
	out := sandbox.ReplaceAllString(kind, `${1}"`+pauseRef+`"`)
	oom := regexp.MustCompile(`(?m)^(\s*restrict_oom_score_adj\s*=\s*)\w+`)
	if !oom.MatchString(out) {
		return "", fmt.Errorf("kind's containerd config.toml has no restrict_oom_score_adj setting")
	}
	return oom.ReplaceAllString(out, fmt.Sprintf("${1}%v", restrictOOM)), nil
}

// CRIBaseSpec makes containerd's base OCI spec for the CRI as kind's base image does from
// `ctr oci spec`: kind's createContainer hook added, rlimits removed.
func CRIBaseSpec(spec []byte) ([]byte, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(spec))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("ctr oci spec printed no JSON: %w", err)
	}
	hooks, _ := doc["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	cc, _ := hooks["createContainer"].([]any)
	hooks["createContainer"] = append(cc, map[string]any{"path": "/kind/bin/mount-product-files.sh"})
	doc["hooks"] = hooks
	if p, ok := doc["process"].(map[string]any); ok {
		delete(p, "rlimits")
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// writeNodeImage writes the node image (the root file system layer and the node layer) as a
// docker-archive tarball tagged ref. The layers are stored uncompressed (gzip level 0): the image
// is loaded on this machine, where compressing 1 GB costs more than it saves.
func writeNodeImage(out, ref, rootfsTar, nodeTar, version, key string) error {
	var layers []v1.Layer
	for _, p := range []string{rootfsTar, nodeTar} {
		l, err := tarball.LayerFromFile(p, tarball.WithCompressionLevel(gzip.NoCompression))
		if err != nil {
			return err
		}
		layers = append(layers, l)
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
	cf.Config.Entrypoint = []string{"/usr/local/bin/entrypoint", "/sbin/init"}
	cf.Config.Env = []string{"container=docker", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", `HTTP_PROXY=`, `HTTPS_PROXY=`, `NO_PROXY=`}
	cf.Config.StopSignal = "SIGRTMIN+3"
	cf.Config.Labels = map[string]string{
		"dev.nuv.built-by":           "nuv cluster node-image build",
		"dev.nuv.kubernetes-version": "v" + version,
		"dev.nuv.node-image.key":     key,
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return err
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := tarball.WriteToFile(tmp, tag, img); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, out)
}

// buildInfo is /kind/nuv-node-image.json: what the image holds and how it was made.
func buildInfo(r Result, d Debian, kindVersion, etcdVersion string, restrictOOM bool) []byte {
	images := append([]string(nil), r.Images...)
	sort.Strings(images)
	b, _ := json.MarshalIndent(map[string]any{
		"ref": r.Ref, "key": r.Key, "debian": d, "packages": Packages, "kindModule": kindVersion,
		"etcd": etcdVersion, "images": images, "restrictOOMScoreAdj": restrictOOM,
	}, "", "  ")
	return append(b, '\n')
}

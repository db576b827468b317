// Package nodeimage assembles kind node images without pulling anything (`nuv cluster node-image
// build`), for machines that cannot pull kindest/node: air-gapped sites, and the machines nuv is
// tested on, which reach only the Go module proxy and Debian's archive.
//
// A node image is two layers:
//
//   - a Debian root file system made by debootstrap from the host's apt sources, with the packages
//     of kind's base image that Debian has, containerd, runc and the CNI plugins (Packages), and
//     kind's clean-ups (units not started by default, journald not reading kmsg);
//   - the node's own files: nuv-node (kubelet, kubeadm, kubectl, kube-proxy, the control plane and
//     etcd, built from k8s.io/kubernetes in the companion's cached build, internal/cluster/local),
//     kind's base files read from the sigs.k8s.io/kind module nuv depends on (entrypoint, containerd
//     configuration, systemd units), the host's adjustments (containerd's restrict_oom_score_adj
//     where the kernel refuses negative OOM scores), the pod network's manifest
//     (/kind/manifests/default-cni.yaml: nuv-podnet, see podnet), and containerd's store with the
//     images kubeadm asks for, assembled with go-containerregistry (the control plane, kube-proxy and
//     etcd run nuv-node; CoreDNS is built from its module; pause is nuv-pause), and crictl, built
//     from the cri-tools module.
//
// Every stage is cached by the hash of its inputs under CacheDir/nodeimage; an entry whose files do
// not match their recorded SHA-256 is rebuilt. A warm build checks the keys and one hash and takes
// seconds. Ensure is what the kind provider calls: a node image present in the container runtime.
//
// On a cgroup v1 host the kubelet of Kubernetes 1.36 must be told `failCgroupV1: false`: that is a
// KubeletConfiguration setting, which the kind provider passes as a kubeadm config patch (the image
// cannot: kubeadm writes the kubelet's configuration when the cluster is created).
package nodeimage

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/image/buildcache"
	"github.com/nuv-dev/nuv/internal/runner"
	"github.com/nuv-dev/nuv/internal/runtimewrap"
)

// sources are this package's own files: they key the node-image build (what it writes into the
// image is defined here).
//
//go:embed *.go
var sources embed.FS

// Repository is the repository of the node images nuv builds; the tag is the Kubernetes version
// and the build's key.
const Repository = "nuv.dev/kind-node"

// Options of a build.
type Options struct {
	// Version is the Kubernetes version ("" is companion.KubeVersion, the only one nuv builds).
	Version string
	Log     cli.Logger
	// Getenv reads NUV_CACHE_DIR, XDG_CACHE_HOME, HOME, PATH, DOCKER_HOST, NUV_DEBIAN_SUITE,
	// NUV_DEBIAN_MIRROR and what the companion build reads (nil: the process environment).
	Getenv func(string) string
	// Offline builds Go programs from the module cache only (debootstrap still needs the mirror
	// on a cold cache).
	Offline bool
	// RestrictOOMScoreAdj sets containerd's restrict_oom_score_adj; nil decides from this host
	// (true when it lacks CAP_SYS_RESOURCE, without which negative OOM scores are refused).
	RestrictOOMScoreAdj *bool
	// Runtime is the container runtime's program Load and Ensure put the image into: docker,
	// podman or nerdctl, a name on PATH or a path ("" is docker). Its client settings come from
	// Getenv (DOCKER_HOST; podman's CONTAINER_HOST, CONTAINERS_CONF, CONTAINERS_STORAGE_CONF).
	Runtime string

	// acceptRuntime (Ensure) takes the runtime's copy of the image for this build's key instead
	// of checking the cached tarball.
	acceptRuntime bool
}

// Stage is one step of a build and its duration.
type Stage = buildcache.Stage

// Result is a built node image.
type Result struct {
	// Ref is the image's reference (Repository:v<version>-<key>).
	Ref string
	// Tarball is the image as a docker-archive tarball (docker load -i, tarball.ImageFromPath).
	Tarball string
	// Key is the hash of every input.
	Key string
	// Images are the images pre-loaded in the node's containerd.
	Images []string
	// Cached says the whole image came from the cache.
	Cached bool
	// InRuntime says the container runtime holds the image of this key (Ensure): the cache was
	// not read, and Tarball is empty.
	InRuntime bool
	Stages    []Stage
}

type builder struct {
	o      Options
	log    cli.Logger
	getenv func(string) string
	cache  string
	stages buildcache.Stages
}

func newBuilder(o Options) (*builder, error) {
	b := &builder{o: o, log: o.Log, getenv: o.Getenv}
	if b.log == nil {
		b.log = cli.Quiet()
	}
	if b.getenv == nil {
		b.getenv = os.Getenv
	}
	if b.o.Version == "" {
		b.o.Version = companion.KubeVersion
	}
	b.o.Version = strings.TrimPrefix(b.o.Version, "v")
	if b.o.Version != companion.KubeVersion {
		return nil, fmt.Errorf("this nuv builds node images of Kubernetes %s only (the version of its k8s.io/kubernetes); %s is not supported", companion.KubeVersion, b.o.Version)
	}
	b.cache = filepath.Join(companion.CacheDir(b.getenv), "nodeimage")
	b.stages = buildcache.Stages{Log: b.log, Prefix: "node image"}
	return b, nil
}

func lookPath(name string) (string, error) { return exec.LookPath(name) }

func goarch() string { return runtime.GOARCH }

// sourcesHash hashes this package's sources (its tests excepted).
func sourcesHash() string {
	var parts []string
	_ = fs.WalkDir(sources, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, "_test.go") {
			b, _ := sources.ReadFile(p)
			parts = append(parts, p, string(b))
		}
		return err
	})
	return buildcache.Key(parts...)
}

// restrictOOM decides containerd's restrict_oom_score_adj.
func (b *builder) restrictOOM() bool {
	if b.o.RestrictOOMScoreAdj != nil {
		return *b.o.RestrictOOMScoreAdj
	}
	missing, err := runtimewrap.HostMissing()
	if err != nil {
		return false
	}
	for _, m := range missing {
		if m == "CAP_SYS_RESOURCE" {
			return true
		}
	}
	return false
}

// Build assembles the node image (or finds it in the cache) and returns it as a tarball.
func Build(ctx context.Context, o Options) (Result, error) {
	b, err := newBuilder(o)
	if err != nil {
		return Result{}, err
	}
	return b.build(ctx)
}

func (b *builder) build(ctx context.Context) (Result, error) {
	start := time.Now()
	r, err := b.recipe(ctx)
	if err != nil {
		return Result{}, err
	}
	ref, key := r.ref, r.key
	res := Result{Ref: ref, Key: key}
	for _, c := range r.comps {
		res.Images = append(res.Images, c.Ref)
	}
	finalRoot := filepath.Join(b.cache, "image")
	if b.o.acceptRuntime && runtimeHasKey(ctx, b.o, ref, key) {
		b.log.Infof("node image: %s is in %s already", ref, b.o.runtimeName())
		res.Cached, res.InRuntime = true, true
		res.Stages = append(b.stages.List, Stage{Name: "node image (in " + b.o.runtimeName() + ")", Duration: time.Since(start), Cached: true})
		return res, nil
	}
	if dir, ok, _ := buildcache.Lookup(finalRoot, key); ok {
		b.log.Infof("node image: %s from the cache (%s)", ref, dir)
		res.Tarball, res.Cached = filepath.Join(dir, "image.tar"), true
		res.Stages = append(b.stages.List, Stage{Name: "node image (cached)", Duration: time.Since(start), Cached: true})
		return res, nil
	}
	// one assembly at a time on this machine: a second nuv waits, then finds the image cached
	unlock, err := buildcache.Lock(ctx, b.cache, func(lock string) {
		b.log.Infof("node image: waiting for another nuv building a node image (%s)", lock)
	})
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	if dir, ok, corrupt := buildcache.Lookup(finalRoot, key); ok {
		b.log.Infof("node image: %s from the cache (%s), built while this nuv waited", ref, dir)
		res.Tarball, res.Cached = filepath.Join(dir, "image.tar"), true
		res.Stages = append(b.stages.List, Stage{Name: "node image (cached)", Duration: time.Since(start), Cached: true})
		return res, nil
	} else if corrupt {
		b.log.Warnf("node image: the cache entry %s is damaged: building it again", filepath.Join(finalRoot, key))
	}

	finalDir, err := b.assemble(ctx, r, res, finalRoot)
	if err != nil {
		return Result{}, err
	}
	res.Tarball = filepath.Join(finalDir, "image.tar")
	res.Stages = b.stages.List
	for _, old := range buildcache.Prune(finalRoot, keepImages, nil) {
		b.log.Infof("node image: removed the older cache entry %s", old)
	}
	// older builds of the node's programs (each nuv-node is ~300 MB; the images hold copies)
	for _, p := range []companion.Program{companion.ProgramNode, companion.ProgramPause} {
		for _, old := range buildcache.Prune(filepath.Join(companion.CacheDir(b.getenv), p.Name), keepImages, nil) {
			b.log.Infof("node image: removed the older %s build %s", p.Name, old)
		}
	}
	took := time.Since(start)
	b.log.Infof("node image %s built in %s: %s", ref, took.Round(time.Second), res.Tarball)
	_ = appendRecord(filepath.Join(b.cache, "builds.json"), Record{When: time.Now().UTC(), Ref: ref, Seconds: took.Seconds(), Stages: res.Stages, Cores: runtime.NumCPU()})
	return res, nil
}

// recipe is what a node image is made of and its cache key: the node's programs (built here), the
// component images kubeadm asks for, the host's Debian, kind's base files, Go and containerd.
type recipe struct {
	nuvNode, pause, etcdVersion, corednsVersion string
	comps                                       []Component
	deb                                         Debian
	kindDir, kindVersion                        string
	restrict                                    bool
	rootKey, dnsKey, crictlKey, key, ref        string
}

// recipe builds the node's programs and reads the versions and hashes that key the image.
func (b *builder) recipe(ctx context.Context) (*recipe, error) {
	comp := companion.Builder{Getenv: b.getenv, Log: b.log}
	var nuvNode, pause string
	if err := b.stages.Run("nuv-node and nuv-pause (Kubernetes "+b.o.Version+", companion build)", func() (bool, error) {
		var err error
		if nuvNode, err = comp.BuildKube(ctx, companion.ProgramNode, b.o.Offline); err != nil {
			return false, err
		}
		pause, err = comp.BuildKube(ctx, companion.ProgramPause, b.o.Offline)
		return false, err
	}); err != nil {
		return nil, err
	}
	var kubeadmImages []string
	var etcdVersion string
	if err := b.stages.Run("images kubeadm asks for", func() (bool, error) {
		out, err := runner.Output(ctx, runner.Cmd{Path: nuvNode, Args: []string{"kubeadm", "config", "images", "list", "--kubernetes-version", "v" + b.o.Version}})
		if err != nil {
			return false, err
		}
		kubeadmImages = strings.Fields(string(out))
		v, err := runner.Output(ctx, runner.Cmd{Path: nuvNode, Args: []string{"etcd", "--version"}})
		if err != nil {
			return false, err
		}
		for _, l := range strings.Split(string(v), "\n") {
			if s, ok := strings.CutPrefix(l, "etcd Version: "); ok {
				etcdVersion = strings.TrimSpace(s)
			}
		}
		return false, nil
	}); err != nil {
		return nil, err
	}
	comps, err := components(kubeadmImages, b.o.Version, etcdVersion)
	if err != nil {
		return nil, err
	}
	corednsVersion := ""
	for _, c := range comps {
		if c.Command == "coredns" {
			corednsVersion = c.Ref[strings.LastIndex(c.Ref, ":")+1:]
		}
	}
	deb, err := HostDebian(b.getenv, "/etc")
	if err != nil {
		return nil, err
	}
	kindDir, kindVersion, err := kindModule(ctx, b.getenv)
	if err != nil {
		return nil, err
	}
	kindHash, err := kindFilesHash(kindDir)
	if err != nil {
		return nil, err
	}
	goVersion, err := goVersion(ctx, b.getenv)
	if err != nil {
		return nil, err
	}
	restrict := b.restrictOOM()
	// the host's containerd writes the node's image store and its default OCI spec
	ctrdVersion, err := runner.Output(ctx, runner.Cmd{Path: "containerd", Args: []string{"--version"}})
	if err != nil {
		return nil, fmt.Errorf("containerd (Debian's containerd package, installed with docker.io) is needed to pre-load the node's images: %w", err)
	}
	rootKey := rootfsKey(deb, goarch())
	dnsKey := buildcache.Key("coredns", corednsVersion, goVersion, goarch())
	crictlKey := buildcache.Key("crictl", CrictlVersion, crictlLdflags, goVersion, goarch())
	key := buildcache.Key("node-image", b.o.Version, rootKey, dnsKey, crictlKey, filepath.Base(filepath.Dir(nuvNode)), filepath.Base(filepath.Dir(pause)),
		kindVersion, kindHash, sourcesHash(), fmt.Sprint(restrict), strings.Join(kubeadmImages, ","), goarch(), strings.TrimSpace(string(ctrdVersion)))
	ref := fmt.Sprintf("%s:v%s-%s", Repository, b.o.Version, buildcache.ShortKey(key))
	return &recipe{nuvNode: nuvNode, pause: pause, etcdVersion: etcdVersion, corednsVersion: corednsVersion, comps: comps,
		deb: deb, kindDir: kindDir, kindVersion: kindVersion, restrict: restrict,
		rootKey: rootKey, dnsKey: dnsKey, crictlKey: crictlKey, key: key, ref: ref}, nil
}

// assemble makes the node image of r (res names its ref, key and images) in the cache under
// finalRoot from its cached parts, each made first if missing, and returns its directory.
func (b *builder) assemble(ctx context.Context, r *recipe, res Result, finalRoot string) (string, error) {
	var rootDir string
	if err := b.stages.Run("Debian root file system (debootstrap "+r.deb.Suite+")", func() (bool, error) {
		return b.cachedEntry(filepath.Join(b.cache, "rootfs"), r.rootKey, &rootDir, func(tmp string) ([]string, error) {
			return b.buildRootfs(ctx, tmp, r.deb)
		})
	}); err != nil {
		return "", err
	}
	var dnsDir string
	if err := b.stages.Run("CoreDNS "+r.corednsVersion+" (from its module)", func() (bool, error) {
		return b.cachedEntry(filepath.Join(b.cache, "coredns"), r.dnsKey, &dnsDir, func(tmp string) ([]string, error) {
			return b.buildGoTool(ctx, tmp, corednsModule, r.corednsVersion, "coredns", "")
		})
	}); err != nil {
		return "", err
	}
	var crictlDir string
	if err := b.stages.Run("crictl "+CrictlVersion+" (from its module)", func() (bool, error) {
		return b.cachedEntry(filepath.Join(b.cache, "crictl"), r.crictlKey, &crictlDir, func(tmp string) ([]string, error) {
			return b.buildGoTool(ctx, tmp, crictlPackage, CrictlVersion, "crictl", crictlLdflags)
		})
	}); err != nil {
		return "", err
	}
	work, err := os.MkdirTemp(b.cache, "work-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	root := filepath.Join(work, "rootfs")
	if err := b.stages.Run("unpack the root file system", func() (bool, error) {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return false, err
		}
		return false, runner.Run(ctx, runner.Cmd{Path: "tar", Args: []string{"--numeric-owner", "-xf", filepath.Join(rootDir, "rootfs.tar"), "-C", root}})
	}); err != nil {
		return "", err
	}
	imagesTar := filepath.Join(work, "images.tar")
	if err := b.stages.Run(fmt.Sprintf("component images (%d, go-containerregistry)", len(r.comps)), func() (bool, error) {
		layers := filepath.Join(work, "layers")
		if err := os.MkdirAll(layers, 0o755); err != nil {
			return false, err
		}
		return false, buildComponentImages(layers, imagesTar, imageInputs{root: root, nuvNode: r.nuvNode, pause: r.pause, coredns: filepath.Join(dnsDir, "coredns")}, r.comps, b.o.Version)
	}); err != nil {
		return "", err
	}
	storeTar := filepath.Join(work, "containerd.tar")
	if err := b.stages.Run("pre-load the images into the node's containerd", func() (bool, error) {
		got, err := b.importImages(ctx, filepath.Join(work, "store"), imagesTar, storeTar)
		if err != nil {
			return false, err
		}
		if missing := missingRefs(res.Images, got); len(missing) > 0 {
			return false, fmt.Errorf("containerd does not list %s after the import (it has %s)", strings.Join(missing, ", "), strings.Join(got, ", "))
		}
		return false, nil
	}); err != nil {
		return "", err
	}
	var finalDir string
	if err := b.stages.Run("node layer and image", func() (bool, error) {
		nodeTar := filepath.Join(work, "node.tar")
		err := writeNodeLayer(ctx, nodeTar, nodeInputs{
			root: root, kindDir: r.kindDir, nuvNode: r.nuvNode, crictl: filepath.Join(crictlDir, "crictl"), version: b.o.Version, storeTar: storeTar,
			restrictOOM: r.restrict, pauseRef: pauseRef(r.comps), podnetImage: PodnetImage(b.o.Version),
			info: buildInfo(res, r.deb, r.kindVersion, r.etcdVersion, r.restrict),
		})
		if err != nil {
			return false, err
		}
		finalDir, err = buildcache.Publish(finalRoot, r.key, "", func(tmp string) ([]string, error) {
			return []string{"image.tar"}, writeNodeImage(filepath.Join(tmp, "image.tar"), r.ref, filepath.Join(rootDir, "rootfs.tar"), nodeTar, b.o.Version, r.key)
		})
		return false, err
	}); err != nil {
		return "", err
	}
	return finalDir, nil
}

// Record is one assembled (not cached) node image build, kept in CacheDir/nodeimage/builds.json
// for the benchmark and for estimates.
type Record struct {
	When    time.Time `json:"when"`
	Ref     string    `json:"ref"`
	Seconds float64   `json:"seconds"`
	Cores   int       `json:"cores"`
	Stages  []Stage   `json:"stages"`
}

// Records returns the builds recorded in the cache (oldest first).
func Records(getenv func(string) string) []Record {
	var rs []Record
	b, err := os.ReadFile(filepath.Join(companion.CacheDir(getenv), "nodeimage", "builds.json"))
	if err == nil {
		_ = json.Unmarshal(b, &rs)
	}
	return rs
}

func appendRecord(path string, r Record) error {
	var rs []Record
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &rs)
	}
	rs = append(rs, r)
	if len(rs) > 50 {
		rs = rs[len(rs)-50:]
	}
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, b, 0o644)
}

// keepImages is how many assembled images the cache keeps (each is about 1.2 GB); older ones go.
const keepImages = 3

// cachedEntry sets *dir to the valid cache entry of key under root, building it with fill when
// it is missing or damaged.
func (b *builder) cachedEntry(root, key string, dir *string, fill func(tmp string) ([]string, error)) (bool, error) {
	d, ok, corrupt := buildcache.Lookup(root, key)
	if ok {
		*dir = d
		return true, nil
	}
	if corrupt {
		b.log.Warnf("node image: the cache entry %s is damaged: building it again", d)
	}
	d, err := buildcache.Publish(root, key, "", fill)
	*dir = d
	return false, err
}

func missingRefs(want, got []string) []string {
	have := map[string]bool{}
	for _, g := range got {
		have[g] = true
	}
	var out []string
	for _, w := range want {
		if !have[w] {
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return out
}

func pauseRef(comps []Component) string {
	for _, c := range comps {
		if c.Command == "pause" {
			return c.Ref
		}
	}
	return ""
}

func goVersion(ctx context.Context, getenv func(string) string) (string, error) {
	goBin, err := runner.FindGo(getenv)
	if err != nil {
		return "", err
	}
	out, err := runner.Output(ctx, runner.Cmd{Path: goBin, Args: []string{"env", "GOVERSION"}})
	return strings.TrimSpace(string(out)), err
}

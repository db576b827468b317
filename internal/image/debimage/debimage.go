// Package debimage builds container images from Debian packages without a container daemon or a
// registry to pull from: a minimal Debian root file system made by debootstrap (the node image's
// machinery, nodeimage.Debootstrap) with the image's packages, nuv's own files on top (entrypoint,
// configuration), packed as one layer and assembled with go-containerregistry into a docker-archive
// tarball. kind nodes load it (publish.Kind, the path of `task build-and-load`); a registry can take
// it too.
//
// A build is cached by content under CacheDir/debimage/<key>: the key hashes the Spec (packages,
// files, entrypoint, user, ...), the Debian suite and mirror, the architecture and this package's
// sources. An entry whose files do not match their recorded SHA-256 is rebuilt, never used; a
// warm build checks the key and one hash and takes well under a second. The .debs debootstrap
// downloads are kept in CacheDir/debimage/debs, so a second image of the same suite downloads only
// what it adds.
package debimage

import (
	"context"
	_ "embed" // the builder's source keys the cache
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/nodeimage"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/image/buildcache"
	"github.com/nuv-dev/nuv/internal/runner"
)

// builderSource is this file: what Build does to every image is defined here (an image's own
// content is its Spec, which its key hashes).
//
//go:embed debimage.go
var builderSource string

// File is a file nuv adds to an image.
type File struct {
	// Path is the absolute path in the image.
	Path string `json:"path"`
	// Mode is the file's permission bits (0 is 0644).
	Mode os.FileMode `json:"mode,omitempty"`
	// Data is the content.
	Data string `json:"data"`
}

// Spec describes an image.
type Spec struct {
	// Repository is the image's repository (e.g. nuv.dev/whisk-redis); Tag its tag.
	Repository string `json:"repository"`
	Tag        string `json:"tag"`
	// Packages are the Debian packages installed (with their dependencies) on a minbase system.
	Packages []string `json:"packages"`
	// NPM are npm packages, each pinned (name@version), installed with the host's npm into
	// /opt/nuv-npm of the image (node_modules there) with install scripts off: what they run must
	// be plain JavaScript or carry its native builds (prebuilds). The image needs Debian's nodejs.
	NPM []string `json:"npm,omitempty"`
	// Files are written after the packages are installed (they may replace packaged files).
	Files []File `json:"files,omitempty"`
	// Remove are paths (globs, relative to the root) deleted before packing: documentation and the
	// like that the image does not need.
	Remove     []string `json:"remove,omitempty"`
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
	Env        []string `json:"env,omitempty"`
	User       string   `json:"user,omitempty"`
	WorkingDir string   `json:"workingDir,omitempty"`
	Ports      []int    `json:"ports,omitempty"`
	// Volumes are the image's declared volume paths (created empty in the layer).
	Volumes []string `json:"volumes,omitempty"`
}

// Ref is the image's reference, repository:tag.
func (s Spec) Ref() string { return s.Repository + ":" + s.Tag }

func (s Spec) validate() error {
	if _, err := name.NewTag(s.Ref(), name.StrictValidation); err != nil {
		return fmt.Errorf("image %q: %w", s.Ref(), err)
	}
	if len(s.Packages) == 0 {
		return fmt.Errorf("image %s: no Debian packages", s.Ref())
	}
	for _, f := range s.Files {
		if !filepath.IsAbs(f.Path) || filepath.Clean(f.Path) != f.Path {
			return fmt.Errorf("image %s: file path %q is not a clean absolute path", s.Ref(), f.Path)
		}
	}
	for _, p := range s.NPM {
		if i := strings.LastIndex(p, "@"); i <= 0 || i == len(p)-1 {
			return fmt.Errorf("image %s: npm package %q is not pinned (name@version)", s.Ref(), p)
		}
	}
	if len(s.Entrypoint) == 0 && len(s.Cmd) == 0 {
		return fmt.Errorf("image %s: neither an entrypoint nor a command", s.Ref())
	}
	return nil
}

// Options of a build.
type Options struct {
	Log cli.Logger
	// Getenv reads NUV_CACHE_DIR, XDG_CACHE_HOME, HOME, NUV_DEBIAN_SUITE and NUV_DEBIAN_MIRROR
	// (nil: the process environment).
	Getenv func(string) string
	// Debian is the release and mirror (nil: the host's, nodeimage.HostDebian).
	Debian *nodeimage.Debian
	// Etc is where the host's os-release and apt sources are ("" is /etc).
	Etc string
}

// withDefaults fills Log and Getenv when they are nil (a quiet log, the process environment).
func (o Options) withDefaults() Options {
	if o.Log == nil {
		o.Log = cli.Quiet()
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	return o
}

// Stage is one step of a build and its duration.
type Stage = buildcache.Stage

// Result is a built image.
type Result struct {
	Ref string
	// Tarball is the image as a docker-archive tarball (docker load -i, tarball.ImageFromPath).
	Tarball string
	// Key is the hash of every input (also the image's dev.nuv.key label).
	Key    string
	Cached bool
	Stages []Stage
}

// Image opens the built image.
func (r Result) Image() (v1.Image, error) {
	tag, err := name.NewTag(r.Ref)
	if err != nil {
		return nil, err
	}
	img, err := tarball.ImageFromPath(r.Tarball, &tag)
	if err != nil {
		return nil, fmt.Errorf("open image %s (%s): %w", r.Ref, r.Tarball, err)
	}
	return img, nil
}

// Index is the built image as a one-platform index (linux/<host arch>), what the publishers of
// package publish take.
func (r Result) Index() (v1.ImageIndex, error) {
	img, err := r.Image()
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	return mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
		Platform: &v1.Platform{OS: cf.OS, Architecture: cf.Architecture}}}), nil
}

// recipe names what Build does to the root file system besides the Spec; change it with that.
const recipe = "debimage-v1"

// Key is the cache key of s built from d on arch.
func Key(s Spec, d nodeimage.Debian, arch string) string {
	b, _ := json.Marshal(s)
	return buildcache.Key("debimage", recipe, string(b), d.Suite, d.Mirror, arch, sourcesHash())
}

// fromCache is the image ref of key when the cache under root holds a valid entry of it.
func fromCache(root, ref, key string, start time.Time, log cli.Logger) (Result, bool) {
	entry := filepath.Join(root, "images", key)
	if !buildcache.Valid(entry, key) {
		return Result{}, false
	}
	log.Infof("image %s: from the cache (key %s) in %s", ref, key[:12], time.Since(start).Round(time.Millisecond))
	return Result{Ref: ref, Key: key, Tarball: filepath.Join(entry, "image.tar"), Cached: true,
		Stages: []Stage{{Name: "image (cached)", Duration: time.Since(start), Cached: true}}}, true
}

// CacheDir is where the images are kept.
func CacheDir(getenv func(string) string) string {
	return filepath.Join(companion.CacheDir(getenv), "debimage")
}

// Build makes the image of s, or finds it in the cache.
func Build(ctx context.Context, s Spec, o Options) (Result, error) {
	start := time.Now()
	o = o.withDefaults()
	log, getenv := o.Log, o.Getenv
	if err := s.validate(); err != nil {
		return Result{}, err
	}
	var d nodeimage.Debian
	if o.Debian != nil {
		d = *o.Debian
	} else {
		etc := o.Etc
		if etc == "" {
			etc = "/etc"
		}
		var err error
		if d, err = nodeimage.HostDebian(getenv, etc); err != nil {
			return Result{}, err
		}
	}
	root := CacheDir(getenv)
	key := Key(s, d, runtime.GOARCH)
	if res, ok := fromCache(root, s.Ref(), key, start, log); ok {
		return res, nil
	}
	res := Result{Ref: s.Ref(), Key: key}
	entry := filepath.Join(root, "images", key)
	unlock, ok, err := lockedLookup(ctx, root, s.Ref(), key, log)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	if ok {
		res.Tarball, res.Cached = filepath.Join(entry, "image.tar"), true
		res.Stages = []Stage{{Name: "image (cached, built while this nuv waited)", Duration: time.Since(start), Cached: true}}
		return res, nil
	}
	stages := buildcache.Stages{Log: log, Prefix: "image " + s.Ref()}
	if err := os.MkdirAll(filepath.Join(root, "images"), 0o755); err != nil {
		return Result{}, err
	}
	work, err := os.MkdirTemp(root, "work-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(work)
	rootfs := filepath.Join(work, "root")
	debs := filepath.Join(root, "debs", d.Suite+"-"+runtime.GOARCH)
	if err := stages.Do(fmt.Sprintf("debootstrap %s with %s", d.Suite, strings.Join(s.Packages, " ")), func() error {
		if err := os.MkdirAll(debs, 0o755); err != nil {
			return err
		}
		return nodeimage.Debootstrap(ctx, log, rootfs, d, s.Packages, []string{"--cache-dir=" + debs})
	}); err != nil {
		return Result{}, err
	}
	if len(s.NPM) > 0 {
		if err := stages.Do("npm install "+strings.Join(s.NPM, " "), func() error { return npmInstall(ctx, log, rootfs, s.NPM) }); err != nil {
			return Result{}, err
		}
	}
	if err := stages.Do("nuv's files", func() error { return finishRoot(rootfs, s) }); err != nil {
		return Result{}, err
	}
	layerTar := filepath.Join(work, "layer.tar")
	if err := stages.Do("pack the layer", func() error {
		// the kernel's and the runtime's mounts are not part of an image; nor are apt's lists
		return runner.Run(ctx, runner.Cmd{Path: "tar", Args: []string{"--numeric-owner", "--xattrs", "--sort=name",
			"--mtime=@0", "--exclude=./dev/*", "--exclude=./proc/*", "--exclude=./sys/*", "--exclude=./run/*", "--exclude=./tmp/*",
			"--exclude=./var/cache/apt/archives/*", "--exclude=./var/lib/apt/lists/*", "--exclude=./var/log/*",
			"-C", rootfs, "-cf", layerTar, "."}})
	}); err != nil {
		return Result{}, err
	}
	if err := stages.Do("image (go-containerregistry)", func() error {
		_, err := buildcache.Publish(filepath.Join(root, "images"), key, s.Ref(), func(tmp string) ([]string, error) {
			return []string{"image.tar"}, writeImage(filepath.Join(tmp, "image.tar"), layerTar, s, d, key)
		})
		return err
	}); err != nil {
		return Result{}, err
	}
	res.Tarball, res.Stages = filepath.Join(entry, "image.tar"), stages.List
	for _, old := range pruneOlder(filepath.Join(root, "images"), s.Ref(), key, keepBuilds) {
		log.Infof("image %s: removed the older build %s", s.Ref(), old)
	}
	log.Infof("image %s built in %s (key %s): %s", s.Ref(), time.Since(start).Round(time.Second), key[:12], res.Tarball)
	return res, nil
}

// NPMPrefix is where npm packages go in an image (their code is in NPMPrefix/node_modules).
const NPMPrefix = "/opt/nuv-npm"

// npmInstall installs pkgs with the host's npm (its cache in ~/.npm makes the next build local)
// under root's NPMPrefix. Install scripts are off: they would run on the host, and would download
// or compile native code for it.
func npmInstall(ctx context.Context, log cli.Logger, root string, pkgs []string) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("npm is not installed (apt-get install npm): %w", err)
	}
	prefix := filepath.Join(root, NPMPrefix)
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return err
	}
	args := append([]string{"install", "--prefix", prefix, "--ignore-scripts", "--omit=dev", "--no-audit", "--no-fund", "--no-update-notifier", "--no-package-lock"}, pkgs...)
	return nodeimage.RunProgress(ctx, log, "npm", runner.Cmd{Path: npm, Args: args, Dir: prefix})
}

// finishRoot removes what s says, writes s's files and creates its volume directories.
func finishRoot(root string, s Spec) error {
	for _, pattern := range s.Remove {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return fmt.Errorf("remove %q: %w", pattern, err)
		}
		for _, p := range m {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		}
	}
	for _, f := range s.Files {
		p := filepath.Join(root, f.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		_ = os.Remove(p) // a packaged file or a symlink is replaced, never written through
		if err := os.WriteFile(p, []byte(f.Data), mode); err != nil {
			return err
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
	}
	for _, v := range s.Volumes {
		if err := os.MkdirAll(filepath.Join(root, v), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// writeImage assembles the one-layer image and writes it as a docker archive.
func writeImage(path, layerTar string, s Spec, d nodeimage.Debian, key string) error {
	layer, err := tarball.LayerFromFile(layerTar)
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Entrypoint = s.Entrypoint
	cf.Config.Cmd = s.Cmd
	cf.Config.Env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, s.Env...)
	cf.Config.User = s.User
	cf.Config.WorkingDir = s.WorkingDir
	if len(s.Ports) > 0 {
		cf.Config.ExposedPorts = map[string]struct{}{}
		for _, p := range s.Ports {
			cf.Config.ExposedPorts[fmt.Sprintf("%d/tcp", p)] = struct{}{}
		}
	}
	if len(s.Volumes) > 0 {
		cf.Config.Volumes = map[string]struct{}{}
		for _, v := range s.Volumes {
			cf.Config.Volumes[v] = struct{}{}
		}
	}
	cf.Config.Labels = map[string]string{
		"dev.nuv.key":             key,
		"dev.nuv.debian-suite":    d.Suite,
		"dev.nuv.debian-packages": strings.Join(s.Packages, ","),
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return err
	}
	tag, err := name.NewTag(s.Ref())
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// keepBuilds is how many builds of one reference the cache keeps (the newest; each image is
// 50 to 100 MB); older ones go when a new one is made.
const keepBuilds = 2

// pruneOlder removes the entries under root holding builds of ref other than key, beyond the
// keep-1 newest, and returns them.
func pruneOlder(root, ref, key string, keep int) []string {
	return buildcache.Prune(root, keep-1, func(dir string) bool {
		m, err := buildcache.ReadManifest(dir)
		return filepath.Base(dir) != key && err == nil && m.Ref == ref
	})
}

// lockedLookup takes the build lock of the cache under root, then looks the entry of key up again
// (another nuv may have made it meanwhile): ok says it is valid. A damaged entry is removed.
func lockedLookup(ctx context.Context, root, ref, key string, log cli.Logger) (unlock func(), ok bool, err error) {
	unlock, err = buildcache.Lock(ctx, root, func(lock string) {
		log.Infof("image %s: waiting for another nuv building an image (%s)", ref, lock)
	})
	if err != nil {
		return nil, false, err
	}
	entry, ok, damaged := buildcache.Lookup(filepath.Join(root, "images"), key)
	if damaged {
		log.Warnf("image %s: the cache entry %s is damaged: building it again", ref, entry)
		if err := os.RemoveAll(entry); err != nil {
			unlock()
			return nil, false, fmt.Errorf("remove damaged cache entry %s: %w", entry, err)
		}
	}
	return unlock, ok, nil
}

// sourcesHash hashes the builder's source.
func sourcesHash() string { return buildcache.Key(builderSource) }

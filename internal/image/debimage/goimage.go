package debimage

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/nuv-dev/nuv/internal/image"
	"github.com/nuv-dev/nuv/internal/image/buildcache"
	"github.com/nuv-dev/nuv/internal/image/gobuild"
	"github.com/nuv-dev/nuv/internal/runner"
)

// GoSpec is an image of the reference workload built from a Go main package of the project by
// nuv's daemonless builder, the operator image's (package gobuild: a static binary, CA
// certificates, the non-root user). Every timestamp is the epoch, so the same sources give the
// same image.
type GoSpec struct {
	// Repository and Tag name the image.
	Repository string `json:"repository"`
	Tag        string `json:"tag"`
	// Main is the main package, relative to the project (e.g. ./operator/cmd/whisk-controller).
	Main string `json:"main"`
}

// Ref is the image's reference, repository:tag.
func (s GoSpec) Ref() string { return s.Repository + ":" + s.Tag }

// goRecipe names what BuildGo does besides compiling; change it with that.
const goRecipe = "goimage-v1"

// GoKey is the cache key of s built in project for arch: it hashes the spec, the Go version and
// the content of every non-standard source file the main package is compiled from (`go list
// -deps`, for linux/arch without cgo).
func GoKey(ctx context.Context, s GoSpec, project, arch string) (string, error) {
	goBin, err := runner.FindGo(nil)
	if err != nil {
		return "", err
	}
	env := append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0")
	ver, err := runner.Output(ctx, runner.Cmd{Path: goBin, Args: []string{"env", "GOVERSION"}, Dir: project, Env: env})
	if err != nil {
		return "", fmt.Errorf("image %s: go env GOVERSION: %w", s.Ref(), err)
	}
	const format = `{{if not .Standard}}{{.ImportPath}}{{"\t"}}{{.Dir}}{{"\t"}}{{join .GoFiles " "}} {{join .EmbedFiles " "}}{{end}}`
	out, err := runner.Output(ctx, runner.Cmd{Path: goBin, Args: []string{"list", "-deps", "-f", format, s.Main}, Dir: project, Env: env})
	if err != nil {
		return "", fmt.Errorf("image %s: go list %s in %s: %w", s.Ref(), s.Main, project, err)
	}
	parts := []string{"goimage", goRecipe, s.Repository, s.Tag, s.Main, arch, strings.TrimSpace(string(ver))}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), "\t", 3)
		if len(fields) != 3 {
			continue
		}
		parts = append(parts, fields[0])
		for _, f := range strings.Fields(fields[2]) {
			sum, err := buildcache.FileSHA256(filepath.Join(fields[1], f))
			if err != nil {
				return "", fmt.Errorf("image %s: %w", s.Ref(), err)
			}
			parts = append(parts, f, sum)
		}
	}
	return buildcache.Key(parts...), nil
}

// BuildGo makes the image of s from the Go sources of project (a module directory), or finds it
// in the cache (CacheDir/images/<key>, like the Debian images: a damaged entry is rebuilt).
func BuildGo(ctx context.Context, s GoSpec, project string, o Options) (Result, error) {
	start := time.Now()
	o = o.withDefaults()
	log, getenv := o.Log, o.Getenv
	tag, err := name.NewTag(s.Ref(), name.StrictValidation)
	if err != nil {
		return Result{}, fmt.Errorf("image %q: %w", s.Ref(), err)
	}
	if st, err := os.Stat(filepath.Join(project, filepath.FromSlash(s.Main))); err != nil || !st.IsDir() {
		return Result{}, fmt.Errorf("image %s: main package %s not found in %s", s.Ref(), s.Main, project)
	}
	key, err := GoKey(ctx, s, project, runtime.GOARCH)
	if err != nil {
		return Result{}, err
	}
	root := CacheDir(getenv)
	if res, ok := fromCache(root, s.Ref(), key, start, log); ok {
		return res, nil
	}
	res := Result{Ref: s.Ref(), Key: key}
	entry := filepath.Join(root, "images", key)
	if err := os.MkdirAll(filepath.Join(root, "images"), 0o755); err != nil {
		return Result{}, err
	}
	unlock, ok, err := lockedLookup(ctx, root, s.Ref(), key, log)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	if !ok {
		log.Infof("image %s: compiling %s ...", s.Ref(), s.Main)
		p := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
		spec := image.Spec{Dir: project, Main: s.Main, Platforms: []v1.Platform{p}, Version: s.Tag,
			Entrypoint: filepath.Base(filepath.FromSlash(s.Main))}
		idx, err := (&gobuild.Builder{CAFile: getenv("NUV_CA_CERTS"), Log: log}).Build(ctx, spec)
		if err != nil {
			return Result{}, fmt.Errorf("image %s: %w", s.Ref(), err)
		}
		img, err := platformImage(idx, p)
		if err != nil {
			return Result{}, fmt.Errorf("image %s: %w", s.Ref(), err)
		}
		if _, err := buildcache.Publish(filepath.Join(root, "images"), key, s.Ref(), func(tmp string) ([]string, error) {
			if err := tarball.WriteToFile(filepath.Join(tmp, "image.tar"), tag, img); err != nil {
				return nil, fmt.Errorf("write %s: %w", filepath.Join(entry, "image.tar"), err)
			}
			return []string{"image.tar"}, nil
		}); err != nil {
			return Result{}, fmt.Errorf("image %s: %w", s.Ref(), err)
		}
		res.Stages = []Stage{{Name: "compile and assemble (gobuild)", Duration: time.Since(start)}}
		for _, old := range pruneOlder(filepath.Join(root, "images"), s.Ref(), key, keepBuilds) {
			log.Infof("image %s: removed the older build %s", s.Ref(), old)
		}
		log.Infof("image %s built in %s (key %s)", s.Ref(), time.Since(start).Round(10*time.Millisecond), key[:12])
	}
	res.Tarball = filepath.Join(entry, "image.tar")
	return res, nil
}

// platformImage is idx's image for p.
func platformImage(idx v1.ImageIndex, p v1.Platform) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.OS == p.OS && d.Platform.Architecture == p.Architecture {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("the build has no image for %s", p)
}

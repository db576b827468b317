package imagecmd

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image"
	"github.com/nuv-dev/nuv/internal/image/dockerfile"
	"github.com/nuv-dev/nuv/internal/image/gobuild"
	"github.com/nuv-dev/nuv/internal/image/load"
	"github.com/nuv-dev/nuv/internal/image/login"
	"github.com/nuv-dev/nuv/internal/image/publish"
	"github.com/nuv-dev/nuv/internal/image/tag"
	"github.com/nuv-dev/nuv/internal/paths"
)

// DefaultMain is the reference operator's main package, relative to the project root.
const DefaultMain = "./operator/cmd/whisk-operator"

type mode int

const (
	modeBuild mode = iota
	modePush
	modeLoad
)

var buildUsages = map[mode]string{
	modeBuild: `Usage: nuv image build [flags]

Compiles the operator for each platform and assembles a multi-arch OCI image with
go-containerregistry (no daemon): non-root user, CA certificates, entrypoint, OCI labels.
The same commit gives the same digest (SOURCE_DATE_EPOCH is the commit time). Writes an OCI
layout directory, or an OCI archive when --output ends in .tar, and prints the digest.
`,
	modePush: `Usage: nuv image push [flags]            (build-and-push, buildx-and-push)

Builds the multi-arch image and pushes the index, its manifests and layers to
MY_OPERATOR_IMAGE (default ` + image.DefaultRepository + `) tagged with the release tag (nuv image tag,
created for this hour when missing). Credentials come from ~/.docker/config.json (nuv image login).
Prints the pushed reference with its digest.
`,
	modeLoad: `Usage: nuv image load [flags]            (build-and-load)

Builds the image for the selected cluster's platform and delivers it by cluster type: local ->
nuv's loopback registry (started when needed, advertised in kube-public/local-registry-hosting);
kind -> loaded into the nodes with the kind library; others -> pushed to MY_OPERATOR_IMAGE.
Records the reference in .nuv/images/<cluster>.ref for nuv operator and prints it.
`,
}

// buildFlags are the flags shared by build, push and load.
type buildFlags struct {
	dir, main, platforms, builder, dockerfile, entrypoint, versionVar, tag, output, image string
	tagOpts                                                                               *tag.Options
}

func (f *buildFlags) register(env *cli.Env, fs *pflag.FlagSet, m mode) {
	mainPkg := env.Getenv("NUV_OPERATOR_MAIN")
	if mainPkg == "" {
		mainPkg = DefaultMain
	}
	plat := env.Getenv("PLATFORMS")
	if plat == "" {
		plat = strings.Join(image.DefaultPlatforms, ",")
		if m == modeLoad {
			plat = publish.HostPlatform().String()
		}
	}
	builder := env.Getenv("IMAGE_BUILDER")
	if builder == "" {
		builder = "go"
	}
	fs.StringVar(&f.dir, "dir", "", "module directory the main package is built in (default: the project root)")
	fs.StringVar(&f.main, "main", mainPkg, "main package to build (NUV_OPERATOR_MAIN)")
	fs.StringVar(&f.platforms, "platform", plat, "comma-separated os/arch list (PLATFORMS)")
	fs.StringVar(&f.builder, "builder", builder, "go (daemonless), docker, podman or buildah (IMAGE_BUILDER)")
	fs.StringVar(&f.dockerfile, "dockerfile", "operator/Dockerfile", "Dockerfile for --builder docker|podman|buildah")
	fs.StringVar(&f.entrypoint, "name", "", "binary name in the image, /usr/local/bin/<name> (default: the main package's directory name)")
	fs.StringVar(&f.versionVar, "version-var", "main.version", "string variable the version is stamped into")
	fs.StringVar(&f.tag, "tag", env.Getenv("IMAGE_TAG"), "image tag and stamped version (IMAGE_TAG; default: the release tag, or dev for load)")
	fs.StringVar(&f.image, "image", env.Getenv("MY_OPERATOR_IMAGE"), "image repository (MY_OPERATOR_IMAGE; default "+image.DefaultRepository+")")
	if m == modeBuild {
		fs.StringVar(&f.output, "output", "", "OCI layout directory, or OCI archive when it ends in .tar (default .nuv/images/oci)")
	}
	if m != modeLoad {
		f.tagOpts = tagOptions(env, fs)
	}
}

func runBuild(ctx context.Context, env *cli.Env, args []string, m mode) (rerr error) {
	name := map[mode]string{modeBuild: "nuv image build", modePush: "nuv image push", modeLoad: "nuv image load"}[m]
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	var f buildFlags
	f.register(env, fs, m)
	if err := parse(env, fs, buildUsages[m], args); err != nil {
		return helpOK(err)
	}
	project := paths.Project(env.Getenv, env.Dir)
	if f.dir == "" {
		f.dir = project
	} else if !filepath.IsAbs(f.dir) {
		f.dir = filepath.Join(env.Dir, f.dir)
	}
	platforms, err := image.ParsePlatforms(f.platforms)
	if err != nil {
		return cli.Usagef("%s: %v", name, err)
	}
	repo, err := repository(env, f.image)
	if err != nil {
		return cli.Usagef("%s: %v", name, err)
	}
	var target load.Target
	if m == modeLoad {
		if target, err = selectedTarget(ctx, env, project); err != nil {
			return err
		}
	}
	if m == modePush {
		ref, err := name2Tag(repo, "latest")
		if err != nil {
			return err
		}
		if err := publish.Reachable(ctx, ref, nil); err != nil {
			return err
		}
		kc, err := login.NewKeychain(env.Getenv)
		if err != nil {
			return err
		}
		if err := (&publish.Remote{Keychain: kc}).Check(ref); err != nil {
			return err
		}
	}
	imageTag, created, err := resolveTag(ctx, env, &f, m)
	if err != nil {
		return err
	}
	if created {
		// a release tag made for this push is removed again when the push fails
		defer func() {
			if rerr != nil {
				if err := tag.Delete(context.WithoutCancel(ctx), project, imageTag); err == nil {
					env.Log.Infof("removed the git tag %s created for the failed push", imageTag)
				}
			}
		}()
	}
	spec, err := Spec(ctx, env.Getenv, f.dir, f.main, imageTag)
	if err != nil {
		return err
	}
	spec.Platforms = platforms
	spec.VersionVar = f.versionVar
	if f.entrypoint != "" {
		spec.Entrypoint = f.entrypoint
	}
	spec.Dockerfile = f.dockerfile
	b, err := NewBuilder(f.builder, env)
	if err != nil {
		return cli.Usagef("%s: %v", name, err)
	}
	start := time.Now()
	env.Log.Infof("building %s for %s (%s builder)", spec.Main, platformList(platforms), f.builder)
	idx, err := b.Build(ctx, spec)
	if err != nil {
		return err
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	env.Log.V(1).Infof("built %s in %s", d, time.Since(start).Round(time.Millisecond))
	switch m {
	case modeBuild:
		return writeOutput(ctx, env, project, f.output, idx, repo, imageTag)
	case modePush:
		ref, err := name2Tag(repo, imageTag)
		if err != nil {
			return err
		}
		kc, err := login.NewKeychain(env.Getenv)
		if err != nil {
			return err
		}
		out, err := (&publish.Remote{Keychain: kc, Log: env.Log}).Publish(ctx, idx, ref)
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Out, ref.String()+"@"+strings.SplitN(out, "@", 2)[1])
		return nil
	default:
		return loadIndex(ctx, env, project, target, idx, repo, imageTag, f.tag == "")
	}
}

func platformList(ps []v1.Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

func repository(env *cli.Env, flagValue string) (name.Repository, error) {
	return image.Repository(func(k string) string {
		if k == "MY_OPERATOR_IMAGE" {
			return flagValue
		}
		return env.Getenv(k)
	})
}

func name2Tag(repo name.Repository, t string) (name.Tag, error) {
	ref, err := name.NewTag(repo.String() + ":" + t)
	if err != nil {
		return name.Tag{}, cli.Usagef("image tag %q: %v", t, err)
	}
	return ref, nil
}

// resolveTag: --tag/IMAGE_TAG, else for push this hour's release tag (created when missing), for
// build the newest release tag (else dev), for load "dev".
func resolveTag(ctx context.Context, env *cli.Env, f *buildFlags, m mode) (t string, created bool, err error) {
	if f.tag != "" {
		return f.tag, false, nil
	}
	dir := paths.Project(env.Getenv, env.Dir)
	switch m {
	case modePush:
		res, err := tag.Ensure(ctx, dir, *f.tagOpts, time.Now(), false)
		if err != nil {
			return "", false, fmt.Errorf("release tag (pass --tag to choose one): %w", err)
		}
		if !res.Reused && !res.Moved {
			env.Log.Infof("created the release tag %s", res.Tag)
		}
		return res.Tag, !res.Reused && !res.Moved, nil
	case modeBuild:
		if cur, err := tag.Current(ctx, dir, *f.tagOpts); err == nil && cur != "" {
			return cur, false, nil
		}
	}
	return "dev", false, nil
}

// Spec fills the release metadata of a build of mainPkg in dir: the git revision and source, and
// SOURCE_DATE_EPOCH (the environment's, else the commit time).
func Spec(ctx context.Context, getenv func(string) string, dir, mainPkg, version string) (image.Spec, error) {
	spec := image.Spec{Dir: dir, Main: mainPkg, Version: version, Entrypoint: path.Base(filepath.ToSlash(mainPkg))}
	if spec.Entrypoint == "." || spec.Entrypoint == "/" || spec.Entrypoint == "" {
		spec.Entrypoint = "manager"
	}
	if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(mainPkg))); err != nil || !st.IsDir() {
		return spec, cli.Usagef("main package %s not found in %s (set NUV_OPERATOR_MAIN or --main)", mainPkg, dir)
	}
	g := tag.Git{Dir: dir}
	if rev, err := g.Revision(ctx); err == nil {
		spec.Revision = rev
	}
	spec.Source = getenv("IMAGE_SOURCE")
	if spec.Source == "" {
		spec.Source = g.Source(ctx)
	}
	if s := getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return spec, cli.Usagef("SOURCE_DATE_EPOCH=%q is not a number of seconds", s)
		}
		spec.Epoch = n
	} else if n, err := g.CommitEpoch(ctx); err == nil {
		spec.Epoch = n
	}
	return spec, nil
}

// NewBuilder returns the builder named by --builder.
func NewBuilder(kind string, env *cli.Env) (image.Builder, error) {
	switch kind {
	case "go", "":
		ca := env.Getenv("NUV_CA_CERTS")
		return &gobuild.Builder{CAFile: ca, Log: env.Log}, nil
	default:
		return dockerfile.New(kind)
	}
}

func writeOutput(ctx context.Context, env *cli.Env, project, output string, idx v1.ImageIndex, repo name.Repository, t string) error {
	if output == "" {
		output = filepath.Join(paths.ProjectState(project), "images", "oci")
	} else if !filepath.IsAbs(output) {
		output = filepath.Join(env.Dir, output)
	}
	ref, err := name2Tag(repo, t)
	if err != nil {
		return err
	}
	var p image.Publisher = publish.Layout{Dir: output}
	kind := "OCI layout"
	if strings.HasSuffix(output, ".tar") {
		p, kind = publish.Archive{File: output}, "OCI archive"
	}
	out, err := p.Publish(ctx, idx, ref)
	if err != nil {
		return err
	}
	env.Log.Infof("wrote %s %s", kind, output)
	fmt.Fprintln(env.Out, ref.String()+"@"+strings.SplitN(out, "@", 2)[1])
	return nil
}

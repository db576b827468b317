package release

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image/login"
	"github.com/nuv-dev/nuv/internal/image/publish"
)

// Main is cmd/nuv-release: it parses args (without the program name), builds the release and,
// with -registry (default $REGISTRY), pushes nuv's image. It returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("nuv-release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", ".", "nuv's module directory (a git work tree)")
	out := fs.String("out", "dist", "where the release goes (relative to -dir); earlier release files there are replaced")
	platforms := fs.String("platforms", platformList(DefaultPlatforms), "os/arch pairs, comma-separated; \"host\" for this machine's")
	companions := fs.String("companions", "all", "companion archives built first, their checksums compiled into nuv: all, none, or names (nuv-kube,nuv-node)")
	registry := fs.String("registry", getenv("REGISTRY"), "push nuv's multi-arch image to <registry>/nuv:<version> (default $REGISTRY; empty: no image)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: nuv-release [-dir .] [-out dist] [-platforms linux/amd64,...] [-companions all|none|nuv-kube,...] [-registry host/path]")
		fmt.Fprintln(stderr, "\nBuilds nuv's release archives, their SBOMs and checksums.txt (docs/release.md).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "nuv-release: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if err := run(ctx, stdout, stderr, getenv, *dir, *out, *platforms, *companions, *registry); err != nil {
		fmt.Fprintln(stderr, "nuv-release:", err)
		return 1
	}
	return 0
}

func run(ctx context.Context, stdout, stderr io.Writer, getenv func(string) string, dir, out, platforms, companions, registry string) error {
	comps, err := SelectCompanions(companions)
	if err != nil {
		return fmt.Errorf("-companions: %w", err)
	}
	var ps []Platform
	if platforms == "host" {
		ps = []Platform{Host()}
	} else {
		if ps, err = ParsePlatforms(platforms); err != nil {
			return fmt.Errorf("-platforms: %w", err)
		}
	}
	if registry != "" {
		hasLinux := false
		for _, p := range ps {
			hasLinux = hasLinux || p.OS == "linux"
		}
		if !hasLinux {
			return fmt.Errorf("-registry %s: the image needs a linux platform in -platforms %s", registry, platforms)
		}
		if _, err := ImageRef(registry, "check"); err != nil {
			return err
		}
	}
	stamp, err := Describe(ctx, dir, getenv)
	if err != nil {
		return err
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(dir, out)
	}
	log := cli.NewLogger(stderr, 0)
	log.Infof("releasing nuv %s (commit %s) for %s into %s", stamp.Version, stamp.Commit, platformList(ps), out)
	res, err := Build(ctx, Config{Dir: dir, Out: out, Stamp: stamp, Platforms: ps, Companions: comps, Log: log})
	if err != nil {
		return err
	}
	defer res.Cleanup()
	for _, a := range append(append([]Artifact(nil), res.Companions...), res.Archives...) {
		fmt.Fprintln(stdout, a.Path)
		fmt.Fprintln(stdout, a.SBOM)
	}
	fmt.Fprintln(stdout, res.Checksums)
	if registry == "" {
		return nil
	}
	kc, err := login.NewKeychain(getenv)
	if err != nil {
		return err
	}
	ref, err := PushImage(ctx, &publish.Remote{Keychain: kc, Log: log}, res, stamp, registry, getenv("NUV_CA_CERTS"))
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, ref)
	return nil
}

func platformList(ps []Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

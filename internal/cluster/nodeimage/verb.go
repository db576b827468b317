package nodeimage

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

// Verb is `nuv cluster node-image build`: the image's reference and tarball on stdout, with each
// stage's time; progress on stderr.
func Verb() cluster.Verb {
	return cluster.Verb{Name: "node-image", Usage: "node-image build [--version V] [--load] [--push REF] [--offline]",
		Short: "assemble a kind node image without pulling anything (Debian packages, Kubernetes built from source); cached", Run: runVerb}
}

func runVerb(ctx context.Context, verb cluster.Verb, env *cli.Env, args []string) error {
	if len(args) == 0 || args[0] != "build" {
		if len(args) > 0 && strings.HasPrefix(args[0], "-") { // help, or a flag before the verb (named)
			if err := verb.Parse(env, verb.FlagSet(), args); err != nil {
				return err
			}
		}
		return cli.Usagef("nuv cluster node-image: want `build` (nuv cluster node-image build [--version V] [--load] [--push REF])")
	}
	fs := verb.FlagSet()
	version := fs.String("version", companion.KubeVersion, "Kubernetes version")
	load := fs.Bool("load", false, "also load the image into the container runtime of kind clusters (docker, nerdctl or podman, as detected; KIND_EXPERIMENTAL_PROVIDER picks one)")
	push := fs.String("push", "", "also push the image to this registry reference")
	offline := fs.Bool("offline", false, "build Go programs from the module cache only")
	if err := verb.Parse(env, fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return cli.Usagef("nuv cluster node-image build: unexpected argument %q", fs.Arg(0))
	}
	o := Options{Version: *version, Log: env.Log, Getenv: env.Getenv, Offline: *offline}
	r, err := Build(ctx, o)
	if err != nil {
		return err
	}
	if *load {
		rt, err := containerrt.Detect(ctx, env.Getenv)
		if err != nil {
			return err
		}
		o.Runtime = rt.Path
		if err := Load(ctx, o, r); err != nil {
			return err
		}
	}
	if *push != "" {
		if err := Push(ctx, r, *push); err != nil {
			return err
		}
		env.Log.Infof("pushed %s", *push)
	}
	tw := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "image\t%s\n", r.Ref)
	fmt.Fprintf(tw, "tarball\t%s\n", r.Tarball)
	for _, s := range r.Stages {
		how := ""
		if s.Cached {
			how = " (cached)"
		}
		fmt.Fprintf(tw, "stage\t%s\t%.1fs%s\n", s.Name, s.Duration.Seconds(), how)
	}
	return tw.Flush()
}

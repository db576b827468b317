package local

import (
	"context"
	"fmt"
	"os"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
)

// PrepareVerb is `nuv cluster prepare`: the Kubernetes binaries local clusters run, got once
// (verified release downloads, else a build from source); their version and path on stdout.
func PrepareVerb() cluster.Verb {
	return cluster.Verb{Name: "prepare", Usage: "prepare [--source download|build|DIR] [--offline] [--prune]",
		Short: "get (once) the Kubernetes binaries local clusters run: verified release downloads, else a build from source; print where they are", Run: runPrepare}
}

func runPrepare(ctx context.Context, verb cluster.Verb, env *cli.Env, args []string) error {
	fs := verb.FlagSet()
	prune := fs.Bool("prune", false, "also remove older companion builds no running cluster uses")
	source := fs.String("source", "", "where the binaries come from: download (official releases, verified), build (from source), or a DIR of binaries (default: NUV_KUBE_BIN, the cache, download, build)")
	offline := fs.Bool("offline", false, "never touch the network: the cache, or a build from the Go module cache")
	version := fs.String("version", localkube.KubeVersion, "Kubernetes version")
	if err := verb.Parse(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return cli.Usagef("nuv cluster prepare: unexpected argument %q", fs.Arg(0))
	}
	comp := localkube.Companion{Getenv: env.Getenv, Log: env.Log}
	bins, err := comp.Prepare(ctx, localkube.PrepareOptions{Source: *source, Offline: *offline, Version: *version})
	if err != nil {
		return err
	}
	bin := bins.Path
	env.Log.Infof("binaries: %s", bins.Source)
	if *prune {
		removed, err := comp.Prune(bin)
		for _, r := range removed {
			env.Log.Infof("removed %s", r)
		}
		if err != nil {
			return err
		}
	}
	v, err := localkube.BinariesVersion(ctx, bin)
	if err != nil {
		return fmt.Errorf("verify %s: %w", bin, err)
	}
	if st, err := os.Stat(bin); err == nil && st.IsDir() {
		fmt.Fprintf(env.Out, "binaries %s\t%s\n", v, bin)
		return nil
	}
	fmt.Fprintf(env.Out, "nuv-kube %s\t%s\n", v, bin)
	return nil
}

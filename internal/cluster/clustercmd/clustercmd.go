// Package clustercmd implements `nuv cluster`: create, list, status, start, stop, delete, logs,
// kubeconfig and prepare for nuv's cluster providers (local for now).
package clustercmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/spf13/pflag"
)

// Command returns the `nuv cluster` command.
func Command() cli.Command {
	return cli.Command{Name: "cluster", Short: "create and manage local test clusters (real control plane, kwok nodes)", Run: Run}
}

type sub struct {
	name, usage, short string
	run                func(ctx context.Context, env *cli.Env, p local.Provider, args []string) error
}

func subcommands() []sub {
	return []sub{
		{"create", "create local [--name NAME] [--nodes K] [--version V] [--flavor TYPE] [--ha]", "create a cluster and write clusters/NAME.kubeconfig", runCreate},
		{"list", "list [-o table|json]", "list clusters: name, provider, status, API URL, nodes ready, age", runList},
		{"status", "status NAME", "show a cluster's components", runStatus},
		{"stop", "stop NAME...|--all", "stop a cluster's processes, keep its state", runStop},
		{"start", "start NAME...|--all", "start a stopped cluster or repair a degraded one", runStart},
		{"delete", "delete NAME...|--all", "stop a cluster and remove its state and kubeconfig", runDelete},
		{"logs", "logs NAME [COMPONENT] [--tail N]", "print a cluster's component logs", runLogs},
		{"kubeconfig", "kubeconfig NAME", "print the path of a cluster's kubeconfig", runKubeconfig},
		{"prepare", "prepare [--source download|build|DIR] [--offline] [--prune]", "get (once) the Kubernetes binaries local clusters run: verified release downloads, else a build from source; print where they are", runPrepare},
	}
}

// Run executes `nuv cluster ARGS`.
func Run(ctx context.Context, env *cli.Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(env.Out)
		if len(args) == 0 {
			return cli.Exit(2, nil)
		}
		return nil
	}
	for _, s := range subcommands() {
		if s.name == args[0] {
			p, err := provider(env)
			if err != nil {
				return err
			}
			return s.run(ctx, env, p, args[1:])
		}
	}
	usage(env.Err)
	return cli.Usagef("unknown cluster command %q", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: nuv cluster <command> [args]")
	fmt.Fprintln(w)
	for _, s := range subcommands() {
		fmt.Fprintf(w, "  %-11s %s\n", s.name, s.short)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Providers: local (etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok as")
	fmt.Fprintln(w, "processes on loopback; state in $NUV_HOME/clusters/NAME). `nuv cluster <command> -h` for flags.")
}

func provider(env *cli.Env) (local.Provider, error) {
	home, err := paths.EnsureHome(env.Getenv)
	if err != nil {
		return local.Provider{}, err
	}
	return local.Provider{Home: home, Project: paths.Project(env.Getenv, env.Dir), Log: env.Log, Getenv: env.Getenv}, nil
}

// flags returns a fresh FlagSet for one subcommand; parse handles -h.
func flags(env *cli.Env, s string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("nuv cluster "+s, pflag.ContinueOnError)
	fs.SetOutput(env.Err)
	for _, c := range subcommands() {
		if c.name == s {
			fs.Usage = func() {
				fmt.Fprintf(env.Err, "Usage: nuv cluster %s\n\n%s\n", c.usage, c.short)
				if fs.HasFlags() {
					fmt.Fprintf(env.Err, "\nFlags:\n%s", fs.FlagUsages())
				}
			}
		}
	}
	return fs
}

// parse parses args; -h prints usage and returns errHelp (turned into a clean exit by the caller).
func parse(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return cli.Usagef("%s: %v", fs.Name(), err)
	}
	return nil
}

var errHelp = cli.Exit(0, nil)

// names resolves NAME...|--all.
func names(p local.Provider, args []string, all bool, verb string) ([]string, error) {
	if all {
		if len(args) > 0 {
			return nil, cli.Usagef("nuv cluster %s: give cluster names or --all, not both", verb)
		}
		return p.Names()
	}
	if len(args) == 0 {
		return nil, cli.Usagef("nuv cluster %s: name a cluster (or --all); `nuv cluster list` shows them", verb)
	}
	return args, nil
}

// notFound turns ErrNotFound into a clear message naming the known clusters.
func notFound(p local.Provider, err error) error {
	if !errors.Is(err, cluster.ErrNotFound) {
		return err
	}
	known, _ := p.Names()
	sort.Strings(known)
	if len(known) == 0 {
		return fmt.Errorf("%w (no local clusters exist)", err)
	}
	return fmt.Errorf("%w (known: %s)", err, strings.Join(known, ", "))
}

// Package kubecmd implements `nuv kube`: list, use, detect, current and watch over the project's
// clusters/ inventory (package kube). The dispatcher registers NewCommand.
package kubecmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/paths"
)

// EnvTimeout overrides the default reachability timeout of list/use/detect (a Go duration).
const EnvTimeout = "NUV_KUBE_TIMEOUT"

// NewCommand returns `nuv kube`.
func NewCommand() cli.Command {
	return cli.Command{
		Name:  "kube",
		Short: "the clusters/ inventory: list, use N, env, detect, watch",
		Run:   run,
	}
}

const usage = `Usage: nuv kube <subcommand> [flags]

The project's clusters are the kubeconfigs in clusters/*.kubeconfig, numbered from 1 in the order
they were added (recorded in .nuv/order): adding a kubeconfig never renumbers the others.

Subcommands:
  list [--offline] [-o table|json]    every cluster, the selected one marked (*), with context,
                                      API server, type and reachability (checked in parallel)
  use N|NAME [--offline] [--shell] [--global]
                                      select a cluster for this project (.nuv/current, and the
                                      link .nuv/kubeconfig kubectl follows); tasks get KUBECONFIG
                                      and KUBE for it. --shell prints exports for
                                      eval "$(nuv kube use N --shell)": this shell only (NUV_CLUSTER
                                      wins over the project selection). --global also merges the
                                      context into ~/.kube/config (backup kept); nothing else
                                      ever writes ~/.kube/config.
  use --none [--shell]                clear the project (or, with --shell, this shell's) selection
  env                                 print the line that makes kubectl follow the project's
                                      selection, once per shell: eval "$(nuv kube env)" (or put
                                      export KUBECONFIG=$PWD/.nuv/kubeconfig in .envrc for direnv)
  detect [N|NAME]                     print the type of a cluster (default: the selected one)
  current                             print the selected cluster's name, type and kubeconfig
  watch [N|NAME] [-n NAMESPACE]       live view of nodes, pods and services (Ctrl-C ends it)

Types: ` + "local, kind, eks, aks, gke, k3s, m8s, osh, lks, generic" + `; clusters/<name>.type overrides one.
Which cluster nuv acts on: --kubeconfig, else NUV_CLUSTER, else an explicit KUBECONFIG (as for
kubectl; KUBECONFIG=.nuv/kubeconfig is the project's selection), else the project's selection.
` + "`nuv status`" + ` says which one it used.
Environment: NUV_CLUSTER (per-shell selection), NUV_KUBE_TIMEOUT (reachability timeout, default 1s),
DETECT_FORCE (force every cluster's type).
`

// run dispatches the subcommands; a bare `nuv kube` is `nuv kube list`.
func run(ctx context.Context, env *cli.Env, args []string) error {
	return cli.Group{Name: "nuv kube", Usage: usage, Default: "list",
		Subs: map[string]func(context.Context, *cli.Env, []string) error{
			"list": runList, "ls": runList, "use": runUse, "detect": runDetect, "current": runCurrent, "watch": runWatch,
			"env": runEnv,
		}}.Run(ctx, env, args)
}

// flags builds a FlagSet for one subcommand; parse handles -h.
func flags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("nuv kube "+name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs
}

// parse parses args; done is true when help was printed.
func parse(env *cli.Env, fs *pflag.FlagSet, args []string) (done bool, err error) {
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			fmt.Fprintf(env.Out, "Usage of %s:\n%s\n%s", fs.Name(), fs.FlagUsages(), usage)
			return true, nil
		}
		return false, cli.Usagef("%s: %v", fs.Name(), err)
	}
	return false, nil
}

func project(env *cli.Env) string { return paths.Project(env.Getenv, env.Dir) }

// timeoutFlag adds --timeout with the default from NUV_KUBE_TIMEOUT.
func timeoutFlag(env *cli.Env, fs *pflag.FlagSet) *time.Duration {
	def := kube.DefaultProbeTimeout
	if v := env.Getenv(EnvTimeout); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			def = d
		} else if n, err := strconv.ParseFloat(v, 64); err == nil && n > 0 {
			def = time.Duration(n * float64(time.Second))
		}
	}
	return fs.Duration("timeout", def, "how long to wait for each API server ("+EnvTimeout+")")
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// isTerminal tells whether w is a terminal (for watch's live view).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

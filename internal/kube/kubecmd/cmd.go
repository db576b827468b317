// Package kubecmd implements `nuv kube`: list, use, detect, current and watch over the project's
// clusters/ inventory (package kube). The dispatcher registers NewCommand.
package kubecmd

import (
	"context"
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

// NewCommand returns `nuv kube`; watcher runs `nuv kube watch` (nil where watch is handed to
// another program before it gets here: the slim front).
func NewCommand(watcher Watcher) cli.Command {
	return cli.GroupCommand("kube", group(watcher))
}

// verbs of `nuv kube`, in help order: usage line and summary.
var verbs = []struct{ name, line, short string }{
	{"list", "nuv kube list [--offline] [-o table|json|yaml] [--timeout D]", "every cluster, the selected one marked (*), with context, API server, type and reachability"},
	{"use", "nuv kube use N|NAME [--offline] [--shell] [--global] | use --none [--shell]", "select a cluster for this project (.nuv/current); tasks get KUBECONFIG and KUBE for it"},
	{"detect", "nuv kube detect [N|NAME]", "print the type of a cluster (default: the selected one)"},
	{"env", "nuv kube env [--tasks]", "print the line that makes kubectl follow the project's selection: eval \"$(nuv kube env)\""},
	{"current", "nuv kube current", "print the selected cluster's name, type and kubeconfig"},
	{"watch", "nuv kube watch [N|NAME] [-n NAMESPACE]", "live view of nodes, pods and services (Ctrl-C ends it)"},
}

const long = `The project's clusters are the kubeconfigs in clusters/*.kubeconfig, numbered from 1 in the order
they were added (recorded in .nuv/order): adding a kubeconfig never renumbers the others.
use also keeps the link .nuv/kubeconfig that kubectl follows once a shell ran eval "$(nuv kube env)"
(or, for direnv, export KUBECONFIG=$PWD/.nuv/kubeconfig in .envrc).
use --shell prints exports for eval "$(nuv kube use N --shell)": this shell only (NUV_CLUSTER wins
over the project selection). use --global also merges the context into ~/.kube/config (backup
kept); nothing else ever writes ~/.kube/config.

Types: ` + "local, kind, eks, aks, gke, k3s, m8s, osh, lks, kubeadm, generic" + `; clusters/<name>.type overrides one.
Which cluster nuv acts on: --kubeconfig, else NUV_CLUSTER, else an explicit KUBECONFIG (as for
kubectl; KUBECONFIG=.nuv/kubeconfig is the project's selection), else the project's selection.
` + "`nuv status`" + ` says which one it used.
Environment: NUV_CLUSTER (per-shell selection), NUV_KUBE_TIMEOUT (reachability timeout, default 1s),
DETECT_FORCE (force every cluster's type).`

// group is `nuv kube` on nuv's one group plumbing (cli.Group).
func group(watcher Watcher) *cli.Group {
	watch := func(ctx context.Context, env *cli.Env, args []string) error { return runWatch(ctx, env, args, watcher) }
	runs := map[string]func(context.Context, *cli.Env, []string) error{
		"list": runList, "use": runUse, "env": runEnv, "detect": runDetect, "current": runCurrent, "watch": watch,
	}
	g := &cli.Group{Name: "nuv kube", Short: "the clusters/ inventory: list, use N, env, detect, watch", Long: long,
		Examples: "nuv kube list\nnuv kube use 2\neval \"$(nuv kube env)\"\neval \"$(nuv kube use dev --shell)\""}
	for _, v := range verbs {
		verb := cli.Verb{Name: v.name, Short: v.short, Run: runs[v.name]}
		switch v.name {
		case "list":
			verb.Aliases = []string{"ls"}
		case "use", "detect", "watch":
			verb.Args = []string{cli.ValInventory}
		}
		g.Verbs = append(g.Verbs, verb)
	}
	return g
}

// run dispatches the verbs (cli.Group).
func run(ctx context.Context, env *cli.Env, args []string) error {
	return group(nil).Run(ctx, env, args)
}

// flags builds a FlagSet for one verb; parse handles -h.
func flags(name string) *pflag.FlagSet { return cli.NewFlagSet("nuv kube " + name) }

// parse parses args the one way (cli.Parse); done is true when help was printed.
func parse(env *cli.Env, fs *pflag.FlagSet, args []string) (done bool, err error) {
	return cli.Parse(env, fs, usageOf(fs.Name()), args)
}

// usageOf is the help of the verb a flag set ("nuv kube list") is for.
func usageOf(name string) cli.Usage {
	for _, v := range verbs {
		if "nuv kube "+v.name == name {
			return cli.Usage{Line: v.line, Short: v.short, Long: long}
		}
	}
	return cli.Usage{Line: name}
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

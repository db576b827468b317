package app

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/addons"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/providers"
	"github.com/nuv-dev/nuv/internal/cluster/state/stores"
	"github.com/nuv-dev/nuv/internal/completion"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/paths"
)

// completionCommands: `nuv completion bash|zsh|fish` (and the `__complete` the scripts call).
func completionCommands() []cli.Command {
	g := &cli.Group{
		Name:  "nuv completion",
		Short: "print the shell completion script: bash, zsh or fish",
		Long: `Prints the script that makes the shell complete nuv's commands, verbs, flags and their values
(providers, stacks, clusters), bundle folders and tasks, tools and, after ` + "`task`" + `, the Taskfile's
tasks and the cluster numbers of use N=. Load it in the shell's startup file.`,
		Examples: `source <(nuv completion bash)        # in ~/.bashrc
source <(nuv completion zsh)         # in ~/.zshrc, after compinit
nuv completion fish | source         # in ~/.config/fish/config.fish`,
	}
	for _, sh := range completion.Shells {
		g.Verbs = append(g.Verbs, cli.Verb{Name: sh, Short: "print the " + sh + " completion script", Run: script(sh)})
	}
	g.Verbs = append(g.Verbs, cli.Verb{Name: "__complete", Hidden: true, Short: "the candidates for the words of a command line",
		Run: func(ctx context.Context, env *cli.Env, args []string) error {
			for _, c := range completion.Complete(ctx, completionSource{env: env}, args) {
				fmt.Fprintln(env.Out, c)
			}
			return nil
		}})
	return []cli.Command{cli.GroupCommand("completion", g)}
}

// script is `nuv completion SHELL`.
func script(shell string) func(context.Context, *cli.Env, []string) error {
	return func(_ context.Context, env *cli.Env, args []string) error {
		u := cli.Usage{Line: "nuv completion " + shell, Short: "print the " + shell + " completion script"}
		fs := cli.NewFlagSet("nuv completion " + shell)
		if done, err := cli.Parse(env, fs, u, args); done || err != nil {
			return err
		}
		if err := cli.NoArgs(fs, u); err != nil {
			return err
		}
		s, err := completion.Script(shell)
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(env.Out, s)
		return err
	}
}

// completionSource answers completion's questions from the running nuv: its command and tool
// tables, help run in-process, the bundle Locate finds, the local provider and the inventory.
type completionSource struct{ env *cli.Env }

func (s completionSource) Commands() []string {
	var names []string
	for _, c := range commandTable() {
		names = append(names, c.Name)
	}
	return names
}

func (s completionSource) Tools() []string {
	var names []string
	for n := range toolTable() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// quiet is the environment a question runs in: the same settings, its output captured.
func (s completionSource) quiet() (*cli.Env, *bytes.Buffer) {
	var buf bytes.Buffer
	e := *s.env
	e.Streams = cli.Streams{In: strings.NewReader(""), Out: &buf, Err: &buf}
	e.Log = cli.Quiet()
	return &e, &buf
}

func (s completionSource) Help(ctx context.Context, args ...string) string {
	e, buf := s.quiet()
	_ = RunEnv(ctx, e, append(append([]string{"nuv"}, args...), "--help"))
	return buf.String()
}

func (s completionSource) BundleTasks(context.Context) [][]string {
	e, _ := s.quiet()
	b, err := bundleSetup(e).Locate()
	if err != nil {
		return nil
	}
	lines, err := b.Tasks()
	if err != nil {
		return nil
	}
	var out [][]string
	for _, l := range lines {
		if l.Shadowed {
			continue
		}
		out = append(out, strings.Fields(strings.TrimPrefix(l.Command, "nuv ")))
	}
	return out
}

func (s completionSource) Tree() []cli.Command { return commandTable() }

// Values answers for each value kind of the command tree from nuv's real state.
func (s completionSource) Values(ctx context.Context, kind string) []string {
	switch kind {
	case cli.ValProvider:
		return providers.Registry().Names() // every registered provider, sorted
	case cli.ValCluster:
		return s.clusters(ctx)
	case cli.ValInventory:
		return s.inventory()
	case cli.ValStack, cli.ValAddon:
		idx, err := addons.Load(addonsIndex(s.env))
		if err != nil {
			return nil
		}
		var names []string
		if kind == cli.ValStack {
			for _, st := range idx.Stacks {
				names = append(names, st.Name)
			}
		} else {
			for _, a := range idx.Addons {
				names = append(names, a.Name)
			}
		}
		return names
	case cli.ValShell:
		return completion.Shells
	case cli.ValCommand:
		var out []string
		for _, c := range commandTable() {
			out = append(out, c.Name)
		}
		for _, t := range s.Tools() {
			out = append(out, "-"+t)
		}
		return append(out, s.TaskfileTasks(ctx)...)
	}
	return nil
}

// addonsIndex is the add-ons index `nuv addons` reads: $NUV_ADDONS_INDEX, else the project's.
func addonsIndex(env *cli.Env) string {
	p := env.Getenv("NUV_ADDONS_INDEX")
	if p == "" {
		return filepath.Join(paths.Project(env.Getenv, env.Dir), addons.DefaultIndex)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(env.Dir, p)
	}
	return p
}

// clusters are the clusters of every provider nuv knows without a network call: those the
// local state store records (whatever their provider) and the local provider's own.
func (s completionSource) clusters(ctx context.Context) []string {
	home, err := paths.Home(s.env.Getenv)
	if err != nil {
		return nil
	}
	names, _ := providers.LocalClusters(home)
	if loc := s.env.Getenv("NUV_STATE"); !stores.Remote(loc) {
		if store, err := stores.Open(loc, home, ""); err == nil {
			recs, _ := store.List(ctx)
			for _, r := range recs {
				names = append(names, r.Name)
			}
		}
	}
	sort.Strings(names)
	return slices.Compact(names)
}

func (s completionSource) inventory() []string {
	cs, err := kube.ListEnv(paths.Project(s.env.Getenv, s.env.Dir), s.env.Getenv)
	if err != nil {
		return nil
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return names
}

// InventoryNumbers are the numbers `nuv kube list` gives the project's clusters.
func (s completionSource) InventoryNumbers() []string {
	var out []string
	for i := range s.inventory() {
		out = append(out, strconv.Itoa(i+1))
	}
	return out
}

func (s completionSource) TaskfileTasks(ctx context.Context) []string {
	e, buf := s.quiet()
	if err := runTask(ctx, e, []string{"--list-all", "--silent"}); err != nil {
		return nil
	}
	return strings.Fields(buf.String())
}

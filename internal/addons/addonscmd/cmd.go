// Package addonscmd is `nuv addons list|plan|apply|remove|status`: the add-ons of the project's
// index (internal/addons) on the selected cluster, or on every cluster through
// `nuv all-kubes -- addons apply`.
package addonscmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nuv-dev/nuv/internal/addons"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
)

// DefaultTimeout bounds the readiness wait of each add-on.
const DefaultTimeout = 5 * time.Minute

// verbs of `nuv addons`, in help order, with their usage lines.
var verbs = []struct{ name, line, short string }{
	{"list", "nuv addons list [-o table|wide|json|yaml] [--index FILE]", "the index's add-ons and stacks (no cluster needed)"},
	{"plan", "nuv addons plan [--only NAME]... [--stack NAME]... [flags]", "per add-on: install, upgrade (old -> new), unchanged, remove, skipped (why)"},
	{"apply", "nuv addons apply [--only NAME]... [--stack NAME]... [flags]", "apply the plan: server-side apply in dependency order, wait, prune, record"},
	{"remove", "nuv addons remove --only NAME...|--stack NAME...|--all [flags]", "delete add-ons (their CRDs only when prune.crds says so)"},
	{"status", "nuv addons status [-o table|wide|json|yaml] [flags]", "what the cluster has installed (recorded in the cluster), and readiness"},
}

const selection = `Selection: --only NAME (repeatable; dependencies come along), --stack NAME. Without one, plan and
apply take the root index file's add-ons and remove the installed ones the index no longer defines.
On every cluster: nuv all-kubes -- addons apply (or task all-kubes -- addons:apply).`

// NewCommand returns `nuv addons`.
func NewCommand() cli.Command {
	g := &cli.Group{
		Name:     "nuv addons",
		Short:    "add-ons and stacks (cert-manager, ingress, metrics, ...): list, plan, apply, remove, status",
		Long:     "The add-ons of the project's index (" + addons.DefaultIndex + ") on the selected cluster.\n\n" + selection,
		Examples: "nuv addons list\nnuv addons plan --stack observability\nnuv addons apply --only cert-manager\nnuv addons remove --all",
	}
	for _, v := range verbs {
		v := v
		verb := cli.Verb{Name: v.name, Short: v.short, FlagValues: map[string]string{"stack": cli.ValStack, "only": cli.ValAddon},
			Run: func(ctx context.Context, env *cli.Env, args []string) error {
				return run(ctx, env, v.name, cli.Usage{Line: v.line, Short: v.short, Long: selection}, args)
			}}
		g.Verbs = append(g.Verbs, verb)
	}
	return cli.GroupCommand("addons", g)
}

type flags struct {
	index, kubeconfig, kubeType string
	only, stacks                []string
	all                         bool
	timeout                     time.Duration
	output                      cli.OutputOption
}

func run(ctx context.Context, env *cli.Env, verb string, u cli.Usage, args []string) error {
	fs := cli.NewFlagSet("addons " + verb)
	var f flags
	fs.StringVar(&f.index, "index", "", "the add-ons index (default $NUV_ADDONS_INDEX, else <project>/"+addons.DefaultIndex+")")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: the project's selected cluster)")
	fs.StringVar(&f.kubeType, "type", "", "cluster type for selectors (default: the selection's or detected)")
	fs.StringSliceVar(&f.only, "only", nil, "act on this add-on (and its dependencies); repeatable, or comma-separated")
	fs.StringSliceVar(&f.stacks, "stack", nil, "act on the add-ons of this stack; repeatable, or comma-separated")
	if verb == "remove" {
		fs.BoolVar(&f.all, "all", false, "remove every installed add-on")
	}
	fs.DurationVar(&f.timeout, "timeout", DefaultTimeout, "bound of each add-on's readiness wait (and of each removal)")
	if verb == "list" || verb == "status" {
		f.output.AddFlags(fs)
	}
	if done, err := cli.Parse(env, fs, u, args); done || err != nil {
		return err
	}
	if err := cli.NoArgs(fs, u); err != nil {
		return err
	}
	if err := f.output.Validate(u); err != nil {
		return err
	}
	if f.timeout <= 0 {
		return u.Errorf("--timeout %s: must be positive", f.timeout)
	}
	if verb == "remove" && len(f.only) == 0 && len(f.stacks) == 0 && !f.all {
		return u.Errorf("name what to remove: --only NAME, --stack NAME or --all")
	}
	project := paths.Project(env.Getenv, env.Dir)
	idxPath := indexPath(f.index, project, env)
	var idx *addons.Index
	var err error
	if verb != "status" && verb != "remove" {
		if idx, err = addons.Load(idxPath); err != nil {
			return err
		}
	} else if _, serr := os.Stat(idxPath); serr == nil {
		// status and remove work without an index; with one, they use it
		if idx, err = addons.Load(idxPath); err != nil {
			return err
		}
	}
	if verb == "list" {
		if ok, err := f.output.Write(env.Out, listView(idx)); ok {
			return err
		}
		addons.PrintList(env.Out, idx)
		return nil
	}
	t, err := addons.Connect(ctx, project, f.kubeconfig, f.kubeType, env.Getenv)
	if err != nil {
		return err
	}
	o := addons.Options{Only: f.only, Stacks: f.stacks, Timeout: f.timeout, Out: env.Out,
		Fetcher: &addons.Fetcher{CacheDir: cacheDir(env.Getenv)}}
	switch verb {
	case "plan":
		p, err := addons.MakePlan(ctx, t, idx, o)
		if err != nil {
			return err
		}
		p.Print(env.Out)
		return nil
	case "apply":
		p, err := addons.MakePlan(ctx, t, idx, o)
		if err != nil {
			return err
		}
		p.Print(env.Out)
		return addons.Execute(ctx, t, p, o)
	case "remove":
		names := f.only
		for _, st := range f.stacks {
			if idx == nil || idx.Stack(st) == nil {
				return fmt.Errorf("no stack %q in %s", st, idxPath)
			}
			names = append(names, idx.Stack(st).Addons...)
		}
		return addons.RemoveAddons(ctx, t, idx, names, f.all, o)
	default: // status
		sts, err := addons.Status(ctx, t, idx)
		if err != nil {
			return err
		}
		if ok, err := f.output.Write(env.Out, map[string]any{"cluster": t.Name, "addons": sts}); ok {
			return err
		}
		addons.PrintStatus(env.Out, t.Name, sts)
		return nil
	}
}

func indexPath(flag, project string, env *cli.Env) string {
	p := flag
	if p == "" {
		p = env.Getenv("NUV_ADDONS_INDEX")
	}
	if p == "" {
		return filepath.Join(project, addons.DefaultIndex)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(env.Dir, p)
	}
	return p
}

// cacheDir is where downloaded sources pinned by digest are kept: $NUV_CACHE_DIR/addons, else
// $XDG_CACHE_HOME/nuv/addons, else ~/.cache/nuv/addons; "" (no cache) when none is known.
func cacheDir(getenv func(string) string) string {
	if d := getenv("NUV_CACHE_DIR"); d != "" {
		return filepath.Join(d, "addons")
	}
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "nuv", "addons")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "nuv", "addons")
	}
	return ""
}

// listView is what `nuv addons list -o json|yaml` prints: the index's add-ons and stacks.
func listView(idx *addons.Index) any {
	type addon struct {
		Name      string   `json:"name"`
		Version   string   `json:"version,omitempty"`
		Namespace string   `json:"namespace,omitempty"`
		DependsOn []string `json:"dependsOn,omitempty"`
		Source    string   `json:"source"`
		Default   bool     `json:"default"`
	}
	type stack struct {
		Name        string   `json:"name"`
		Addons      []string `json:"addons"`
		Description string   `json:"description,omitempty"`
	}
	def := map[string]bool{}
	for _, n := range idx.Default {
		def[n] = true
	}
	v := struct {
		Index  string  `json:"index"`
		Addons []addon `json:"addons"`
		Stacks []stack `json:"stacks"`
	}{Index: idx.File, Addons: []addon{}, Stacks: []stack{}}
	for _, a := range idx.Addons {
		v.Addons = append(v.Addons, addon{a.Name, a.Version, a.Namespace, a.DependsOn, a.SourceString(), def[a.Name]})
	}
	for _, s := range idx.Stacks {
		v.Stacks = append(v.Stacks, stack{s.Name, s.Addons, s.Description})
	}
	return v
}

// Package addonscmd is `nuv addons list|plan|apply|remove|status`: the add-ons of the project's
// index (internal/addons) on the selected cluster, or on every cluster through
// `nuv all-kubes -- addons apply`.
package addonscmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/addons"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
)

// DefaultTimeout bounds the readiness wait of each add-on.
const DefaultTimeout = 5 * time.Minute

const usage = `nuv addons: the add-ons of the project's index on the selected cluster

Usage:
  nuv addons list                  the index's add-ons and stacks (no cluster needed)
  nuv addons plan   [selection]    per add-on: install, upgrade (old -> new), unchanged, remove, skipped (why)
  nuv addons apply  [selection]    apply the plan: server-side apply in dependency order, wait, prune, record
  nuv addons remove [selection | --all]   delete add-ons (their CRDs only when prune.crds says so)
  nuv addons status                what the cluster has installed (recorded in the cluster), and readiness

Selection: --only NAME (repeatable; dependencies come along), --stack NAME. Without one, plan and
apply take the root index file's add-ons and remove the installed ones the index no longer defines.
On every cluster: nuv all-kubes -- addons apply (or task all-kubes -- addons:apply).

Flags:
`

// NewCommand returns `nuv addons`.
func NewCommand() cli.Command {
	return cli.Command{
		Name:  "addons",
		Short: "add-ons and stacks (cert-manager, ingress, metrics, ...): list, plan, apply, remove, status",
		Run:   run,
	}
}

type flags struct {
	index, kubeconfig, kubeType string
	only, stacks                []string
	all                         bool
	timeout                     time.Duration
}

func run(ctx context.Context, env *cli.Env, args []string) error {
	fs := pflag.NewFlagSet("addons", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f flags
	fs.StringVar(&f.index, "index", "", "the add-ons index (default $NUV_ADDONS_INDEX, else <project>/"+addons.DefaultIndex+")")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: the project's selected cluster)")
	fs.StringVar(&f.kubeType, "type", "", "cluster type for selectors (default: the selection's or detected)")
	fs.StringSliceVar(&f.only, "only", nil, "act on this add-on (and its dependencies); repeatable, or comma-separated")
	fs.StringSliceVar(&f.stacks, "stack", nil, "act on the add-ons of this stack; repeatable, or comma-separated")
	fs.BoolVar(&f.all, "all", false, "remove: every installed add-on")
	fs.DurationVar(&f.timeout, "timeout", DefaultTimeout, "bound of each add-on's readiness wait (and of each removal)")
	help := func() { fmt.Fprint(env.Out, usage+fs.FlagUsages()) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			help()
			return nil
		}
		return cli.Usagef("addons: %v\nUsage: nuv addons list|plan|apply|remove|status [flags] (nuv addons --help)", err)
	}
	words := fs.Args()
	if len(words) == 0 {
		fmt.Fprint(env.Err, usage+fs.FlagUsages())
		return cli.Usagef("addons: name a verb (list, plan, apply, remove, status)")
	}
	if len(words) > 1 {
		return cli.Usagef("addons %s: unexpected arguments %s", words[0], strings.Join(words[1:], " "))
	}
	if f.timeout <= 0 {
		return cli.Usagef("addons: --timeout must be positive")
	}
	project := paths.Project(env.Getenv, env.Dir)
	verb := words[0]
	switch verb {
	case "list", "plan", "apply", "remove", "status":
	default:
		return cli.Usagef("addons: unknown verb %q (list, plan, apply, remove, status)", verb)
	}
	if f.all && verb != "remove" {
		return cli.Usagef("addons %s: --all is for remove", verb)
	}
	if verb == "remove" && len(f.only) == 0 && len(f.stacks) == 0 && !f.all {
		return cli.Usagef("addons remove: name what to remove: --only NAME, --stack NAME or --all")
	}
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
				return fmt.Errorf("addons remove: no stack %q in %s", st, idxPath)
			}
			names = append(names, idx.Stack(st).Addons...)
		}
		return addons.RemoveAddons(ctx, t, idx, names, f.all, o)
	default: // status
		sts, err := addons.Status(ctx, t, idx)
		if err != nil {
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

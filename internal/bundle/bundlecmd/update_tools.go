package bundlecmd

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nuv-dev/nuv/internal/bundle"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/update"
)

const updateUsage = `Usage: nuv -update [--ref REF] [--pin | --unpin] [--repo URL]

Fetch the task bundle with git into ~/.nuv/<version>/olaris, replacing the old copy only after a
complete, valid checkout. The repository is --repo, else NUV_REPO, else the one in the lock file
(~/.nuv/<version>/olaris.lock), else nuv's own. The ref is --ref, else the lock file's pin, else
NUV_BRANCH, else the remote's default branch. On any failure the old bundle stays.
`

func updateTool(ctx context.Context, s Setup, args []string) error {
	fs := newFlags("-update")
	ref := fs.String("ref", "", "branch, tag or commit to fetch")
	pin := fs.Bool("pin", false, "record the fetched ref (or commit) as the pin for later updates")
	unpin := fs.Bool("unpin", false, "forget the pin")
	repo := fs.String("repo", "", "repository to fetch from")
	if done, err := parse(fs, s, updateUsage, "nuv -update\nnuv -update --ref v1.2.0 --pin\nNUV_REPO=https://example.com/my/olaris.git nuv -update", args); done || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("nuv -update: takes no arguments (got %q)\nUsage: nuv -update [--ref REF] [--pin | --unpin] [--repo URL]", fs.Args())
	}
	if *pin && *unpin {
		return cli.Usagef("nuv -update: --pin and --unpin exclude each other")
	}
	home, err := paths.EnsureHome(s.Env.Getenv)
	if err != nil {
		return err
	}
	o := update.BundleOptions{
		Dest:  bundle.HomeDir(home, s.Version),
		Repo:  s.Env.Getenv("NUV_REPO"),
		Ref:   *ref,
		Pin:   *pin,
		Unpin: *unpin,
	}
	if *repo != "" {
		o.Repo = *repo
	}
	o.Branch = s.Env.Getenv("NUV_BRANCH")
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	plan, err := update.PlanBundle(o)
	if err != nil {
		return err
	}
	s.Env.Log.Infof("fetching the bundle from %s (%s)", update.Redact(plan.Source.Repo), refLabel(plan))
	res, _, err := update.UpdateBundle(ctx, update.Fetcher{Git: gitBinary()}, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Env.Out, "bundle updated: %s at commit %s\n", res.Dir, shortCommit(res.Commit))
	if active, err := s.Locate(); err == nil && active.Main.Dir != res.Dir {
		s.Env.Log.Warnf("the bundle in use here is %s (%s), which takes precedence over the downloaded one", active.Main.Dir, active.Main.Source)
	}
	return nil
}

func refLabel(p update.Plan) string {
	if p.Source.Ref == "" {
		return p.Why
	}
	return p.Source.Ref + " from " + p.Why
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

const pluginUsage = `Usage: nuv -plugin <git-url> [--ref REF] | -l | -r NAME

  nuv -plugin <git-url> [--ref REF]   install or update the plugin olaris-<name>
  nuv -plugin -l                      list installed plugins
  nuv -plugin -r <name>               remove a plugin

A plugin is a bundle in a git repository; its top-level folders become nuv commands and its
nuvroot.json config defaults join the configuration. Plugins live in ~/.nuv/olaris-<name>.
`

func pluginTool(ctx context.Context, s Setup, args []string) error {
	fs := newFlags("-plugin")
	list := fs.BoolP("list", "l", false, "list plugins")
	remove := fs.StringP("remove", "r", "", "remove a plugin")
	ref := fs.String("ref", "", "branch, tag or commit")
	if done, err := parse(fs, s, pluginUsage, "nuv -plugin https://github.com/example/olaris-demo.git\nnuv -plugin -l\nnuv -plugin -r demo", args); done || err != nil {
		return err
	}
	home, err := paths.EnsureHome(s.Env.Getenv)
	if err != nil {
		return err
	}
	switch {
	case *list:
		plugins, err := update.ListPlugins(home)
		if err != nil {
			return err
		}
		if len(plugins) == 0 {
			fmt.Fprintln(s.Env.Out, "no plugins installed (nuv -plugin <git-url> installs one)")
			return nil
		}
		tw := tabwriter.NewWriter(s.Env.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tCOMMANDS\tREPOSITORY\tCOMMIT")
		for _, p := range plugins {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, strings.Join(p.Folders, ","), p.Lock.Repo, shortCommit(p.Lock.Commit))
		}
		return tw.Flush()
	case *remove != "":
		if err := update.RemovePlugin(home, *remove); err != nil {
			return err
		}
		fmt.Fprintf(s.Env.Out, "plugin %s removed\n", strings.TrimPrefix(*remove, "olaris-"))
		return nil
	}
	if fs.NArg() != 1 {
		return cli.Usagef("nuv -plugin: needs one git URL\nUsage: nuv -plugin <git-url> [--ref REF] | -l | -r NAME")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	res, err := update.InstallPlugin(ctx, update.Fetcher{Git: gitBinary()}, home, fs.Arg(0), *ref)
	if err != nil {
		return err
	}
	f, _ := bundle.ReadFolder(res.Dir, false)
	var cmds []string
	if f != nil {
		for _, sub := range f.Subfolders {
			if s.Builtins[sub] {
				s.Env.Log.Warnf("plugin folder %s is shadowed by nuv's built-in command of the same name", sub)
				continue
			}
			cmds = append(cmds, "nuv "+sub)
		}
	}
	fmt.Fprintf(s.Env.Out, "plugin %s installed at commit %s: %s\n", filepath.Base(res.Dir), shortCommit(res.Commit), strings.Join(cmds, ", "))
	return nil
}

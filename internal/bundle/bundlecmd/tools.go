package bundlecmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/bundle"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/config"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/secrets"
	"github.com/nuv-dev/nuv/internal/taskrun"
	"github.com/nuv-dev/nuv/internal/update"
)

// Tools returns -config, -update, -plugin, -reset, -info and -tasks; setup builds the Setup of one
// invocation.
func Tools(setup func(*cli.Env) Setup) []cli.Command {
	wrap := func(f func(context.Context, Setup, []string) error) func(context.Context, *cli.Env, []string) error {
		return func(ctx context.Context, env *cli.Env, args []string) error { return f(ctx, setup(env), args) }
	}
	return []cli.Command{
		{Name: "config", Short: "set, delete, reset or list configuration (~/.nuv/config.json)", Run: wrap(configTool)},
		{Name: "update", Short: "fetch the task bundle from git (NUV_REPO, NUV_BRANCH, lock file pin)", Run: wrap(updateTool)},
		{Name: "plugin", Short: "install (git URL), list (-l) or remove (-r) bundle plugins", Run: wrap(pluginTool)},
		{Name: "reset", Short: "remove the downloaded bundle and caches (--plugins, --config, --all)", Run: wrap(resetTool)},
		{Name: "info", Short: "show version, bundle, home, project, configuration, cluster (--json)", Run: wrap(infoTool)},
		{Name: "tasks", Short: "list every task of the bundle and its plugins (--json)", Run: wrap(tasksTool)},
	}
}

// newFlags returns a flag set whose errors are usage errors and whose -h prints usage.
func newFlags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolP("help", "h", false, "show usage")
	return fs
}

func parse(fs *pflag.FlagSet, s Setup, usage string, args []string) (bool, error) {
	if err := fs.Parse(args); err != nil {
		return false, cli.Usagef("%s: %v\n%s", fs.Name(), err, usage)
	}
	if h, _ := fs.GetBool("help"); h {
		fmt.Fprint(s.Env.Out, usage)
		return true, nil
	}
	return false, nil
}

// mask hides the value of a secret-looking key (or one listed in config `secrets`).
func mask(extra []string) func(k, v string) string {
	return func(k, v string) string {
		if v != "" && secrets.IsSecretKey(k, extra...) {
			return secrets.Placeholder
		}
		return v
	}
}

func configTool(_ context.Context, s Setup, args []string) error {
	home, err := paths.EnsureHome(s.Env.Getenv)
	if err != nil {
		return err
	}
	merged, _ := s.Merged()
	return config.Tool(config.ToolOptions{
		Path:   config.Path(home),
		Merged: s.Merged,
		Mask:   mask(SecretsOf(merged)),
		Out:    s.Env.Out,
	}, args)
}

const updateUsage = `Usage: nuv -update [--ref REF] [--pin | --unpin] [--repo URL]

Fetch the task bundle with git into ~/.nuv/<version>/olaris, replacing the old copy only after a
complete, valid checkout. The repository is --repo, else NUV_REPO, else the one in the lock file
(~/.nuv/<version>/olaris.lock), else nuv's own. The ref is --ref, else the lock file's pin, else
NUV_BRANCH, else the remote's default branch. On any failure the old bundle stays.

  --ref REF    branch, tag or commit to fetch
  --pin        record the fetched ref (or commit) as the pin for later updates
  --unpin      forget the pin
  --repo URL   repository to fetch from
`

func updateTool(ctx context.Context, s Setup, args []string) error {
	fs := newFlags("-update")
	ref := fs.String("ref", "", "branch, tag or commit")
	pin := fs.Bool("pin", false, "pin the fetched ref")
	unpin := fs.Bool("unpin", false, "forget the pin")
	repo := fs.String("repo", "", "repository URL")
	if done, err := parse(fs, s, updateUsage, args); done || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("-update takes no arguments (got %q)\n%s", fs.Args(), updateUsage)
	}
	if *pin && *unpin {
		return cli.Usagef("-update: --pin and --unpin exclude each other")
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

const pluginUsage = `Usage:
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
	if done, err := parse(fs, s, pluginUsage, args); done || err != nil {
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
		return cli.Usagef("-plugin needs one git URL\n%s", pluginUsage)
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

const resetUsage = `Usage: nuv -reset [--plugins] [--config] [--all]

Remove the bundle downloaded by -update (and its lock file) and the extracted embedded bundle, so
the next run starts from the bundle compiled into nuv. Clusters and their state are never touched.

  --plugins   also remove every installed plugin
  --config    also remove ~/.nuv/config.json
  --all       both of the above
`

func resetTool(_ context.Context, s Setup, args []string) error {
	fs := newFlags("-reset")
	plugins := fs.Bool("plugins", false, "remove plugins")
	cfg := fs.Bool("config", false, "remove config.json")
	all := fs.Bool("all", false, "plugins and config too")
	if done, err := parse(fs, s, resetUsage, args); done || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("-reset takes no arguments\n%s", resetUsage)
	}
	home, err := paths.Home(s.Env.Getenv)
	if err != nil {
		return err
	}
	dl := bundle.HomeDir(home, s.Version)
	targets := []string{dl, update.LockPath(dl), filepath.Join(home, "cache", "bundle")}
	if *plugins || *all {
		ps, err := bundle.Plugins(home)
		if err != nil {
			return err
		}
		for _, p := range ps {
			targets = append(targets, p.Dir, update.LockPath(p.Dir))
		}
	}
	if *cfg || *all {
		targets = append(targets, config.Path(home))
	}
	for _, t := range targets {
		if _, err := os.Lstat(t); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := os.RemoveAll(t); err != nil {
			return fmt.Errorf("reset: remove %s: %w", t, err)
		}
		fmt.Fprintf(s.Env.Out, "removed %s\n", t)
	}
	return nil
}

// Info is what -info prints.
type Info struct {
	Version     string            `json:"version"`
	TaskVersion string            `json:"taskVersion,omitempty"`
	Bundle      *BundleInfo       `json:"bundle,omitempty"`
	BundleError string            `json:"bundleError,omitempty"`
	Plugins     []BundleInfo      `json:"plugins,omitempty"`
	Home        string            `json:"home"`
	Project     string            `json:"project"`
	Cluster     map[string]string `json:"cluster,omitempty"`
	Config      map[string]string `json:"config"`
	ConfigError string            `json:"configError,omitempty"`
}

// BundleInfo describes one bundle root.
type BundleInfo struct {
	Dir     string `json:"dir"`
	Source  string `json:"source"`
	Version string `json:"version,omitempty"`
	Name    string `json:"name,omitempty"`
}

const infoUsage = "Usage: nuv -info [--json]\n\nShow nuv's version, the bundle in use and where it was found, NUV_HOME, the project root, the\nmerged configuration (secret values as ***) and the selected cluster.\n"

func infoTool(_ context.Context, s Setup, args []string) error {
	fs := newFlags("-info")
	asJSON := fs.Bool("json", false, "print JSON")
	if done, err := parse(fs, s, infoUsage, args); done || err != nil {
		return err
	}
	home, err := paths.Home(s.Env.Getenv)
	if err != nil {
		return err
	}
	in := Info{Version: s.Version, TaskVersion: taskrun.TaskVersion(), Home: home, Project: paths.Project(s.Env.Getenv, s.Env.Dir), Config: map[string]string{}}
	if b, err := s.Locate(); err != nil {
		in.BundleError = err.Error()
	} else {
		in.Bundle = &BundleInfo{Dir: b.Main.Dir, Source: string(b.Main.Source), Version: b.Main.Version}
		for _, p := range b.Plugins {
			in.Plugins = append(in.Plugins, BundleInfo{Dir: p.Dir, Source: string(p.Source), Version: p.Version, Name: p.Name})
		}
	}
	cfg, err := s.Merged()
	if err != nil && in.BundleError == "" {
		in.ConfigError = err.Error()
	}
	m := mask(SecretsOf(cfg))
	for k, v := range config.Flatten(cfg) {
		in.Config[k] = m(k, v)
	}
	if s.KubeEnv != nil {
		for _, kv := range s.KubeEnv() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				if in.Cluster == nil {
					in.Cluster = map[string]string{}
				}
				in.Cluster[k] = m(k, v)
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(s.Env.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	}
	w := s.Env.Out
	fmt.Fprintf(w, "version:  %s", in.Version)
	if in.TaskVersion != "" {
		fmt.Fprintf(w, " (go-task %s)", in.TaskVersion)
	}
	fmt.Fprintln(w)
	if in.Bundle != nil {
		fmt.Fprintf(w, "bundle:   %s (%s", in.Bundle.Dir, in.Bundle.Source)
		if in.Bundle.Version != "" {
			fmt.Fprintf(w, ", version %s", in.Bundle.Version)
		}
		fmt.Fprintln(w, ")")
	} else {
		fmt.Fprintf(w, "bundle:   none (%s)\n", in.BundleError)
	}
	for _, p := range in.Plugins {
		fmt.Fprintf(w, "plugin:   %s (%s)\n", p.Name, p.Dir)
	}
	fmt.Fprintf(w, "home:     %s\n", in.Home)
	fmt.Fprintf(w, "project:  %s\n", in.Project)
	if len(in.Cluster) == 0 {
		fmt.Fprintln(w, "cluster:  none selected")
	} else {
		for _, k := range sortedKeys(in.Cluster) {
			fmt.Fprintf(w, "cluster:  %s=%s\n", k, in.Cluster[k])
		}
	}
	if in.ConfigError != "" {
		fmt.Fprintf(w, "config:   error: %s\n", in.ConfigError)
	} else if len(in.Config) == 0 {
		fmt.Fprintln(w, "config:   (empty)")
	} else {
		fmt.Fprintln(w, "config:")
		for _, k := range sortedKeys(in.Config) {
			fmt.Fprintf(w, "  %s=%s\n", k, in.Config[k])
		}
	}
	if in.ConfigError != "" {
		return cli.Exit(1, nil)
	}
	return nil
}

const tasksUsage = "Usage: nuv -tasks [--json]\n\nList every task of the bundle and its plugins as the command line that runs it.\n"

func tasksTool(_ context.Context, s Setup, args []string) error {
	fs := newFlags("-tasks")
	asJSON := fs.Bool("json", false, "print JSON")
	if done, err := parse(fs, s, tasksUsage, args); done || err != nil {
		return err
	}
	b, err := s.Locate()
	if err != nil {
		return err
	}
	lines, err := b.Tasks()
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(s.Env.Out)
		enc.SetIndent("", "  ")
		if lines == nil {
			lines = []bundle.TaskLine{}
		}
		return enc.Encode(lines)
	}
	tw := tabwriter.NewWriter(s.Env.Out, 0, 4, 2, ' ', 0)
	for _, l := range lines {
		note := l.Desc
		if l.Plugin != "" {
			note += " [plugin " + l.Plugin + "]"
		}
		if l.Shadowed {
			note += " [shadowed by a built-in command]"
		}
		fmt.Fprintf(tw, "%s\t%s\n", l.Command, strings.TrimSpace(note))
	}
	return tw.Flush()
}

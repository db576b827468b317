// Package bundlecmd is the command layer over the bundle: `nuv a b task ARGS` dispatch through the
// embedded go-task (package taskrun), the bundle section of `nuv` help, the merged configuration
// exported to tasks, and the tools -config, -update, -plugin, -reset, -info and -tasks.
package bundlecmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/bundle"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/config"
	"github.com/nuv-dev/nuv/internal/dotenv"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/taskrun"
)

// Setup is what the dispatcher tells the bundle commands.
type Setup struct {
	Env *cli.Env
	// Version is nuv's version; downloaded bundles live in ~/.nuv/<Version>/olaris.
	Version string
	// Builtins are nuv's built-in command names, which win over top-level bundle folders.
	Builtins map[string]bool
	// Embedded is the bundle compiled into the binary (the last discovery fallback).
	Embedded fs.FS
	// KubeEnv returns the selected cluster's task variables (KUBECONFIG, KUBE), for -info.
	KubeEnv func() []string
	// KubeBinaries says which Kubernetes binaries local clusters run and how nuv got them, for -info
	// (nil: not shown).
	KubeBinaries func() string
}

// ErrNoBundle is returned when no bundle can be found at all.
var ErrNoBundle = errors.New("no task bundle found")

func (s Setup) home() (string, error) { return paths.Home(s.Env.Getenv) }

// Locate finds the main bundle and the installed plugins.
func (s Setup) Locate() (*bundle.Bundle, error) { return s.locate(false) }

// locate is Locate; noExtract leaves an embedded bundle unextracted (configuration only).
func (s Setup) locate(noExtract bool) (*bundle.Bundle, error) {
	home, err := s.home()
	if err != nil {
		return nil, err
	}
	main, err := bundle.Locate(bundle.LocateOptions{
		Getenv: s.Env.Getenv, Dir: s.Env.Dir, Home: home, Version: s.Version, Embedded: s.Embedded,
		NoExtract: noExtract,
	})
	if err != nil {
		return nil, err
	}
	plugins, err := bundle.Plugins(home)
	if err != nil {
		return nil, err
	}
	return &bundle.Bundle{Main: main, Plugins: plugins, Builtins: s.Builtins}, nil
}

// Merged is the effective configuration: the bundle's nuvroot.json defaults, then the plugins'
// (in name order), then the user's ~/.nuv/config.json. A malformed file is an error naming it;
// without any bundle the user configuration alone is returned with the discovery error.
func (s Setup) Merged() (map[string]any, error) {
	home, err := s.home()
	if err != nil {
		return map[string]any{}, err
	}
	user, err := config.Load(config.Path(home))
	if err != nil {
		return map[string]any{}, err
	}
	b, err := s.locate(true)
	if err != nil {
		return user, err
	}
	layers := []map[string]any{b.Main.Config}
	for _, p := range b.Plugins {
		layers = append(layers, p.Config)
	}
	return config.Merge(append(layers, user)...), nil
}

// ConfigEnv is Merged as sorted UPPER_SNAKE KEY=VALUE pairs.
func (s Setup) ConfigEnv() ([]string, error) {
	cfg, err := s.Merged()
	return config.Env(cfg), err
}

// SecretsOf returns the configuration's extra secret key names (config key `secrets`).
func SecretsOf(cfg map[string]any) []string { return config.Secrets(cfg) }

// Dispatch runs `nuv a b task ARGS`; base are the options every task gets (TaskOptions in app).
func (s Setup) Dispatch(ctx context.Context, base taskrun.Options, args []string) error {
	b, err := s.Locate()
	if err != nil {
		return err
	}
	cfg, err := s.Merged()
	if err != nil {
		return err
	}
	secretKeys := SecretsOf(cfg)
	runner := bundle.RunnerFunc(func(ctx context.Context, req bundle.Request) error {
		opts, err := s.taskOptions(b, req, base, secretKeys)
		if err != nil {
			return err
		}
		var calls []taskrun.Call
		if req.Task != "" || len(req.Vars) > 0 {
			task := req.Task
			if task == "" {
				task = "default"
			}
			calls = []taskrun.Call{{Task: task, Vars: req.Vars}}
		}
		return taskrun.Run(ctx, s.Env, opts, calls, req.CLIArgs)
	})
	err = b.Dispatch(ctx, s.Env.Out, runner, args)
	var ue *bundle.UsageError
	var ae *bundle.AmbiguousError
	var ne *bundle.UnknownError
	if errors.As(err, &ue) || errors.As(err, &ae) || errors.As(err, &ne) {
		return cli.Usagef("%v", err)
	}
	return err
}

// compatEnv are the other variables published nuv bundles use: NUV_TMP (a scratch directory,
// default ~/.nuv/tmp, created) and NUV_BIN (the directory of the nuv binary), unless already set.
func (s Setup) compatEnv() ([]string, error) {
	var out []string
	if s.Env.Getenv("NUV_TMP") == "" {
		home, err := s.home()
		if err != nil {
			return nil, err
		}
		tmp := filepath.Join(home, "tmp")
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			return nil, fmt.Errorf("create NUV_TMP %s (set NUV_HOME or NUV_TMP to a writable directory): %w", tmp, err)
		}
		out = append(out, "NUV_TMP="+tmp)
	}
	if s.Env.Getenv("NUV_BIN") == "" && s.Env.Exe != "" {
		out = append(out, "NUV_BIN="+filepath.Dir(s.Env.Exe))
	}
	return out, nil
}

// taskOptions are base plus the folder's Taskfile, its .env (the project's .env wins over it) and
// the variables published nuv bundles rely on: NUV_ROOT (the main bundle, so a nested `nuv`
// resolves against the same bundle) and NUV_PWD (where the user ran nuv; tasks run in their folder).
func (s Setup) taskOptions(b *bundle.Bundle, req bundle.Request, base taskrun.Options, secretKeys []string) (taskrun.Options, error) {
	opts := base
	opts.Dir = req.Dir
	opts.Entrypoint = req.Nuvfile
	folderEnv, err := dotenv.Dir(req.Dir)
	if err != nil {
		return opts, err
	}
	opts.DefaultEnv = dotenv.Merge(base.DefaultEnv, folderEnv)
	opts.Env = append(append([]string{}, base.Env...), "NUV_ROOT="+b.Main.Dir, "NUV_PWD="+s.Env.Dir)
	compat, err := s.compatEnv()
	if err != nil {
		return opts, err
	}
	opts.Env = append(opts.Env, compat...)
	if req.Root != nil && req.Root.Name != "" {
		opts.Env = append(opts.Env, "NUV_PLUGIN="+req.Root.Name, "NUV_PLUGIN_ROOT="+req.Root.Dir)
	}
	// docopt variables are also exported, as published nuv bundles passed them as global variables:
	// deps, `task:` calls and shell commands see them (lists as space-separated words; the called
	// task itself gets the real list through its call variables).
	for _, k := range sortedVarKeys(req.Vars) {
		switch v := req.Vars[k].(type) {
		case string:
			opts.Env = append(opts.Env, k+"="+v)
		case []string:
			opts.Env = append(opts.Env, k+"="+strings.Join(v, " "))
		}
	}
	opts.SecretKeys = append(append([]string{}, base.SecretKeys...), secretKeys...)
	return opts, nil
}

// Defines reports whether the bundle's top level has a folder or task with exactly this name.
func (s Setup) Defines(name string) bool {
	b, err := s.Locate()
	if err != nil {
		return false
	}
	f, err := bundle.ReadFolder(b.Main.Dir, false)
	if err != nil {
		return false
	}
	if _, ok := f.HasTask(name); ok {
		return true
	}
	for _, sub := range f.Subfolders {
		if sub == name {
			return true
		}
	}
	return false
}

// Help prints the bundle section of `nuv` help and warns about shadowed folders.
func (s Setup) Help() error {
	b, err := s.Locate()
	if err != nil {
		return err
	}
	shadowed, err := b.Help(s.Env.Out)
	if len(shadowed) > 0 {
		s.Env.Log.Warnf("bundle folders shadowed by nuv's built-in commands of the same name (the built-ins win): %s", strings.Join(shadowed, ", "))
	}
	return err
}

func sortedVarKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func gitBinary() string {
	if _, err := os.Stat("/usr/bin/git"); err == nil {
		return "/usr/bin/git"
	}
	return "git"
}

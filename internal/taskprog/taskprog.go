// Package taskprog is nuv's task program (cmd/nuv-task): `task` and `nuv -task` run Taskfiles
// here, through go-task and nuv's shell, with the environment every task nuv runs gets (the
// merged configuration's variables, the selected cluster's KUBECONFIG and KUBE, the project's
// .env for keys the process lacks, the configuration's extra secret names masked).
//
// Why a program of its own: Go runs the package initialisers of everything a binary links. The
// full program (cmd/nuv-full) links the cloud SDKs, Helm, kind, Karpenter's API types and the
// emulators beside go-task, and paid about twice go-task's own start before a Taskfile was read.
// This program links go-task, the shell, the bundle's configuration and the cluster selection,
// and nothing a Taskfile run does not use; the `nuv` commands inside tasks run the slim nuv, as
// they do under the stock go-task CLI. The full program answers `-task` too, with the same
// Options, so a Taskfile runs the same wherever it is started.
package taskprog

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/bundle/bundlecmd"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/dotenv"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/taskrun"
	"github.com/nuv-dev/nuv/internal/version"
	"github.com/nuv-dev/nuv/olaris"
)

// Name is the task program's file name, beside nuv-full in a release archive and in the cache.
const Name = "nuv-task"

// Main runs the task program with the process's arguments and returns the exit code. It answers
// `task ARGS` (run through a link named task), `nuv -task ARGS` and `nuv-task ARGS`, each as go-task's
// CLI with ARGS, and, run as nuv, `-version` with the version line nuv prints.
func Main(ctx context.Context, args []string) int {
	streams := cli.OSStreams()
	if len(args) == 2 && strings.TrimSuffix(filepath.Base(args[0]), ".exe") == "nuv" && (args[1] == "-version" || args[1] == "-v") {
		// what a nuv beside it asks to learn which build it is (front.Task)
		env, err := cli.NewEnv(streams)
		if err != nil {
			return cli.Report(streams, err)
		}
		return cli.Report(streams, version.Command(version.Version).Run(ctx, env, nil))
	}
	rest, ok := TaskArgs(args)
	if !ok {
		return cli.Report(streams, cli.Usagef("%s runs Taskfiles only: run it as `task ARGS` or `nuv -task ARGS` (every other command is nuv's)", Name))
	}
	env, err := cli.NewEnv(streams)
	if err != nil {
		return cli.Report(streams, err)
	}
	opts, err := Options(env, Setup(env))
	if err != nil {
		return cli.Report(streams, err)
	}
	return cli.Report(streams, taskrun.Main(ctx, env, rest, opts))
}

// TaskArgs returns go-task's arguments of a command line that runs Taskfiles: the arguments after
// the program name when it is `task` or nuv-task, after `-task` when it is nuv; ok is false for any
// other command line.
func TaskArgs(args []string) (rest []string, ok bool) {
	if len(args) == 0 {
		return nil, false
	}
	switch prog := strings.TrimSuffix(filepath.Base(args[0]), ".exe"); {
	case prog == "task" || prog == Name:
		return args[1:], true
	case prog == "nuv" && len(args) >= 2 && (args[1] == "-task" || args[1] == "--task"):
		return args[2:], true
	}
	return nil, false
}

// Setup is the bundle setup the task environment reads the configuration through: the embedded
// bundle, the installed plugins and the user's configuration. (The full program's setup adds what
// bundle dispatch and -info need.)
func Setup(env *cli.Env) bundlecmd.Setup {
	return bundlecmd.Setup{
		Env:      env,
		Version:  version.Version,
		Embedded: olaris.FS(),
		KubeEnv:  func() []string { return KubeEnv(env) },
	}
}

// Options are the options of every task nuv runs: the selected cluster's and the merged
// configuration's variables override the process environment; the project root's .env fills keys
// the process lacks; the configuration's `secrets` names more variables to mask.
func Options(env *cli.Env, s bundlecmd.Setup) (taskrun.Options, error) {
	project := paths.Project(env.Getenv, env.Dir)
	defaults, err := dotenv.Dir(project)
	if err != nil {
		return taskrun.Options{}, err
	}
	return taskrun.Options{
		Env:        append(ConfigEnv(env, s), KubeEnv(env)...),
		DefaultEnv: defaults,
		SecretKeys: Secrets(s),
	}, nil
}

// ConfigEnv is the merged configuration (nuvroot.json defaults, plugin configs, then
// ~/.nuv/config.json) as UPPER_SNAKE KEY=VALUE pairs exported to every task. A malformed file is a
// warning here; bundle dispatch and -config fail on it.
func ConfigEnv(env *cli.Env, s bundlecmd.Setup) []string {
	vars, err := s.ConfigEnv()
	if err != nil && env.Log != nil {
		env.Log.Warnf("configuration: %v", err)
	}
	return vars
}

// Secrets lists the extra variable names the configuration asks nuv to mask (config key
// `secrets`).
func Secrets(s bundlecmd.Setup) []string {
	cfg, _ := s.Merged()
	return bundlecmd.SecretsOf(cfg)
}

// KubeEnv is the environment every task nuv runs gets for the selected cluster
// (KUBECONFIG=<selected kubeconfig>, KUBE=<detected type>); nil when nothing is selected. A
// selection that cannot be used is reported and points KUBECONFIG nowhere (see kube.SelectionEnv).
func KubeEnv(env *cli.Env) []string {
	vars, err := kube.SelectionEnv(paths.Project(env.Getenv, env.Dir), env.Getenv)
	if err != nil && env.Log != nil {
		env.Log.Warnf("cluster selection: %v", err)
	}
	return vars
}

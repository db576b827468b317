package app

import (
	"context"
	"strings"

	"github.com/nuv-dev/nuv/internal/bundle/bundlecmd"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/providers"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/taskprog"
	"github.com/nuv-dev/nuv/olaris"
)

// bundleSetup tells the bundle commands about the dispatcher: nuv's version, the built-in command
// names (which win over bundle folders), the embedded bundle and the selected cluster.
func bundleSetup(env *cli.Env) bundlecmd.Setup {
	return bundlecmd.Setup{
		Env:          env,
		Version:      Version,
		Builtins:     BuiltinNames(),
		Embedded:     olaris.FS(),
		KubeEnv:      func() []string { return kubeTaskEnv(env) },
		KubeBinaries: func() string { return kubeBinaries(env) },
	}
}

// bundleTools are the tools that manage the bundle and configuration (-config, -update, -plugin,
// -reset, -info, -tasks).
func bundleTools() []cli.Command { return bundlecmd.Tools(bundleSetup) }

// bundleDispatch runs `nuv a b task ARGS` against the task bundle.
func bundleDispatch(ctx context.Context, env *cli.Env, args []string) error {
	s := bundleSetup(env)
	if len(args) == 1 && args[0] == "help" && !s.Defines("help") {
		return printHelp(ctx, env) // `nuv help` is `nuv -help` unless the bundle defines help
	}
	if _, err := s.Merged(); err != nil {
		return err // a malformed configuration stops here, before anything runs
	}
	base, err := TaskOptions(env)
	if err != nil {
		return err
	}
	return s.Dispatch(ctx, base, args)
}

// bundleHelp prints the bundle's top-level folders and tasks for `nuv` with no arguments.
func bundleHelp(_ context.Context, env *cli.Env) error { return bundleSetup(env).Help() }

// configTaskEnv is the merged configuration as KEY=VALUE pairs for every task (taskprog.ConfigEnv).
func configTaskEnv(env *cli.Env) []string { return taskprog.ConfigEnv(env, bundleSetup(env)) }

// ConfigSecrets lists the extra variable names the configuration asks nuv to mask (config key
// `secrets`), for taskrun.Options.SecretKeys and every printer of variables.
func ConfigSecrets(env *cli.Env) []string { return taskprog.Secrets(bundleSetup(env)) }

// kubeBinaries says how the selected cluster got its binaries when it is a local cluster, else which
// binaries the next local cluster would run.
func kubeBinaries(env *cli.Env) string {
	home, _ := paths.Home(env.Getenv)
	var kubeconfigs []string
	if home != "" {
		for _, kv := range kubeTaskEnv(env) {
			if kc, ok := strings.CutPrefix(kv, "KUBECONFIG="); ok {
				kubeconfigs = append(kubeconfigs, kc)
			}
		}
	}
	return providers.KubeBinaries(context.Background(), env.Getenv, home, kubeconfigs)
}

package app

import (
	"context"

	"github.com/nuv-dev/nuv/internal/cli"
)

// bundleTools are the tools that manage the bundle and configuration (-config, -update, -plugin, ...).
func bundleTools() []cli.Command { return nil }

// bundleDispatch runs `nuv a b task ARGS` against the task bundle.
func bundleDispatch(ctx context.Context, env *cli.Env, args []string) error {
	return cli.Usagef("unknown command %q; `nuv -help` lists the commands", args[0])
}

// bundleHelp prints the bundle's top-level folders and tasks for `nuv` with no arguments.
func bundleHelp(ctx context.Context, env *cli.Env) error { return nil }

// configTaskEnv is the merged configuration (nuvroot.json defaults, ~/.nuv/config.json, plugin
// configs) as UPPER_SNAKE KEY=VALUE pairs exported to every task.
func configTaskEnv(env *cli.Env) []string { return nil }

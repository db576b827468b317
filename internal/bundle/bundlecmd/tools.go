package bundlecmd

import (
	"context"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/config"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/secrets"
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
func newFlags(name string) *pflag.FlagSet { return cli.NewFlagSet("nuv " + name) }

// parse parses a tool's flags the one way (cli.Parse): -h/--help prints the help (usage, a
// "Usage: LINE\n\nLONG" text, then examples, command lines one a line) to stdout; a bad flag is a
// usage error naming it.
func parse(fs *pflag.FlagSet, s Setup, usage, examples string, args []string) (bool, error) {
	line, long, _ := strings.Cut(strings.TrimPrefix(usage, "Usage: "), "\n")
	return cli.Parse(s.Env, fs, cli.Usage{Line: strings.TrimSpace(line), Long: strings.Trim(long, "\n"), Examples: examples}, args)
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
		Err:    s.Env.Err,
	}, args)
}

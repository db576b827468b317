package app

import (
	"context"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/dotenv"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/taskrun"
	"github.com/nuv-dev/nuv/internal/tools"
)

// interpTools are the interpreter's built-in tools: "task" (go-task), "sh", "version" and the
// small utilities tasks call (-base64, -retry, ...).
func interpTools() []cli.Command {
	return append([]cli.Command{
		{Name: "task", Short: "run Taskfiles with go-task's CLI flags (also: nuv run as `task`)", Run: runTask},
		tools.Version(Version),
	}, tools.Commands()...)
}

// runTask is `nuv -task ARGS` and `task ARGS`.
func runTask(ctx context.Context, env *cli.Env, args []string) error {
	opts, err := TaskOptions(env)
	if err != nil {
		return err
	}
	return taskrun.Main(ctx, env, args, opts)
}

// TaskOptions are the options of every task nuv runs: the selected cluster's and the merged
// configuration's variables override the process environment; the project root's .env fills keys
// the process lacks; the configuration's `secrets` names more variables to mask.
func TaskOptions(env *cli.Env) (taskrun.Options, error) {
	project := paths.Project(env.Getenv, env.Dir)
	defaults, err := dotenv.Dir(project)
	if err != nil {
		return taskrun.Options{}, err
	}
	return taskrun.Options{
		Env:        append(configTaskEnv(env), kubeTaskEnv(env)...),
		DefaultEnv: defaults,
		SecretKeys: ConfigSecrets(env),
	}, nil
}

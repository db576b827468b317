package app

import (
	"context"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/taskprog"
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

// TaskOptions are the options of every task nuv runs (taskprog.Options, which the task program
// cmd/nuv-task uses too), read through the full program's bundle setup.
func TaskOptions(env *cli.Env) (taskrun.Options, error) {
	return taskprog.Options(env, bundleSetup(env))
}

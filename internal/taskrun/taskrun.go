// Package taskrun embeds go-task (github.com/go-task/task/v3) through its library API: an
// Executor built with functional options, Setup, Run. It is `nuv -task` (Main: the go-task CLI's
// flags, .taskrc.yml, experiments and exit codes) and the engine behind bundle dispatch (Run).
//
// Every run gets the same environment a user would see from a shell started by nuv: Options.Env
// overrides the process environment, Options.DefaultEnv (.env values) fills keys the process lacks,
// and nuv's link directory (package shell) is first on PATH, so `nuv`, `task` and nuv's tools in a
// task command are the running binary. go-task's Go core utilities (cat, ls, mkdir, cp, rm, ...)
// are switched on unless TASK_CORE_UTILS says otherwise, so tasks need no bash and no coreutils.
//
// go-task reads the process environment directly (os.Environ) for both templates and commands, so
// the environment above is applied to the process for the duration of a run and restored after;
// runs in one process are serialised.
package taskrun

import (
	"context"

	"github.com/go-task/task/v3"
	"github.com/go-task/task/v3/taskfile/ast"

	"github.com/nuv-dev/nuv/internal/cli"
)

// Options configures one embedded go-task run.
type Options struct {
	// Dir is the directory to search the Taskfile from (go-task -d); empty: the command's directory.
	Dir string
	// Entrypoint is an explicit Taskfile (go-task -t); empty: go-task's search.
	Entrypoint string
	// Env is KEY=VALUE set for every command, overriding the process env (KUBECONFIG, KUBE, config
	// vars).
	Env []string
	// DefaultEnv is KEY=VALUE set only where the process env lacks the key (.env values).
	DefaultEnv []string
	// SecretKeys names variables to mask besides the secret-looking ones (config `secrets`).
	SecretKeys []string
	// Silent makes Run not echo commands (as `task -s`).
	Silent bool
	// ExitCode makes Run fail with a failing command's own exit code instead of go-task's 201
	// (as `task -x`).
	ExitCode bool
	// Links are the names linked to the running binary in the directory put first on PATH;
	// nil: shell.DefaultLinks.
	Links []string
}

// Call is one task invocation with its variables (a []string value is a list variable).
type Call struct {
	Task string
	Vars map[string]any
}

// Run runs calls from the Taskfile opts selects (bundle dispatch uses it: nuvfile.yml as
// Entrypoint), with CLI_ARGS set from cliArgs. Errors carry go-task's exit codes (cli.ExitError)
// and their messages are masked.
func Run(ctx context.Context, env *cli.Env, opts Options, calls []Call, cliArgs []string) error {
	return withEnv(env, opts, func(s *session) error {
		f, err := s.flags(nil)
		if err != nil {
			return err
		}
		f.silent = f.silent || s.opts.Silent
		e, err := s.executor(f)
		if err != nil {
			return s.fail(err, false)
		}
		tcalls := make([]*task.Call, 0, len(calls))
		for _, c := range calls {
			tc := &task.Call{Task: c.Task}
			if len(c.Vars) > 0 {
				tc.Vars = ast.NewVars()
				for k, v := range c.Vars {
					tc.Vars.Set(k, ast.Var{Value: varValue(v)})
				}
			}
			tcalls = append(tcalls, tc)
		}
		if len(tcalls) == 0 {
			tcalls = append(tcalls, &task.Call{Task: "default"})
		}
		s.calls = tcalls
		if err := setSpecialVars(e, f, cliArgs); err != nil {
			return s.fail(err, false)
		}
		return s.fail(e.Run(ctx, tcalls...), s.opts.ExitCode)
	})
}

// varValue converts list values to the []any go-task's templates and `for` loops range over.
func varValue(v any) any {
	if l, ok := v.([]string); ok {
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out
	}
	return v
}

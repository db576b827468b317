package taskrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/go-task/task/v3"
	"github.com/go-task/task/v3/args"
	"github.com/go-task/task/v3/experiments"
	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
)

// Main is `nuv -task ARGS...`: the go-task CLI's everyday flags and arguments (task names,
// VAR=value, -- CLI_ARGS, -l, -a, --json, -n, -p, -s, --summary, -f, -t, -d, -y, -x, -v, -C, -o,
// ...), .taskrc.yml and experiments, and go-task's exit codes (returned as cli.ExitError).
func Main(ctx context.Context, env *cli.Env, argv []string, opts Options) error {
	return withEnv(env, opts, func(s *session) error {
		f, err := s.flags(argv)
		if err != nil {
			return err
		}
		switch {
		case f.help:
			fmt.Fprint(env.Out, usage)
			fmt.Fprint(env.Out, f.fs.FlagUsages())
			return nil
		case f.version:
			// exactly as the stock CLI, for scripts that parse it
			fmt.Fprintln(env.Out, strings.TrimPrefix(TaskVersion(), "v"))
			return nil
		case f.experiments:
			return printExperiments(env)
		case f.init:
			return s.initTaskfile(f)
		case f.completion != "":
			script, err := task.Completion(f.completion)
			if err != nil {
				return s.fail(err, false)
			}
			fmt.Fprintln(env.Out, script)
			return nil
		}

		e, err := s.executor(f)
		if err != nil {
			return s.fail(err, false)
		}
		if f.clearCache {
			return s.fail(os.RemoveAll(filepath.Join(e.TempDir.Remote, "remote")), false)
		}
		list := task.NewListOptions(f.list, f.listAll, f.listJSON, f.noStatus, f.nested)
		if list.ShouldListTasks() {
			if f.silent {
				return s.fail(e.ListTaskNames(f.listAll), false)
			}
			found, err := e.ListTasks(list)
			if err != nil {
				return s.fail(err, false)
			}
			if !found {
				return cli.Exit(cli.ExitFailure, nil)
			}
			return nil
		}

		calls, globals := args.Parse(f.args...)
		if len(calls) == 0 {
			calls = append(calls, &task.Call{Task: "default"})
		}
		s.calls = calls
		// CLI variables (FOO=bar) take priority over the Taskfile's; special ones only fill gaps.
		e.Taskfile.Vars.Merge(globals, nil)
		if err := setSpecialVars(e, f, f.dash); err != nil {
			return s.fail(err, false)
		}
		if f.status {
			return s.fail(e.Status(ctx, calls...), f.exitCode)
		}
		return s.fail(e.Run(ctx, calls...), f.exitCode)
	})
}

// flags reads .taskrc.yml and experiments for the directory argv selects, then parses argv.
// A malformed flag is a usage error (exit 2, as pflag in the go-task CLI); an invalid
// combination exits 1 with go-task's message.
func (s *session) flags(argv []string) (*flags, error) {
	base := s.env.Dir
	if s.opts.Dir != "" {
		base = absIn(s.env.Dir, s.opts.Dir)
	}
	dir := preparseDir(argv, base)
	config, _ := loadConfig(dir) // the go-task CLI ignores a broken .taskrc.yml here too
	for _, x := range experiments.List() {
		if err := x.Valid(); err != nil {
			fmt.Fprintf(s.env.Err, "task: %v\n", err)
			break
		}
	}
	f, err := parseFlags(argv, config)
	if errors.Is(err, pflag.ErrHelp) {
		f.help = true
		err = nil
	}
	if err != nil {
		return nil, cli.Usagef("task: %v (nuv -task -h lists the flags)", err)
	}
	if err := f.validate(); err != nil {
		return nil, cli.Exit(cli.ExitFailure, err)
	}
	return f, nil
}

func (s *session) initTaskfile(f *flags) error {
	path := s.env.Dir
	if len(f.args) > 0 {
		name := f.args[0]
		if filepath.Base(name) == filepath.Ext(name) { // just an extension: ".yaml"
			name = filepath.Join(filepath.Dir(name), "Taskfile"+filepath.Ext(name))
		}
		path = absIn(s.env.Dir, name)
	}
	final, err := task.InitTaskfile(path)
	if err != nil {
		return s.fail(err, false)
	}
	if !f.silent {
		if rel, err := filepath.Rel(s.env.Dir, final); err == nil {
			final = rel
		}
		fmt.Fprintf(s.env.Out, "Taskfile created: %s\n", final)
	}
	return nil
}

func printExperiments(env *cli.Env) error {
	w := tabwriter.NewWriter(env.Out, 0, 8, 0, ' ', 0)
	// Each run parses the experiments again and go-task appends them to its list: print the
	// latest parse of each, in go-task's order.
	list := experiments.List()
	latest := map[string]int{}
	for i, x := range list {
		latest[x.Name] = i
	}
	for i, x := range list {
		if latest[x.Name] == i && x.Active() {
			fmt.Fprintf(w, "* %s: \t%s\n", x.Name, x.String())
		}
	}
	return w.Flush()
}

// TaskVersion is the version of the embedded go-task module.
func TaskVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/go-task/task/v3" {
				return d.Version
			}
		}
	}
	return pinnedTaskVersion
}

// pinnedTaskVersion is the go-task version go.mod pins, for binaries without module build
// information (test binaries).
const pinnedTaskVersion = "v3.54.0"

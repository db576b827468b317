package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/shell"
	"mvdan.cc/sh/v3/syntax"
)

func shTool(ctx context.Context, env *cli.Env, args []string) error {
	f := newFlags("sh", "[-c SCRIPT [NAME] | FILE] [ARGS...]", `
Runs a POSIX shell script in nuv's embedded shell (mvdan.cc/sh), the one tasks run in: cat, ls,
mkdir, cp, mv, rm, touch, find, chmod, tar, gzip, ... are built in, and nuv's link directory is
first on PATH so "nuv" and nuv's tools resolve to this binary. The script is SCRIPT (-c), FILE, or
stdin. ARGS become $1, $2, ...`, `nuv -sh -c 'echo "$1"' name hello
nuv -sh scripts/setup.sh`)
	script := f.StringP("command", "c", "", "the script text")
	noCore := f.Bool("no-coreutils", false, "run cat, ls, ... from PATH instead of the built-in versions")
	f.SetInterspersed(false)
	if done, err := f.parse(env, args); done || err != nil {
		return err
	}
	opts := shell.Options{
		Dir: env.Dir, Stdin: env.In, Stdout: env.Out, Stderr: env.Err,
		Env: os.Environ(), Params: f.Args(), NoCoreUtils: *noCore,
	}
	if env.Exe != "" {
		if home, err := paths.Home(env.Getenv); err == nil {
			if dir, err := shell.LinkDir(home, env.Exe, shell.DefaultLinks); err == nil {
				opts.Env = withPath(opts.Env, dir)
			} else {
				env.Log.Warnf("-sh: %v", err)
			}
		}
	}
	var src io.Reader
	switch {
	case f.Changed("command"):
		src = strings.NewReader(*script)
		opts.Name = "sh"
	case f.NArg() > 0:
		file, err := os.Open(absIn(env.Dir, f.Arg(0)))
		if err != nil {
			return failf("sh", "%v", err)
		}
		defer file.Close()
		src, opts.Name, opts.Params = file, f.Arg(0), f.Args()[1:]
	default:
		if env.In == nil {
			return f.usagef("no script: use -c SCRIPT, a FILE or stdin")
		}
		src, opts.Stdin, opts.Name = env.In, nil, "stdin"
	}
	err := shell.Run(ctx, src, opts)
	var perr syntax.ParseError
	if errors.As(err, &perr) {
		return cli.Exit(cli.ExitUsage, fmt.Errorf("nuv -sh: %w", err))
	}
	if code := shell.ExitStatus(err); code != 0 {
		if code == 1 && !shell.IsExitStatus(err) {
			return cli.Exit(cli.ExitFailure, fmt.Errorf("nuv -sh: %w", err))
		}
		return cli.Exit(code, nil)
	}
	return nil
}

// withPath returns environ with dir first on PATH.
func withPath(environ []string, dir string) []string {
	out := make([]string, 0, len(environ)+1)
	path := ""
	for _, kv := range environ {
		if strings.HasPrefix(kv, "PATH=") {
			path = kv[len("PATH="):]
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PATH="+shell.PrependPath(dir, path))
}

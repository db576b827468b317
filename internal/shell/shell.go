// Package shell runs POSIX shell scripts in mvdan's interpreter (mvdan.cc/sh/v3/interp) the way
// nuv's tasks see them: the Go core utilities (cat, ls, mkdir, cp, rm, ...) built in, so nothing
// but the nuv binary is needed, and nuv's link directory (see LinkDir) first on PATH so `nuv`,
// `task` and nuv's tools resolve to the running binary.
package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
	"mvdan.cc/sh/x/coreutils"
)

// Options configures one script run.
type Options struct {
	Dir    string   // working directory
	Env    []string // complete environment (KEY=VALUE)
	Params []string // positional parameters $1...; Params[0] is not $0
	Name   string   // $0 and the file name in parse errors
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// NoCoreUtils runs cat, ls, mkdir, ... from PATH instead of the built-in Go versions.
	NoCoreUtils bool
}

// Run parses and runs script. A non-zero exit status is returned as an error for which ExitStatus
// gives the code.
func Run(ctx context.Context, script io.Reader, opts Options) error {
	name := opts.Name
	if name == "" {
		name = "sh"
	}
	file, err := syntax.NewParser().Parse(script, name)
	if err != nil {
		return fmt.Errorf("parse %s: %w", name, err)
	}
	var handlers []func(interp.ExecHandlerFunc) interp.ExecHandlerFunc
	if !opts.NoCoreUtils {
		handlers = append(handlers, coreutils.ExecHandler)
	}
	params := append([]string{"--"}, opts.Params...)
	r, err := interp.New(
		interp.Env(expand.ListEnviron(opts.Env...)),
		interp.Dir(opts.Dir),
		interp.StdIO(opts.Stdin, opts.Stdout, opts.Stderr),
		interp.ExecHandlers(handlers...),
		interp.Params(params...),
	)
	if err != nil {
		return fmt.Errorf("shell: %w", err)
	}
	r.Reset()
	return r.Run(ctx, file)
}

// RunString is Run with the script as a string.
func RunString(ctx context.Context, script string, opts Options) error {
	return Run(ctx, strings.NewReader(script), opts)
}

// ExitStatus returns the exit code an error from Run stands for: 0 for nil, the script's status
// for an exit status, 1 otherwise.
func ExitStatus(err error) int {
	if err == nil {
		return 0
	}
	var st interp.ExitStatus
	if errors.As(err, &st) {
		return int(st)
	}
	return 1
}

// IsExitStatus reports whether err is a script's non-zero exit status (rather than a failure to
// run it).
func IsExitStatus(err error) bool {
	var st interp.ExitStatus
	return errors.As(err, &st)
}

// Package tools holds nuv's small built-in tools (`nuv -retry`, `-validate`, `-base64`, ...): the
// utilities tasks call so that a Taskfile needs nothing installed but nuv. Each tool is a
// cli.Command with its own pflag FlagSet (`-h` prints its usage); several are also reachable by
// name inside tasks through nuv's link directory (see shell.DefaultLinks).
package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
)

// Commands returns the tools of this package, in help order.
func Commands() []cli.Command {
	return []cli.Command{
		{Name: "base64", Short: "encode (or -d decode) base64 text from arguments or stdin", Run: base64Tool},
		{Name: "datefmt", Short: "print a date in a chosen format (-t unix time, -f layout)", Run: datefmtTool},
		{Name: "die", Short: "print a message on stderr and exit 1", Run: dieTool},
		{Name: "empty", Short: "exit 0 if a file is missing or empty (a directory: no entries)", Run: emptyTool},
		{Name: "envsubst", Short: "substitute $VAR and ${VAR} from the environment; unset is an error", Run: envsubstTool},
		{Name: "executable", Short: "make files executable (chmod +x where readable)", Run: executableTool},
		{Name: "extract", Short: "extract a .zip, .tar, .tar.gz/.tgz or .tar.bz2 archive (all or named entries)", Run: extractTool},
		{Name: "needupdate", Short: "exit 0 if semver A is newer than B, 1 if not", Run: needupdateTool},
		{Name: "random", Short: "print a random number, integer (--int), string (--str) or UUID (-u)", Run: randomTool},
		{Name: "retry", Short: "run a command until it succeeds, with exponential backoff", Run: retryTool},
		{Name: "sh", Short: "run a POSIX shell script in nuv's embedded shell (-c or a file)", Run: shTool},
		{Name: "urlenc", Short: "URL-encode KEY=VALUE pairs (or values) into a query string", Run: urlencTool},
		{Name: "validate", Short: "check a value (-e email, -n number, -r regex, ...); silent on success", Run: validateTool},
	}
}

// toolFlags is one invocation's FlagSet with the tool's usage text.
type toolFlags struct {
	*pflag.FlagSet
	synopsis, desc string
}

// newFlags returns a FlagSet for one invocation of tool name; synopsis and desc make its usage.
func newFlags(name, synopsis, desc string) *toolFlags {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	return &toolFlags{FlagSet: fs, synopsis: synopsis, desc: desc}
}

// parse parses args; with -h/--help it prints the usage on env.Out and reports done. A bad flag
// is a usage error naming the tool.
func (f *toolFlags) parse(env *cli.Env, args []string) (done bool, err error) {
	err = f.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(env.Out, "Usage: nuv -%s %s\n\n%s\n", f.Name(), f.synopsis, strings.TrimSpace(f.desc))
		if u := f.FlagUsages(); u != "" {
			fmt.Fprintf(env.Out, "\nOptions:\n%s", u)
		}
		return true, nil
	}
	if err != nil {
		return false, f.usagef("%v", err)
	}
	return false, nil
}

// usagef is a usage error (exit 2) naming the tool and showing its synopsis.
func (f *toolFlags) usagef(format string, a ...any) error {
	return cli.Usagef("-%s: %s (usage: nuv -%s %s)", f.Name(), fmt.Sprintf(format, a...), f.Name(), f.synopsis)
}

// failf is a tool failure: the message on stderr (by the dispatcher) and exit 1.
func failf(tool, format string, a ...any) error {
	return cli.Exit(cli.ExitFailure, fmt.Errorf("-%s: %s", tool, fmt.Sprintf(format, a...)))
}

// input returns the tool's text: the arguments joined by spaces, else stdin.
func input(env *cli.Env, args []string) (string, error) {
	if len(args) > 0 {
		return strings.Join(args, " "), nil
	}
	if env.In == nil {
		return "", nil
	}
	b, err := io.ReadAll(env.In)
	return string(b), err
}

// Version returns the -version tool printing version (nuv's, stamped at build time). It never
// touches the network.
func Version(version string) cli.Command {
	return cli.Command{Name: "version", Short: "print nuv's version", Run: func(_ context.Context, env *cli.Env, args []string) error {
		f := newFlags("version", "", "Prints nuv's version.")
		if done, err := f.parse(env, args); done || err != nil {
			return err
		}
		if f.NArg() > 0 {
			return f.usagef("unexpected arguments %q", f.Args())
		}
		fmt.Fprintln(env.Out, version)
		return nil
	}}
}

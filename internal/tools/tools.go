// Package tools holds nuv's small built-in tools (`nuv -retry`, `-validate`, `-base64`, ...): the
// utilities tasks call so that a Taskfile needs nothing installed but nuv. Each tool is a
// cli.Command parsing its flags on nuv's one plumbing (cli.Parse: `-h` prints its help, a bad flag
// is a usage error naming it, errors read "nuv -TOOL: ..."); several are also reachable by name
// inside tasks through nuv's link directory (see shell.DefaultLinks).
package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/version"
)

// Commands returns the tools of this package, in help order. Each runs on nuv's one command
// plumbing (cli.Parse): -h/--help prints the help (usage, flags, description, examples) on stdout,
// exit 0; a bad flag or argument is a usage error, exit 2; every error reads "nuv -TOOL: ...".
func Commands() []cli.Command {
	return []cli.Command{
		tool("base64", "encode (or -d decode) base64 text from arguments or stdin", base64Tool),
		tool("datefmt", "print a date in a chosen format (-t unix time, -f layout)", datefmtTool),
		tool("die", "print a message on stderr and exit 1", dieTool),
		tool("empty", "exit 0 if a file is missing or empty (a directory: no entries)", emptyTool),
		tool("envsubst", "substitute $VAR and ${VAR} from the environment; unset is an error", envsubstTool),
		tool("executable", "make files executable (chmod +x where readable)", executableTool),
		tool("extract", "extract a .zip, .tar, .tar.gz/.tgz or .tar.bz2 archive (all or named entries)", extractTool),
		tool("needupdate", "exit 0 if semver A is newer than B, 1 if not", needupdateTool),
		tool("random", "print a random number, integer (--int), string (--str) or UUID (-u)", randomTool),
		tool("retry", "run a command until it succeeds, with exponential backoff", retryTool),
		tool("sh", "run a POSIX shell script in nuv's embedded shell (-c or a file)", shTool),
		tool("urlenc", "URL-encode KEY=VALUE pairs (or values) into a query string", urlencTool),
		tool("validate", "check a value (-e email, -n number, -r regex, ...); silent on success", validateTool),
	}
}

// tool is the command of one tool: its errors get nuv's one prefix, "nuv -NAME: ", except a
// message the user wrote (-validate's MESSAGE, -die's), which is printed as given.
func tool(name, short string, run func(context.Context, *cli.Env, []string) error) cli.Command {
	return cli.Command{Name: name, Short: short, Run: func(ctx context.Context, env *cli.Env, args []string) error {
		err := run(ctx, env, args)
		var um userMessage
		if errors.As(err, &um) {
			return err
		}
		return cli.Prefix("nuv -"+name, err)
	}}
}

// userMessage is a message the user gave a tool to print on failure: it is printed as the user
// wrote it, without the tool's prefix.
type userMessage string

func (m userMessage) Error() string { return string(m) }

// toolFlags is one invocation's FlagSet with the tool's help.
type toolFlags struct {
	*pflag.FlagSet
	tool  string
	usage cli.Usage
}

// newFlags returns a FlagSet for one invocation of tool name; synopsis (the arguments after
// "nuv -NAME"), desc and examples (command lines, one a line) make its help.
func newFlags(name, synopsis, desc, examples string) *toolFlags {
	return &toolFlags{FlagSet: cli.NewFlagSet("nuv -" + name), tool: name, usage: cli.Usage{
		Line:     strings.TrimSpace("nuv -" + name + " " + synopsis),
		Long:     strings.TrimSpace(desc),
		Examples: examples,
	}}
}

// parse parses args the one way (cli.Parse); with -h/--help it prints the help on env.Out and
// reports done. A bad flag is a usage error naming the tool and the flag.
func (f *toolFlags) parse(env *cli.Env, args []string) (done bool, err error) {
	return cli.Parse(env, f.FlagSet, f.usage, args)
}

// usagef is a usage error (exit 2) naming the tool, followed by its usage line.
func (f *toolFlags) usagef(format string, a ...any) error {
	return f.usage.Errorf("nuv -%s: %s", f.tool, fmt.Sprintf(format, a...))
}

// failf is a tool failure: the message on stderr (by the dispatcher) and exit 1.
func failf(tool, format string, a ...any) error {
	return cli.Exit(cli.ExitFailure, fmt.Errorf("nuv -%s: %s", tool, fmt.Sprintf(format, a...)))
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
func Version(v string) cli.Command { return version.Command(v) }

// Package cli holds the small contract every nuv command is written against: the I/O streams, the
// command type the dispatcher runs, the logger, the error types that carry exit codes (named:
// ExitUsage, ...), and one command plumbing: NewFlagSet and Parse (help to stdout, exit 0; a bad
// flag is a usage error naming the flag, with a suggestion or the accepted values, exit 2), Group
// for commands with verbs (no verb or help: the group's help on stdout, exit 0; an unknown verb: a
// usage error with a "did you mean", exit 2; errors prefixed `nuv GROUP VERB:`), and the option
// structs for flags that recur (TimeoutOption, ClusterOption, OutputOption: -o table|wide|json|yaml).
//
// Command packages (internal/<area>/<area>cmd) hold the commands; domain packages hold none. Each
// exports NewCommand() cli.Command, or NewCommands() []cli.Command when it holds several
// top-level commands.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// Streams are the standard streams of one nuv invocation. Commands never touch os.Stdin/out/err
// directly, so the whole CLI can be driven from tests.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// OSStreams returns the process's standard streams.
func OSStreams() Streams { return Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr} }

// Env is what a command gets besides its arguments.
type Env struct {
	Streams
	// Log is the logger for diagnostics (stderr); Quiet() in tests.
	Log Logger
	// Exe is the absolute path of the running nuv binary: tasks and child processes that call
	// "nuv" must run this one, never another found on PATH.
	Exe string
	// Getenv reads the environment (process environment; tests substitute a map).
	Getenv func(string) string
	// Dir is the working directory the command was started in.
	Dir string
}

// Command is one built-in nuv command (`nuv cluster`, `nuv kube`, ...).
type Command struct {
	// Name is the first word on the command line.
	Name string
	// Short is a one-line description shown in help.
	Short string
	// Run executes the command with the words after Name (for a group: Group.Run).
	Run func(ctx context.Context, env *Env, args []string) error
	// Group is the command's verbs when it is a group (`nuv registry up|down|status`); help,
	// completion and the convention test walk it.
	Group *Group
	// Args and FlagValues are the value kinds of a command without verbs (see Verb), for completion.
	Args       []string
	FlagValues map[string]string
}

// GroupCommand is the command that runs g.
func GroupCommand(name string, g *Group) Command {
	return Command{Name: name, Short: g.Short, Run: g.Run, Group: g}
}

// ExitError is an error that asks for a specific process exit code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit wraps err so that nuv exits with code. A nil err gives a silent exit with that code.
func Exit(code int, err error) error { return &ExitError{Code: code, Err: err} }

// UsageError marks bad command-line input; nuv prints it with the command's usage and exits 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef builds a UsageError.
func Usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// ExitCode maps an error to the process exit code: ExitOK for nil, ExitError's code, ExitUsage for
// usage errors, ExitFailure otherwise.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitFailure
}

// Package app is nuv's command dispatcher. main calls Main; tests call Run with their own streams,
// so the whole CLI runs in-process.
//
// A command line is resolved in this order:
//  1. the program name: run as "task" (a symlink to nuv) it is `nuv -task`; run through one of the
//     link names nuv puts on PATH for tasks, it is that built-in tool;
//  2. a first word starting with "-" is a built-in tool (`nuv -version`, `nuv -task ...`); `-v` is
//     `-version` and `-h` is `-help` (verbosity is NUV_VERBOSE=n, never a flag);
//  3. a built-in command (`nuv cluster ...`, `nuv kube ...`, `nuv up`, ...);
//  4. otherwise the words walk the task bundle (`nuv a b task ARGS`).
//
// Built-ins win over bundle folders of the same name; the shadowed folder is reported with a warning.
package app

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/version"
)

// Version is nuv's version (stamped at build time into internal/version).
var Version = version.Version

// Main runs nuv with the process's arguments and streams and returns the exit code.
func Main(ctx context.Context, args []string) int {
	streams := cli.OSStreams()
	return cli.Report(streams, Run(ctx, streams, args))
}

// errorLine is how nuv prints a failure (cli.ErrorLine).
func errorLine(err error) string { return cli.ErrorLine(err) }

// Run executes one nuv command line; args[0] is the program name.
func Run(ctx context.Context, streams cli.Streams, args []string) error {
	env, err := newEnv(streams)
	if err != nil {
		return err
	}
	return RunEnv(ctx, env, args)
}

// RunEnv is Run with a prepared environment (tests set Getenv, Dir and a quiet logger).
func RunEnv(ctx context.Context, env *cli.Env, args []string) error {
	if len(args) == 0 {
		args = []string{"nuv"}
	}
	prog := strings.TrimSuffix(filepath.Base(args[0]), ".exe")
	rest := args[1:]
	tools := toolTable()

	// 1. program name dispatch
	if prog == "task" {
		return tools["task"].Run(ctx, env, rest)
	}
	if prog != "nuv" {
		if t, ok := tools[prog]; ok {
			return t.Run(ctx, env, rest)
		}
	}
	if len(rest) == 0 {
		return printHelp(ctx, env)
	}
	first := rest[0]
	// 2. built-in tools
	if strings.HasPrefix(first, "-") && first != "-" {
		name := strings.TrimLeft(first, "-")
		if name == "h" || name == "help" {
			return printHelp(ctx, env)
		}
		if name == "v" {
			name = "version"
		}
		t, ok := tools[name]
		if !ok {
			return cli.Usagef("unknown tool %q; `nuv -help` lists them", first)
		}
		return t.Run(ctx, env, rest[1:])
	}
	// 3. built-in commands
	for _, c := range commandTable() {
		if c.Name == first {
			return cli.Prefix("nuv "+c.Name, c.Run(ctx, env, rest[1:]))
		}
	}
	// 4. the bundle
	return bundleDispatch(ctx, env, rest)
}

func newEnv(streams cli.Streams) (*cli.Env, error) { return cli.NewEnv(streams) }

// toolTable indexes the built-in tools by name (without the leading dash).
func toolTable() map[string]cli.Command {
	m := map[string]cli.Command{}
	for _, group := range [][]cli.Command{interpTools(), bundleTools(), imageTools(), emulatorTools()} {
		for _, t := range group {
			m[t.Name] = t
		}
	}
	return m
}

// commandTable lists the built-in commands in help order.
func commandTable() []cli.Command {
	var all []cli.Command
	all = append(all, clusterCommands()...)
	all = append(all, kubeCommands()...)
	all = append(all, deployCommands()...)
	all = append(all, addonsCommands()...)
	all = append(all, testCommands()...)
	all = append(all, imageCommands()...)
	all = append(all, completionCommands()...)
	all = append(all, emulatorCommands()...)
	return all
}

// BuiltinNames returns the names of built-in commands, which win over bundle folders of the same name.
func BuiltinNames() map[string]bool {
	m := map[string]bool{}
	for _, c := range commandTable() {
		m[c.Name] = true
	}
	return m
}

func printHelp(ctx context.Context, env *cli.Env) error {
	w := env.Out
	fmt.Fprintf(w, "nuv %s: the task interpreter for Kubernetes operator developers\n\n", Version)
	fmt.Fprintln(w, "Usage:")
	fmt.Fprintln(w, "  nuv <command> [args]        a built-in command")
	fmt.Fprintln(w, "  nuv <folder>... <task> ...  a task of the bundle")
	fmt.Fprintln(w, "  nuv -<tool> [args]          a built-in tool (-task runs Taskfiles like go-task)")
	fmt.Fprintln(w)
	cmds := commandTable()
	if len(cmds) > 0 {
		fmt.Fprintln(w, "Commands:")
		for _, c := range cmds {
			fmt.Fprintf(w, "  %-14s %s\n", c.Name, c.Short)
		}
		fmt.Fprintln(w)
	}
	if err := bundleHelp(ctx, env); err != nil {
		env.Log.Warnf("bundle: %v", err)
	}
	tools := toolTable()
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "Tools:")
	for _, n := range names {
		fmt.Fprintf(w, "  -%-13s %s\n", n, tools[n].Short)
	}
	return nil
}

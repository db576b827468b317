package emulatorcmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/version"
)

// Name is the emulators' program's file name (cmd/nuv-emulator), beside nuv-full in a release
// archive and in the cache's build of the full program.
const Name = "nuv-emulator"

// Main runs the emulators' program with the process's arguments and returns the exit code.
// It answers the command lines handed over unchanged by the slim nuv and by nuv-full (`nuv
// emulator VERB ...`), the same run by name (`nuv-emulator VERB ...`), and `-version`, which
// the nuv beside it asks when its build information names no version.
func Main(ctx context.Context, args []string) int {
	streams := cli.OSStreams()
	env, err := cli.NewEnv(streams)
	if err != nil {
		return cli.Report(streams, err)
	}
	// The detached servers `up` starts run this very program, whichever nuv handed the command
	// over: no hand-over (and no look-up of the full program) per server.
	if self, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		env.Exe = self
	}
	return cli.Report(streams, RunEnv(ctx, env, args))
}

// RunEnv is Main with a prepared environment (tests run the program in-process); args[0] is the
// program name. Errors read "nuv emulator VERB: ...", as `nuv emulator` always printed them.
func RunEnv(ctx context.Context, env *cli.Env, args []string) error {
	var rest []string
	if len(args) > 1 {
		rest = args[1:]
	}
	switch {
	case len(rest) > 0 && rest[0] == "emulator":
		rest = rest[1:]
	case len(rest) > 0 && strings.HasPrefix(rest[0], "-") && (strings.TrimLeft(rest[0], "-") == "version" || strings.TrimLeft(rest[0], "-") == "v"):
		return version.Command(version.Version).Run(ctx, env, rest[1:])
	}
	return cli.Prefix("nuv emulator", NewCommand().Run(ctx, env, rest))
}

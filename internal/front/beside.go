package front

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/version"
)

// FullName is the full program's file name in a release archive, beside nuv.
const FullName = "nuv-full"

// EnvProbe is set for a program beside nuv that is asked its version: a slim nuv asked so
// answers `-version` and nothing else (it never hands over or builds).
const EnvProbe = companion.EnvProbe

// Beside returns the full program installed next to the nuv binary self (an archive's layout:
// nuv, nuv-full and the `task` symlink side by side), or "" when there is none. self's symlinks
// are resolved first, so nuv run as a `task` link in another directory looks beside the real
// binary. The program found must be a build of the same version as mine; one of another version
// is an error naming both.
//
// The version comes from the program's Go build information (read, not run: about 60 µs). When
// that cannot tell (a -trimpath build, whose -ldflags the go command does not record, made where
// the go command found no git repository, such as a git worktree), the program is asked once
// (`nuv-full -version`, about a tenth of a second) and the answer is kept in cache, keyed by the
// program's path, size, modification time and inode.
func Beside(self string, mine version.Build, cache string) (string, error) {
	real, err := filepath.EvalSymlinks(self)
	if err != nil {
		return "", fmt.Errorf("locate the nuv binary %s: %w", self, err)
	}
	p := filepath.Join(filepath.Dir(real), FullName)
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if !companion.IsExecutable(p) {
		return "", fmt.Errorf("%s beside %s is not an executable file", p, real)
	}
	if me, err := os.Stat(real); err == nil && os.SameFile(me, st) {
		return "", nil // nuv itself, installed under the full program's name
	}
	record := companion.CheckedRecord(cache, mine.String(), real, p)
	if companion.IsFile(record) {
		return p, nil // checked before, and neither program changed since
	}
	theirs, err := companion.Identify(p, st, cache)
	if err != nil {
		return "", fmt.Errorf("%s beside nuv %s: %w", p, mine, err)
	}
	if !mine.Same(theirs) {
		return "", fmt.Errorf("%s is nuv-full %s, but this nuv (%s) is %s: the programs of one release go together; install nuv and nuv-full from one archive (or remove %s, or set %s to a build of ./cmd/nuv-full of version %s)",
			p, theirs, real, mine, p, EnvFull, mine)
	}
	companion.KeepRecord(record)
	return p, nil
}

// TaskName is the task program's file name (cmd/nuv-task: go-task and nuv's shell without the
// rest of the full program), installed beside nuv-full and built beside it in the cache.
const TaskName = "nuv-task"

// Task returns the program that runs Taskfiles for `task` and `nuv -task`: nuv-task beside the
// full program (in a release archive, in the cache's build, beside $NUV_FULL), which must be a
// build of the same nuv as the full program (an error names both); else, when there is none, the
// full program, which runs Taskfiles too.
func Task(ctx context.Context, b companion.Builder) (string, error) {
	full, err := Full(ctx, b)
	if err != nil {
		return "", err
	}
	p, err := companion.Sibling(full, TaskName, companion.CacheDir(os.Getenv), "install nuv, nuv-full and nuv-task from one archive")
	if err != nil || p != "" {
		return p, err
	}
	return full, nil
}

// EmulatorName is the emulators' program's file name (cmd/nuv-emulator: `nuv emulator`, the
// loopback AWS, Azure and GKE emulators, which the full program does not link), installed
// beside nuv-full and built beside it in the cache.
const EmulatorName = "nuv-emulator"

// Emulator returns the program that runs `nuv emulator`: nuv-emulator beside the full program
// (in a release archive, in the cache's build, beside $NUV_FULL), which must be a build of the
// same nuv as the full program (an error names both). There is no other: the full program hands
// `emulator` to the same program.
func Emulator(ctx context.Context, b companion.Builder) (string, error) {
	full, err := Full(ctx, b)
	if err != nil {
		return "", err
	}
	p, err := companion.Sibling(full, EmulatorName, companion.CacheDir(os.Getenv), "install nuv, nuv-full and nuv-emulator from one archive")
	if err != nil {
		return "", err
	}
	if p == "" {
		return "", fmt.Errorf("nuv's emulators are a program of their own, %s, and there is none beside nuv's full program %s: install nuv's programs from one archive, or build ./cmd/%s into %s",
			EmulatorName, full, EmulatorName, filepath.Dir(full))
	}
	return p, nil
}

// runsTaskfiles says whether the command line args runs Taskfiles: through a link named task, or
// as `nuv -task`.
func runsTaskfiles(args []string) bool {
	switch prog := strings.TrimSuffix(filepath.Base(args[0]), ".exe"); {
	case prog == "task":
		return true
	case prog == "nuv" && len(args) >= 2:
		return args[1] == "-task" || args[1] == "--task"
	}
	return false
}

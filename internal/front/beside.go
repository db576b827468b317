package front

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/version"
)

// FullName is the full program's file name in a release archive, beside nuv.
const FullName = "nuv-full"

// EnvProbe is set for a program beside nuv that is asked its version: a slim nuv asked so
// answers `-version` and nothing else (it never hands over or builds).
const EnvProbe = "NUV_VERSION_PROBE"

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
	theirs, err := identify(p, st, cache)
	if err != nil {
		return "", fmt.Errorf("%s beside nuv %s: %w", p, mine, err)
	}
	if !mine.Same(theirs) {
		return "", fmt.Errorf("%s is nuv-full %s, but this nuv (%s) is %s: the programs of one release go together; install nuv and nuv-full from one archive (or remove %s, or set %s to a build of ./cmd/nuv-full of version %s)",
			p, theirs, real, mine, p, EnvFull, mine)
	}
	return p, nil
}

// identify returns the Build of the nuv program p (st its file information): from its Go build
// information, or, when that names no version (a -trimpath build made outside git), from its own
// answer to -version (askVersion).
func identify(p string, st fs.FileInfo, cache string) (version.Build, error) {
	b, err := version.Of(p)
	if err != nil {
		return b, err
	}
	if b.Version == "" && b.Revision == "" {
		answer, err := askVersion(p, st, cache)
		if err != nil {
			return b, err
		}
		f := strings.Fields(answer)
		b.Version = f[0]
		if len(f) == 3 && f[1] == "commit" {
			b.Commit = f[2]
		}
	}
	return b, nil
}

// askVersion runs `p -version` (as nuv, with EnvProbe set), or reads its earlier answer from the
// cache, and returns the answer's one line.
func askVersion(p string, st fs.FileInfo, cache string) (string, error) {
	var ino, dev uint64
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		ino, dev = sys.Ino, uint64(sys.Dev)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\n%d\n%d\n%d\n%d\n", p, st.Size(), st.ModTime().UnixNano(), ino, dev))
	record := filepath.Join(cache, "nuv-full", "beside", hex.EncodeToString(sum[:])[:16])
	if data, err := os.ReadFile(record); err == nil && len(strings.Fields(string(data))) > 0 {
		return strings.TrimSpace(string(data)), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p, "-version")
	cmd.Args[0] = "nuv"
	cmd.Env = append(os.Environ(), EnvProbe+"=1")
	out, err := cmd.Output()
	answer := strings.TrimSpace(string(out))
	if err != nil || answer == "" || strings.Contains(answer, "\n") {
		return "", fmt.Errorf("%s beside nuv carries no version in its build information and `%s -version` answered %q (%v): install nuv and nuv-full from one archive", p, p, answer, err)
	}
	if err := os.MkdirAll(filepath.Dir(record), 0o755); err == nil {
		_ = fsutil.WriteFileAtomic(record, []byte(answer+"\n"), 0o644)
	}
	return answer, nil
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
	p := filepath.Join(filepath.Dir(full), TaskName)
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return full, nil
	}
	if err != nil || !companion.IsExecutable(p) {
		return "", fmt.Errorf("%s beside %s is not an executable file", p, full)
	}
	cache := companion.CacheDir(os.Getenv)
	fst, err := os.Stat(full)
	if err != nil {
		return "", err
	}
	fullBuild, err := identify(full, fst, cache)
	if err != nil {
		return "", fmt.Errorf("nuv's full program %s: %w", full, err)
	}
	taskBuild, err := identify(p, st, cache)
	if err != nil {
		return "", fmt.Errorf("%s beside %s: %w", p, full, err)
	}
	if !fullBuild.Same(taskBuild) {
		return "", fmt.Errorf("%s is nuv-task %s, but the full program beside it (%s) is %s: the programs of one release go together; install nuv, nuv-full and nuv-task from one archive (or remove %s)",
			p, taskBuild, full, fullBuild, p)
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

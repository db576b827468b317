// Package front is the slim `nuv` binary users run a hundred times a day. It answers the daily
// verbs that need little (`nuv -version`, the `nuv kube` verbs list, use N, env, current and
// detect, `nuv cluster list` and `nuv cluster status NAME` when every answer is on this machine:
// clusters.go, and `nuv status` when nuv's record of the operator's render is at hand: status.go)
// in its own process, and hands every other command line, unchanged, to
// nuv's full program (cmd/nuv-full: the task interpreter, providers, Helm, kind, ...) by exec(2):
// same process, same arguments, streams, signals and exit code; Taskfile runs go to the task
// program beside it (cmd/nuv-task) and `nuv emulator ...` to the emulators' (cmd/nuv-emulator).
//
// Why two programs: Go runs the package initialisers of everything a binary links, whether a
// command uses it or not. The full program links go-task (whose Taskfile error snippets link
// chroma's lexers and styles, and whose remote Taskfiles link go-getter with the cloud storage
// SDKs), the AWS, Azure and GCP SDKs, Karpenter's API types (which parse CRDs at init), Helm and
// client-go's scheme: about 100 ms of CPU and 140 MB before main runs. The front links none of
// them. `bench/startup` prints both side by side with the peers.
//
// Where the full program comes from, in order: $NUV_FULL (a path: a build of cmd/nuv-full that
// packagers or developers made themselves); else nuv-full next to the nuv binary (symlinks such
// as `task` resolved), as a release archive installs it, which must be a build of the same
// version (read from its Go build information, without running it: beside.go) — no Go is needed
// then; else a build cached by content under
// <cache>/nuv-full/<key>/ (package companion), made from the sources embedded in this binary the
// first time a command needs it, with progress on stderr. A small record per front binary (its
// path, size, modification time and inode) remembers which build it uses, so a warm hand-over
// costs a stat and a read, not a hash of the sources.
package front

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	nuvsrc "github.com/nuv-dev/nuv"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/kube/kubecmd"
	"github.com/nuv-dev/nuv/internal/version"
)

// EnvFull names a prebuilt full program to hand commands to instead of the cached build.
const EnvFull = "NUV_FULL"

// keepBuilds is how many builds of the full program the cache keeps (a developer who edits nuv
// makes one per edit; a build is about 260 MB).
const keepBuilds = 3

// Program is the full nuv program built from the sources embedded in this binary.
func Program() companion.Program {
	return companion.Program{
		Name:    "nuv-full",
		Sources: nuvsrc.FullSources,
		Dirs:    []string{"cmd/nuv-full", "..."},
		What:    "every command beyond the daily verbs: the task interpreter, providers, Helm, kind; the task and emulator programs beside it",
		Version: version.Version,
		Ldflags: "-X github.com/nuv-dev/nuv/internal/version.Version=" + version.Version,
		// Builds differ by the packages a developer edited: one source directory lets the Go
		// build cache compile only those again.
		SharedSrc:   true,
		IgnoreTests: true,
		// The task program: `task` runs Taskfiles there (Task), without the full program's start;
		// the emulators' program: `nuv emulator` runs there (Emulator), and the full program
		// links no emulator. Built in the same source directory after the full program, they
		// compile only the packages it does not import (the emulators'), nothing twice.
		Also: []string{"cmd/" + TaskName, "cmd/" + EmulatorName},
		// No estimate before one build was measured here (builds.json then gives one).
	}
}

// Main runs the slim nuv with the process's arguments and returns the exit code; it returns only
// when the command was one of the daily verbs or could not be handed over.
func Main(ctx context.Context, args []string) int {
	streams := cli.OSStreams()
	if len(args) == 0 {
		args = []string{"nuv"}
	}
	if runsTaskfiles(args) && os.Getenv(EnvProbe) == "" {
		// `task` first: nothing else is looked at before the task program runs
		b := companion.Builder{Getenv: os.Getenv, Log: cli.NewLogger(streams.Err, verbosity())}
		return cli.Report(streams, handOver(ctx, b, args))
	}
	if run := light(args); run != nil {
		env, err := cli.NewEnv(streams)
		if err != nil {
			return cli.Report(streams, err)
		}
		return cli.Report(streams, run(ctx, env, args[2:]))
	}
	if len(args) >= 3 && args[1] == "cluster" && (args[2] == "list" || args[2] == "status") && isNuv(args[0]) {
		if env, err := cli.NewEnv(streams); err == nil {
			if a, ok := answerCluster(ctx, env, args[2], args[3:]); ok {
				_, _ = streams.Out.Write(a.out)
				return cli.Report(streams, cli.Prefix("nuv cluster", a.err))
			}
		}
	}
	if len(args) >= 2 && args[1] == "status" && isNuv(args[0]) {
		if env, err := cli.NewEnv(streams); err == nil {
			if a, ok := answerStatus(ctx, env, args[2:]); ok {
				_, _ = streams.Out.Write(a.out)
				return 0
			}
		}
	}
	if os.Getenv(EnvProbe) != "" {
		// asked its version by a nuv it lies beside (Beside): answer that or nothing
		return cli.Report(streams, fmt.Errorf("%s is set: only -version is answered", EnvProbe))
	}
	b := companion.Builder{Getenv: os.Getenv, Log: cli.NewLogger(streams.Err, verbosity())}
	if len(args) == 2 && args[0] != "task" && args[1] == "-full" {
		full, err := Full(ctx, b)
		if err != nil {
			return cli.Report(streams, err)
		}
		fmt.Fprintln(streams.Out, full)
		return 0
	}
	return cli.Report(streams, handOver(ctx, b, args))
}

// light returns the in-process runner of a daily verb, or nil for a command line the full
// program answers. Only the program name "nuv" qualifies: run as `task` or as one of the tool
// names nuv links, the first word is that tool's argument.
func light(args []string) func(context.Context, *cli.Env, []string) error {
	if !isNuv(args[0]) || len(args) < 2 {
		return nil
	}
	switch first := args[1]; {
	case first == "kube" && (len(args) < 3 || args[2] != "watch"): // watch: client-go's informers, in the full program
		cmd := kubecmd.NewCommand(nil)
		return func(ctx context.Context, env *cli.Env, rest []string) error {
			return cli.Prefix("nuv kube", cmd.Run(ctx, env, rest))
		}
	case strings.HasPrefix(first, "-") && (strings.TrimLeft(first, "-") == "version" || strings.TrimLeft(first, "-") == "v"):
		return version.Command(version.Version).Run
	}
	return nil
}

// verbosity is NUV_VERBOSE's level (0 unset or not a number).
func verbosity() int {
	v, _ := strconv.Atoi(os.Getenv("NUV_VERBOSE"))
	return v
}

// isNuv reports whether the program runs by the name nuv (not as `task` or as a tool's link).
func isNuv(arg0 string) bool { return strings.TrimSuffix(filepath.Base(arg0), ".exe") == "nuv" }

// handOver execs the program that answers args, the task program (Task) for a command line
// that runs Taskfiles, the emulators' program (Emulator) for `nuv emulator`, else the full
// program; it returns only on failure.
func handOver(ctx context.Context, b companion.Builder, args []string) error {
	prog := Full
	switch {
	case runsTaskfiles(args):
		prog = Task
	case isNuv(args[0]) && len(args) >= 2 && args[1] == "emulator":
		prog = Emulator
	}
	full, err := prog(ctx, b)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locate the nuv binary: %w", err)
	}
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, cli.EnvFront+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, cli.EnvFront+"="+self)
	if err := syscall.Exec(full, args, env); err != nil {
		return fmt.Errorf("run nuv's program %s: %w", full, err)
	}
	return nil
}

// Full returns the path of the full program: $NUV_FULL; else nuv-full beside this binary (an
// installed release: Beside), refused when of another version; else the cached build of the
// embedded sources, made now if there is none (go install and go run users).
func Full(ctx context.Context, b companion.Builder) (string, error) {
	if p := os.Getenv(EnvFull); p != "" {
		if !companion.IsExecutable(p) {
			return "", fmt.Errorf("%s=%s: not an executable file", EnvFull, p)
		}
		return p, nil
	}
	cache := companion.CacheDir(os.Getenv)
	if self, err := os.Executable(); err == nil {
		p, err := Beside(self, version.Self(), cache)
		if err != nil {
			return "", err
		}
		if p != "" {
			return p, nil
		}
	}
	record, recordErr := recordPath(cache)
	if recordErr == nil {
		if data, err := os.ReadFile(record); err == nil {
			if p := strings.TrimSpace(string(data)); companion.IsExecutable(p) {
				return p, nil
			}
		}
	}
	prog := Program()
	bin, err := b.Build(ctx, prog, false)
	if err != nil {
		return "", fmt.Errorf("nuv's full program (everything beyond `nuv kube` and `nuv -version`) is built once from the sources in this binary with Go: %w (or set %s to a build of ./cmd/nuv-full)", err, EnvFull)
	}
	if recordErr == nil {
		if err := os.MkdirAll(filepath.Dir(record), 0o755); err == nil {
			_ = fsutil.WriteFileAtomic(record, []byte(bin+"\n"), 0o644)
		}
		companion.PruneRecords(filepath.Dir(record))
	}
	if removed, err := b.Prune(prog, keepBuilds); err == nil && len(removed) > 0 {
		b.Log.V(1).Infof("removed %d older builds of nuv-full", len(removed))
	}
	return bin, nil
}

// recordPath is where the build this very front binary uses is remembered: keyed by the
// binary's path, size, modification time, inode and device, so a rebuilt or replaced nuv looks
// its build up again.
func recordPath(cache string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	st, err := os.Stat(self)
	if err != nil {
		return "", err
	}
	var ino, dev uint64
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		ino, dev = sys.Ino, uint64(sys.Dev)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\n%d\n%d\n%d\n%d\n", self, st.Size(), st.ModTime().UnixNano(), ino, dev))
	return filepath.Join(cache, "nuv-full", "fronts", hex.EncodeToString(sum[:])[:16]), nil
}

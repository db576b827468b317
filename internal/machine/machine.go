// Package machine is what the bootstrap of a self-managed cluster sees of one machine: a name, the
// private address the other machines reach it on, and four operations (run a script as root, write
// a file atomically, read a file). Two implementations reach a machine: SSH, over
// golang.org/x/crypto/ssh with the machine's host key pinned (nuv made the key and gave it to the
// machine in its user data), and Exec, over a container runtime's `exec` (for tests and for the
// emulator's own machines). Both run a script the same way: the script travels on the standard
// input ahead of the caller's data, never on a command line, so a script that carries a secret
// shows neither in the machine's process list nor in an error.
//
// The keys nuv makes for machines (ed25519 host keys and nuv's client key) and their encodings
// (OpenSSH private-key PEM, authorized_keys lines, SHA256 fingerprints) are here too.
package machine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Machine is one machine of a self-managed cluster.
type Machine interface {
	// Name is the machine's instance ID or container name.
	Name() string
	// Address is the private IPv4 address the other machines reach it on.
	Address() string
	// Run runs script with `sh -e` as root; stdin (optional) is the script's standard input. It
	// returns the script's standard output. A script that fails is a *RunError carrying the exit
	// code and the tail of stderr, never the script (scripts may carry secrets).
	Run(ctx context.Context, script string, stdin io.Reader) ([]byte, error)
	// WriteFile writes data to path on the machine atomically (a temporary file beside it,
	// renamed over it) with mode; missing parent directories are made.
	WriteFile(ctx context.Context, path string, data []byte, mode fs.FileMode) error
	// ReadFile reads path on the machine; a missing file is an error wrapping fs.ErrNotExist.
	ReadFile(ctx context.Context, path string) ([]byte, error)
}

// stderrTail is how much of a failed script's stderr a RunError keeps.
const stderrTail = 4096

// RunError is a script that ran on a machine and failed.
type RunError struct {
	// Machine is the machine's name.
	Machine string
	// ExitCode is the script's exit status; -1 when it ended without one (killed by a signal,
	// the connection lost).
	ExitCode int
	// Stderr is the end of what the script wrote to stderr (at most 4 KiB).
	Stderr string
}

func (e *RunError) Error() string {
	what := "exited with code " + strconv.Itoa(e.ExitCode)
	if e.ExitCode < 0 {
		what = "ended without an exit status"
	}
	msg := fmt.Sprintf("script on machine %s %s", e.Machine, what)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

// tail keeps the end of b, at most stderrTail bytes.
func tail(b []byte) string {
	if len(b) > stderrTail {
		b = b[len(b)-stderrTail:]
	}
	return string(b)
}

// runner runs one shell command line on a machine with stdin and returns its stdout, or a
// *RunError; it is what SSH and Exec differ in.
type runner interface {
	name() string
	command(ctx context.Context, cmdline string, stdin io.Reader) ([]byte, error)
}

// wrapper is the command line every script runs under: it reads the script (n bytes) from its
// standard input into a private temporary file (dd with a block size of one reads no byte past
// it), runs it with `sh -e`, the rest of the standard input being the script's, and removes it.
func wrapper(n int) string {
	return `umask 077; f=$(mktemp) || exit 125; dd of="$f" bs=1 count=` + strconv.Itoa(n) +
		` 2>/dev/null || { rm -f "$f"; exit 125; }; sh -e "$f"; rc=$?; rm -f "$f"; exit $rc`
}

// run runs script on r the way Machine.Run says.
func run(ctx context.Context, r runner, script string, stdin io.Reader) ([]byte, error) {
	in := io.Reader(strings.NewReader(script))
	if stdin != nil {
		in = io.MultiReader(in, stdin)
	}
	return r.command(ctx, wrapper(len(script)), in)
}

// Quote quotes s for a POSIX shell: one single-quoted word.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkPath refuses a path that is not absolute and clean (the operations address files by
// absolute path only).
func checkPath(machine, p string) error {
	if !path.IsAbs(p) || path.Clean(p) != p || p == "/" {
		return fmt.Errorf("machine %s: path %q is not an absolute, clean file path", machine, p)
	}
	return nil
}

// writeScript is the script of WriteFile: the data is its standard input.
func writeScript(p string, mode fs.FileMode) string {
	dir := path.Dir(p)
	return fmt.Sprintf(`d=%s
mkdir -p "$d"
t=$(mktemp "$d/.nuv-write.XXXXXX")
trap 'rm -f "$t"' EXIT
cat > "$t"
chmod %04o "$t"
mv -f "$t" %s
trap - EXIT
`, Quote(dir), mode.Perm(), Quote(p))
}

// notExistCode is the exit status of readScript for a missing file.
const notExistCode = 66

func readScript(p string) string {
	return fmt.Sprintf("[ -e %s ] || exit %d\ncat -- %s\n", Quote(p), notExistCode, Quote(p))
}

func writeFile(ctx context.Context, r runner, p string, data []byte, mode fs.FileMode) error {
	if err := checkPath(r.name(), p); err != nil {
		return err
	}
	if mode&^fs.ModePerm != 0 {
		return fmt.Errorf("machine %s: write %s: mode %v is not a plain file's permissions", r.name(), p, mode)
	}
	if _, err := run(ctx, r, writeScript(p, mode), bytes.NewReader(data)); err != nil {
		return fmt.Errorf("write %s on machine %s: %w", p, r.name(), err)
	}
	return nil
}

func readFile(ctx context.Context, r runner, p string) ([]byte, error) {
	if err := checkPath(r.name(), p); err != nil {
		return nil, err
	}
	out, err := run(ctx, r, readScript(p), nil)
	if err != nil {
		var re *RunError
		if errors.As(err, &re) && re.ExitCode == notExistCode {
			return nil, &fs.PathError{Op: "read", Path: r.name() + ":" + p, Err: fs.ErrNotExist}
		}
		return nil, fmt.Errorf("read %s on machine %s: %w", p, r.name(), err)
	}
	return out, nil
}

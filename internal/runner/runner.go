// Package runner is how nuv runs external programs (go, git, docker, the operator, nuv itself):
// one Cmd description, Run and Output for programs nuv waits for, Start for those it supervises,
// and one error, *RunError, that keeps the program's command line, exit status and the end of its
// stderr, so a failure says what failed and why without a second run. kind's exec.Cmder and
// RunError are the model. FindGo is the one way nuv finds the Go toolchain.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Cmd is one run of an external program. The zero values inherit: Dir is nuv's working directory,
// Env nil is nuv's environment, nil streams are discarded (Stdin reads nothing).
type Cmd struct {
	// Path is the program: a path, or a name looked up on PATH.
	Path string
	Args []string
	Dir  string
	// Env is the whole environment of the program (nil: nuv's own).
	Env    []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Group runs the program in its own process group; a cancelled context then ends the whole
	// group: SIGTERM, and SIGKILL after Grace (default 3s). Without Group a cancelled context
	// kills the program alone.
	Group bool
	Grace time.Duration
	// Session starts the program in a session of its own (setsid): it outlives nuv and the
	// terminal's Ctrl-C never reaches it (detached processes, see internal/proc). Use
	// context.Background with it and give files as Stdout/Stderr: nothing is piped through nuv,
	// so a RunError then has no stderr.
	Session bool
}

// stderrTail is how much of a program's stderr a RunError keeps.
const stderrTail = 4096

// RunError is the error of a program that could not start or did not succeed.
type RunError struct {
	// Command is the program and its arguments.
	Command []string
	// ExitCode is the program's exit status; -1 when it did not start or was killed by a signal.
	ExitCode int
	// Stderr is the end of what the program wrote to stderr (at most 4 KiB).
	Stderr []byte
	// Err is the underlying error (*exec.ExitError, a start failure, the context's error).
	Err error
}

func (e *RunError) Error() string {
	msg := fmt.Sprintf("%s: %v", shortCommand(e.Command), e.Err)
	if s := strings.TrimSpace(string(e.Stderr)); s != "" {
		msg += "\n" + s
	}
	return msg
}

func (e *RunError) Unwrap() error { return e.Err }

// ExitCode is the exit status of the program behind err (a *RunError anywhere in its chain), or -1.
func ExitCode(err error) int {
	var re *RunError
	if errors.As(err, &re) {
		return re.ExitCode
	}
	return -1
}

// shortCommand renders a command line for a message: the program's base name and its arguments.
func shortCommand(argv []string) string {
	if len(argv) == 0 {
		return "(no command)"
	}
	return strings.Join(append([]string{filepath.Base(argv[0])}, argv[1:]...), " ")
}

// Process is a program started by Start.
type Process struct {
	cmd  *exec.Cmd
	tail *tailBuffer
	argv []string
	ctx  context.Context
}

// PID is the program's process id (and its process group's, with Cmd.Group).
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Wait waits for the program to end; a failure is a *RunError.
func (p *Process) Wait() error {
	err := p.cmd.Wait()
	if err == nil {
		return nil
	}
	re := &RunError{Command: p.argv, ExitCode: -1, Stderr: p.tail.Bytes(), Err: err}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		re.ExitCode = ee.ExitCode()
	}
	if p.ctx.Err() != nil {
		re.Err = fmt.Errorf("%w (%v)", p.ctx.Err(), err)
	}
	return re
}

// Signal sends sig to the program, or to its whole process group with Cmd.Group.
func (p *Process) Signal(sig syscall.Signal) error {
	if p.cmd.SysProcAttr != nil && (p.cmd.SysProcAttr.Setpgid || p.cmd.SysProcAttr.Setsid) {
		return syscall.Kill(-p.cmd.Process.Pid, sig)
	}
	return p.cmd.Process.Signal(sig)
}

// Start starts c; the context ends it as Cmd.Group says.
func Start(ctx context.Context, c Cmd) (*Process, error) {
	argv := append([]string{c.Path}, c.Args...)
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	cmd.Stdin, cmd.Stdout = c.Stdin, c.Stdout
	tail := &tailBuffer{max: stderrTail}
	if c.Stderr != nil {
		cmd.Stderr = io.MultiWriter(c.Stderr, tail)
	} else {
		cmd.Stderr = tail
	}
	if c.Stderr != nil && same(c.Stderr, c.Stdout) {
		cmd.Stdout = cmd.Stderr // one writer for both keeps their order; the tail sees both
	}
	if c.Session {
		// A detached program writes straight to its files: no pipe through nuv, which exits.
		cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
	}
	if c.Session {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if c.Group {
		grace := c.Grace
		if grace <= 0 {
			grace = 3 * time.Second
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error {
			err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			go func(pid int) {
				time.Sleep(grace)
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}(cmd.Process.Pid)
			return err
		}
		cmd.WaitDelay = grace + time.Second
	}
	if err := cmd.Start(); err != nil {
		return nil, &RunError{Command: argv, ExitCode: -1, Err: err}
	}
	return &Process{cmd: cmd, tail: tail, argv: argv, ctx: ctx}, nil
}

// Run runs c to its end; a failure is a *RunError.
func Run(ctx context.Context, c Cmd) error {
	p, err := Start(ctx, c)
	if err != nil {
		return err
	}
	return p.Wait()
}

// Output runs c and returns its standard output (c.Stdout is ignored); a failure is a *RunError.
func Output(ctx context.Context, c Cmd) ([]byte, error) {
	var out bytes.Buffer
	if same(c.Stderr, c.Stdout) {
		c.Stderr = nil
	}
	c.Stdout = &out
	err := Run(ctx, c)
	return out.Bytes(), err
}

// same tells whether two writers are the same one (false for values that cannot be compared).
func same(a, b io.Writer) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a != nil && a == b
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte { return append([]byte(nil), t.b...) }

// FindGo is the Go toolchain nuv compiles with: `go` on PATH (as getenv sees it), else
// $GOROOT/bin/go, else the toolchain nuv itself was built with, else /usr/local/go/bin/go. The
// error says what to install. getenv nil reads the process environment.
func FindGo(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, dir := range filepath.SplitList(getenv("PATH")) {
		if dir == "" {
			continue
		}
		if p := filepath.Join(dir, "go"); isExecutable(p) {
			return p, nil
		}
	}
	candidates := []string{}
	if root := getenv("GOROOT"); root != "" {
		candidates = append(candidates, filepath.Join(root, "bin", "go"))
	}
	if root := runtime.GOROOT(); root != "" { //nolint:staticcheck // the toolchain nuv was built with, when still installed
		candidates = append(candidates, filepath.Join(root, "bin", "go"))
	}
	candidates = append(candidates, "/usr/local/go/bin/go")
	for _, p := range candidates {
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", errors.New("no Go toolchain found (no `go` on PATH, in $GOROOT/bin or /usr/local/go/bin): install Go 1.26 or put it on PATH")
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// Package proc manages the detached processes nuv starts — the components of a local cluster, the
// operator run on the host, the loopback registry. Each is recorded by pid and start time (clock
// ticks since boot, /proc/PID/stat field 22), so a recycled pid is never mistaken for the recorded
// process and never signalled.
package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/runner"
)

// Record identifies a process: its pid and, when known (non-zero), its start time. A record with
// Start 0 matches whichever process has the pid.
type Record struct {
	PID   int
	Start uint64
}

// ReadRecord reads a pid file: "PID [START]". Files holding only a PID are accepted.
func ReadRecord(path string) (Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Record{}, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return Record{}, fmt.Errorf("%s: empty pid file", path)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return Record{}, fmt.Errorf("%s: bad pid %q", path, f[0])
	}
	r := Record{PID: pid}
	if len(f) > 1 {
		r.Start, _ = strconv.ParseUint(f[1], 10, 64)
	}
	return r, nil
}

// WriteRecord atomically writes the pid file of pid, "PID START\n" (START is 0 when the start time
// cannot be read).
func WriteRecord(path string, pid int) error {
	_, start, _ := Stat(pid)
	return fsutil.WriteFileAtomic(path, []byte(fmt.Sprintf("%d %d\n", pid, start)), 0o644)
}

// Stat returns the state letter (R, S, Z, ...) and start time of pid from /proc.
func Stat(pid int) (state byte, start uint64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field 22 (starttime) is f[19].
	if len(f) < 20 {
		return 0, 0, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
	}
	return f[0][0], start, nil
}

// Alive reports whether the recorded process still runs (zombies count as dead). Without /proc
// (macOS) it only asks whether the pid exists; recycling then goes undetected.
func (r Record) Alive() bool {
	if r.PID <= 0 {
		return false
	}
	st, start, err := Stat(r.PID)
	if errors.Is(err, os.ErrNotExist) && !haveProc() {
		err := syscall.Kill(r.PID, 0)
		return err == nil || errors.Is(err, syscall.EPERM)
	}
	if err != nil || st == 'Z' || st == 'X' {
		return false
	}
	return r.Start == 0 || r.Start == start
}

func haveProc() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// Stop ends the recorded process: SIGTERM, then SIGKILL if it still runs after grace. It signals
// only the recorded process, and reports whether one was running. It returns early with ctx's error
// when ctx ends during the grace period.
func (r Record) Stop(ctx context.Context, grace time.Duration) (bool, error) {
	if !r.Alive() {
		return false, nil
	}
	if err := syscall.Kill(r.PID, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return true, nil
		}
		return false, fmt.Errorf("stop pid %d: %w", r.PID, err)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !r.Alive() {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	_ = syscall.Kill(r.PID, syscall.SIGKILL)
	for i := 0; i < 100 && r.Alive(); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	return true, nil
}

// Command is a detached process to start.
type Command struct {
	Path string
	Args []string
	Env  []string // added to DaemonEnv(os.Environ()): what the process needs beyond the user's selection
	Dir  string   // working directory ("": nuv's)
	// Log is the file stdout and stderr are appended to, created with LogMode (0: 0644); its
	// directory is created 0700 when LogMode has no group/other bits, else 0755.
	Log     string
	LogMode os.FileMode
	// Header, when set, is written to the log as a line of its own before the process starts.
	Header string
}

// Process is a process started by Launch.
type Process struct {
	Record
	// Exited receives the process's exit (cmd.Wait's result) if it ends while nuv still runs.
	Exited <-chan error
	p      *runner.Process
}

// Kill ends the process at once (for a start that is abandoned).
func (p Process) Kill() error { return p.p.Signal(syscall.SIGKILL) }

// Launch starts c as its own session, so it outlives nuv and ignores the terminal's Ctrl-C, with its
// output appended to c.Log and an environment reduced to DaemonEnv plus c.Env (a detached process
// outlives the command that started it: it keeps the user's choice of tools and endpoints, never
// the project's secrets). The child is reaped if it dies while nuv still runs.
func Launch(c Command) (Process, error) {
	mode, dirMode := c.LogMode, os.FileMode(0o755)
	if mode == 0 {
		mode = 0o644
	}
	if mode&0o077 == 0 {
		dirMode = 0o700
	}
	if err := os.MkdirAll(filepath.Dir(c.Log), dirMode); err != nil {
		return Process{}, fmt.Errorf("log directory: %w", err)
	}
	lf, err := os.OpenFile(c.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, mode)
	if err != nil {
		return Process{}, fmt.Errorf("open log: %w", err)
	}
	defer lf.Close()
	if c.Header != "" {
		fmt.Fprintln(lf, c.Header)
	}
	rp, err := runner.Start(context.Background(), runner.Cmd{Path: c.Path, Args: c.Args, Dir: c.Dir,
		Env: append(DaemonEnv(os.Environ()), c.Env...), Stdout: lf, Stderr: lf, Session: true})
	if err != nil {
		return Process{}, fmt.Errorf("start %s: %w", c.Path, err)
	}
	p := Process{Record: Record{PID: rp.PID()}, p: rp}
	_, p.Start, _ = Stat(p.PID)
	exited := make(chan error, 1)
	go func() { exited <- rp.Wait() }()
	p.Exited = exited
	return p, nil
}

package local

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// pidRecord is the content of a pids/<name>.pid file: "PID [START]", START being the process start
// time in clock ticks since boot (/proc/PID/stat field 22), so a recycled PID is never mistaken for
// the recorded process. Files holding only a PID are accepted.
type pidRecord struct {
	PID   int
	Start uint64
}

// RegisterProcess records a process started for the local cluster (for example the operator run on
// the host by `nuv run`) as <statedir>/pids/<name>.pid, so `nuv cluster stop` and `delete` stop it.
func RegisterProcess(home, cluster, name string, pid int) error {
	if err := ValidName(name); err != nil {
		return fmt.Errorf("register process: %w", err)
	}
	if _, err := os.Stat(StateDir(home, cluster)); err != nil {
		return fmt.Errorf("register process %s: cluster %q: %w", name, cluster, err)
	}
	return writePID(filepath.Join(PIDDir(home, cluster), name+".pid"), pid)
}

func writePID(path string, pid int) error {
	start, _ := procStart(pid)
	return fsutil.WriteFileAtomic(path, []byte(fmt.Sprintf("%d %d\n", pid, start)), 0o644)
}

func readPID(path string) (pidRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return pidRecord{}, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return pidRecord{}, fmt.Errorf("%s: empty pid file", path)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return pidRecord{}, fmt.Errorf("%s: bad pid %q", path, f[0])
	}
	r := pidRecord{PID: pid}
	if len(f) > 1 {
		r.Start, _ = strconv.ParseUint(f[1], 10, 64)
	}
	return r, nil
}

// procStat returns the state letter and start time of pid from /proc.
func procStat(pid int) (state byte, start uint64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0, 0, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+2:])
	// f[0] is field 3 (state); field 22 (starttime) is f[19].
	if len(f) < 20 {
		return 0, 0, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	return f[0][0], start, err
}

func procStart(pid int) (uint64, error) {
	_, start, err := procStat(pid)
	return start, err
}

// alive reports whether the recorded process still runs (zombies count as dead).
func (r pidRecord) alive() bool {
	st, start, err := procStat(r.PID)
	if errors.Is(err, os.ErrNotExist) && !haveProc() {
		// No /proc (macOS): signal 0 tells whether the pid exists; recycling goes undetected.
		return syscall.Kill(r.PID, 0) == nil
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

// stop sends SIGTERM, waits up to grace, then SIGKILL. It only signals the recorded process.
func (r pidRecord) stop(grace time.Duration) {
	if !r.alive() {
		return
	}
	_ = syscall.Kill(r.PID, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !r.alive() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(r.PID, syscall.SIGKILL)
	for i := 0; i < 100 && r.alive(); i++ {
		time.Sleep(20 * time.Millisecond)
	}
}

// launch starts one component as its own session (it outlives nuv and ignores the terminal's
// Ctrl-C), with stdout and stderr appended to logFile, and records it in pidFile.
func launch(bin string, args, env []string, dir, logFile, pidFile string) (int, error) {
	if err := os.MkdirAll(filepath.Dir(logFile), 0o700); err != nil {
		return 0, err
	}
	lf, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("open log: %w", err)
	}
	defer lf.Close()
	fmt.Fprintf(lf, "--- %s nuv: starting %s\n", time.Now().UTC().Format(time.RFC3339), filepath.Base(pidFile))
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = lf
	cmd.Stderr = lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", filepath.Base(pidFile), err)
	}
	pid := cmd.Process.Pid
	// Reap the child if it dies while this process lives (tests start clusters in-process).
	go func() { _ = cmd.Wait() }()
	if err := writePID(pidFile, pid); err != nil {
		_ = cmd.Process.Kill()
		return 0, err
	}
	return pid, nil
}

// pidFiles lists the pid files of a cluster by component name.
func pidFiles(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "pids"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return map[string]string{}, nil
		}
		return nil, err
	}
	m := map[string]string{}
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".pid"); ok && !e.IsDir() {
			m[n] = filepath.Join(dir, "pids", e.Name())
		}
	}
	return m, nil
}

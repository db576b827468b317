package localkube

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/proc"
)

// RegisterProcess records a process started for the local cluster (for example the operator run on
// the host by `nuv run`) as <statedir>/pids/<name>.pid, so `nuv cluster stop` and `delete` stop it.
func RegisterProcess(home, cluster, name string, pid int) error {
	if err := ValidName(name); err != nil {
		return fmt.Errorf("register process: %w", err)
	}
	if _, err := os.Stat(StateDir(home, cluster)); err != nil {
		return fmt.Errorf("register process %s: cluster %q: %w", name, cluster, err)
	}
	return proc.WriteRecord(filepath.Join(PIDDir(home, cluster), name+".pid"), pid)
}

// launch starts one component as its own session (it outlives nuv and ignores the terminal's
// Ctrl-C), with stdout and stderr appended to logFile, and records it in pidFile.
func launch(bin string, args, env []string, dir, logFile, pidFile string) (int, error) {
	name := filepath.Base(pidFile)
	p, err := proc.Launch(proc.Command{Path: bin, Args: args, Env: env, Dir: dir, Log: logFile, LogMode: 0o600,
		Header: fmt.Sprintf("--- %s nuv: starting %s", time.Now().UTC().Format(time.RFC3339), name)})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", strings.TrimSuffix(name, ".pid"), err)
	}
	if err := proc.WriteRecord(pidFile, p.PID); err != nil {
		_ = p.Kill()
		return 0, err
	}
	return p.PID, nil
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

package emucore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/proc"
)

// Record is what a serving emulator writes to <dir>/server.json once it listens (never a secret).
// The emulators' own Process types have the same fields and convert to and from it.
type Record struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	Addr  string `json:"addr"` // 127.0.0.1:port
	Dir   string `json:"dir"`
}

func (r Record) proc() proc.Record { return proc.Record{PID: r.PID, Start: r.Start} }

// ProcessFile is the record's path in dir.
func ProcessFile(dir string) string { return filepath.Join(dir, "server.json") }

// WriteRecord records r atomically in dir.
func WriteRecord(dir string, r Record) error {
	b, _ := json.MarshalIndent(r, "", "  ")
	return fsutil.WriteFileAtomic(ProcessFile(dir), append(b, '\n'), 0o644)
}

// ReadRecord reads the record in dir; os.ErrNotExist when the emulator was never started.
func ReadRecord(dir string) (Record, error) {
	var r Record
	b, err := os.ReadFile(ProcessFile(dir))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", ProcessFile(dir), err)
	}
	return r, nil
}

// Daemon is one kind of emulator run as a detached process.
type Daemon struct {
	// Name names it in errors: "emulator", "azure emulator".
	Name string
	// PortEnv is the variable that chose the port, for LoopbackAddr's errors.
	PortEnv string
	// Ping asks the emulator of dir listening at addr for its health.
	Ping func(ctx context.Context, dir, addr string) error
}

// UpOptions say how to start the emulator process.
type UpOptions struct {
	Dir  string
	Port int // 0: any free port
	// Command runs the serving process; Up appends --dir and --addr.
	Command []string
	Env     []string
	Timeout time.Duration // 0: proc.LaunchReady's default
}

// Status reports whether the recorded emulator in dir runs and answers.
func (d Daemon) Status(ctx context.Context, dir string) (Record, bool, error) {
	r, err := ReadRecord(dir)
	if errors.Is(err, os.ErrNotExist) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	if !r.proc().Alive() {
		return r, false, nil
	}
	return r, d.Ping(ctx, dir, r.Addr) == nil, nil
}

// Up starts the emulator as a detached process unless it runs, and returns its record and whether
// it started it. Its log is <dir>/emulator.log (0600).
func (d Daemon) Up(ctx context.Context, o UpOptions) (Record, bool, error) {
	if r, ok, err := d.Status(ctx, o.Dir); err == nil && ok {
		return r, false, nil
	}
	if len(o.Command) == 0 {
		return Record{}, false, fmt.Errorf("%s up: no command to run the emulator", d.Name)
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return Record{}, false, fmt.Errorf("%s directory %s: %w", d.Name, o.Dir, err)
	}
	addr, err := proc.LoopbackAddr(o.Port, d.PortEnv)
	if err != nil {
		return Record{}, false, fmt.Errorf("%s %w", d.Name, err)
	}
	_ = os.Remove(ProcessFile(o.Dir))
	args := append(append([]string{}, o.Command[1:]...), "--dir", o.Dir, "--addr", addr)
	var r Record
	_, err = proc.LaunchReady(ctx, proc.Command{Path: o.Command[0], Args: args, Env: o.Env, Log: filepath.Join(o.Dir, "emulator.log"), LogMode: 0o600},
		"the "+d.Name, o.Timeout, func(ctx context.Context, p proc.Process) bool {
			var err error
			r, err = ReadRecord(o.Dir)
			return err == nil && r.PID == p.PID && d.Ping(ctx, o.Dir, r.Addr) == nil
		})
	if err != nil {
		return Record{}, false, err
	}
	return r, true, nil
}

// Down stops the recorded emulator (SIGTERM, then SIGKILL after 10s) and reports whether one ran.
// Its state stays on disk, and the control planes of its clusters keep running.
func (d Daemon) Down(ctx context.Context, dir string) (bool, error) {
	r, err := ReadRecord(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer os.Remove(ProcessFile(dir))
	stopped, err := r.proc().Stop(ctx, 10*time.Second)
	if err != nil {
		return false, fmt.Errorf("stop the %s: %w", d.Name, err)
	}
	return stopped, nil
}

// Ping asks the emulator at scheme://addr for its health (/_nuv/health) through c, for at most
// 2s; what names it in the error of an answer other than 200 ("GKE emulator").
func Ping(ctx context.Context, c *http.Client, scheme, addr, what string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+addr+"/_nuv/health", nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s at %s answered HTTP %d", what, addr, resp.StatusCode)
	}
	return nil
}

package emulator

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

// DefaultPort is where `nuv emulator up` listens unless NUV_EMULATOR_PORT says otherwise. It
// should stay the same across restarts: the control planes of EKS clusters call the emulator there.
const DefaultPort = 5002

// Dir is the emulator's directory under nuv's home.
func Dir(home string) string { return filepath.Join(home, "emulator") }

// Process is what `nuv emulator serve` records once it listens (server.json; never the secret).
type Process struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	Addr  string `json:"addr"` // 127.0.0.1:port
	Dir   string `json:"dir"`
}

// URL is the endpoint clients use (AWS_ENDPOINT_URL).
func (p Process) URL() string { return "http://" + p.Addr }

func (p Process) record() proc.Record { return proc.Record{PID: p.PID, Start: p.Start} }

func processFile(dir string) string { return filepath.Join(dir, "server.json") }

// WriteProcess records p atomically in dir.
func WriteProcess(dir string, p Process) error {
	b, _ := json.MarshalIndent(p, "", "  ")
	return fsutil.WriteFileAtomic(processFile(dir), append(b, '\n'), 0o644)
}

// ReadProcess reads the recorded process; os.ErrNotExist when the emulator was never started.
func ReadProcess(dir string) (Process, error) {
	var p Process
	b, err := os.ReadFile(processFile(dir))
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("%s: %w", processFile(dir), err)
	}
	return p, nil
}

// Credentials are what clients need to call the emulator.
type Credentials struct {
	AccessKeyID, SecretAccessKey, Account, Region string
}

// ReadCredentials reads the credentials the emulator in dir issued (os.ErrNotExist before its
// first start).
func ReadCredentials(dir string) (Credentials, error) {
	st, err := loadState(dir)
	if err != nil {
		return Credentials{}, err
	}
	return Credentials{st.AccessKeyID, st.SecretAccessKey, st.Account, st.Region}, nil
}

// Status reports whether the recorded emulator runs and answers.
func Status(ctx context.Context, dir string) (Process, bool, error) {
	p, err := ReadProcess(dir)
	if errors.Is(err, os.ErrNotExist) {
		return p, false, nil
	}
	if err != nil {
		return p, false, err
	}
	if !p.record().Alive() {
		return p, false, nil
	}
	return p, Ping(ctx, p.Addr) == nil, nil
}

// Ping asks the emulator at addr for its health.
func Ping(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/_nuv/health", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("emulator at %s answered HTTP %d", addr, resp.StatusCode)
	}
	return nil
}

// UpOptions say how to start the emulator process.
type UpOptions struct {
	Dir  string
	Port int // 0: any free port
	// Command runs `emulator serve`; Up appends --dir and --addr.
	Command []string
	Env     []string
	Timeout time.Duration // default 15s
}

// Up starts the emulator as a detached process unless it runs, and returns its record.
func Up(ctx context.Context, o UpOptions) (Process, bool, error) {
	if p, ok, err := Status(ctx, o.Dir); err == nil && ok {
		return p, false, nil
	}
	if len(o.Command) == 0 {
		return Process{}, false, errors.New("emulator up: no command to run the emulator")
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return Process{}, false, fmt.Errorf("emulator directory %s: %w", o.Dir, err)
	}
	addr, err := proc.LoopbackAddr(o.Port, "NUV_EMULATOR_PORT")
	if err != nil {
		return Process{}, false, fmt.Errorf("emulator %w", err)
	}
	logPath := filepath.Join(o.Dir, "emulator.log")
	_ = os.Remove(processFile(o.Dir))
	args := append(append([]string{}, o.Command[1:]...), "--dir", o.Dir, "--addr", addr)
	var r Process
	_, err = proc.LaunchReady(ctx, proc.Command{Path: o.Command[0], Args: args, Env: o.Env, Log: logPath, LogMode: 0o600},
		"the emulator", o.Timeout, func(ctx context.Context, p proc.Process) bool {
			var err error
			r, err = ReadProcess(o.Dir)
			return err == nil && r.PID == p.PID && Ping(ctx, r.Addr) == nil
		})
	if err != nil {
		return Process{}, false, err
	}
	return r, true, nil
}

// Down stops the recorded emulator (SIGTERM, then SIGKILL after 10s). Its state stays on disk, and
// the control planes of EKS clusters keep running.
func Down(ctx context.Context, dir string) (bool, error) {
	p, err := ReadProcess(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer os.Remove(processFile(dir))
	stopped, err := p.record().Stop(ctx, 10*time.Second)
	if err != nil {
		return false, fmt.Errorf("stop the emulator: %w", err)
	}
	return stopped, nil
}

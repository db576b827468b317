package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/proc"
)

// DefaultPort is where the loopback registry listens unless NUV_REGISTRY_PORT says otherwise (the
// port kind's local-registry recipe uses, so existing habits keep working).
const DefaultPort = 5001

// State is what `nuv registry serve` records once it listens.
type State struct {
	PID int `json:"pid"`
	// Start is the process's start time (see proc.Record); 0 in state written before nuv recorded it.
	Start uint64 `json:"start,omitempty"`
	Addr  string `json:"addr"` // 127.0.0.1:port
	Dir   string `json:"dir"`
	// Socket is the unix socket the same registry also serves (SocketPath(Dir)): how containers
	// reach it without a port on any address but loopback (a relay container bind-mounts its
	// directory). Empty in state of a registry started by a nuv that did not open it, or where the
	// path is too long for a unix socket.
	Socket string `json:"socket,omitempty"`
}

// process is the recorded registry process.
func (s State) process() proc.Record { return proc.Record{PID: s.PID, Start: s.Start} }

// Host is the name clients push to and clusters pull from: localhost:<port>.
func (s State) Host() string {
	_, port, _ := net.SplitHostPort(s.Addr)
	return "localhost:" + port
}

// Dir is the registry's directory under nuv's home.
func Dir(home string) string { return filepath.Join(home, "registry") }

func stateFile(dir string) string { return filepath.Join(dir, "state.json") }

// SocketDir is the directory of the registry's unix socket: a directory of its own, so that a
// container bind-mounting it sees the socket a restarted registry makes (a bind mount of the
// socket file would keep the old one).
func SocketDir(dir string) string { return filepath.Join(dir, "sock") }

// SocketName is the socket's file name in SocketDir.
const SocketName = "registry.sock"

// SocketPath is the registry's unix socket.
func SocketPath(dir string) string { return filepath.Join(SocketDir(dir), SocketName) }

// maxSocketPath is the longest path a unix socket address holds on Linux (sun_path is 108 bytes
// with the terminating NUL).
const maxSocketPath = 107

// WriteState records s atomically in dir.
func WriteState(dir string, s State) error {
	data, _ := json.MarshalIndent(s, "", "  ")
	return fsutil.WriteFileAtomic(stateFile(dir), append(data, '\n'), 0o644)
}

// ReadState reads the recorded state; os.ErrNotExist when the registry was never started.
func ReadState(dir string) (State, error) {
	var s State
	data, err := os.ReadFile(stateFile(dir))
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("%s: %w", stateFile(dir), err)
	}
	return s, nil
}

// Status reports whether the recorded registry process is alive and answering /v2/.
func Status(ctx context.Context, dir string) (State, bool, error) {
	s, err := ReadState(dir)
	if errors.Is(err, os.ErrNotExist) {
		return s, false, nil
	}
	if err != nil {
		return s, false, err
	}
	if !alive(s) {
		return s, false, nil
	}
	return s, ping(ctx, s.Addr) == nil, nil
}

// alive reports whether the recorded registry process runs. State without a start time is checked
// by command line instead, so a recycled pid is not taken for the registry.
func alive(s State) bool {
	if !s.process().Alive() {
		return false
	}
	if s.Start != 0 {
		return true
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.PID))
	return err != nil || strings.Contains(string(cmdline), "serve")
}

func ping(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v2/", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("registry at %s answered HTTP %d", addr, resp.StatusCode)
	}
	return nil
}

// UpOptions say how to start the registry process.
type UpOptions struct {
	// Dir is the registry directory (Dir(home)).
	Dir string
	// Port to listen on (0: any free port).
	Port int
	// Command is the program and arguments that run `registry serve`; Up appends
	// --dir and --addr. Tests point it at their own binary.
	Command []string
	// Env is added to the child's environment.
	Env []string
	// Timeout bounds the wait for the registry to answer (default 15s).
	Timeout time.Duration
}

// Up starts the registry as a detached process unless it already runs, and returns its state.
func Up(ctx context.Context, o UpOptions) (State, bool, error) {
	if s, ok, err := Status(ctx, o.Dir); err == nil && ok {
		return s, false, nil
	}
	if len(o.Command) == 0 {
		return State{}, false, fmt.Errorf("registry up: no command to run the registry")
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return State{}, false, fmt.Errorf("registry directory %s: %w", o.Dir, err)
	}
	addr, err := proc.LoopbackAddr(o.Port, "NUV_REGISTRY_PORT")
	if err != nil {
		return State{}, false, fmt.Errorf("registry %w", err)
	}
	logPath := filepath.Join(o.Dir, "registry.log")
	_ = os.Remove(stateFile(o.Dir))
	args := append(append([]string{}, o.Command[1:]...), "--dir", o.Dir, "--addr", addr)
	var st State
	_, err = proc.LaunchReady(ctx, proc.Command{Path: o.Command[0], Args: args, Env: o.Env, Log: logPath},
		"the registry", o.Timeout, func(ctx context.Context, p proc.Process) bool {
			var err error
			st, err = ReadState(o.Dir)
			return err == nil && st.PID == p.PID && ping(ctx, st.Addr) == nil
		})
	if err != nil {
		return State{}, false, err
	}
	return st, true, nil
}

// Down stops the recorded registry process (SIGTERM, then SIGKILL after 5s). Images stay on disk.
func Down(ctx context.Context, dir string) (bool, error) {
	s, err := ReadState(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer os.Remove(stateFile(dir))
	if !alive(s) {
		return false, nil
	}
	stopped, err := s.process().Stop(ctx, 5*time.Second)
	if err != nil {
		return false, fmt.Errorf("stop the registry: %w", err)
	}
	return stopped, nil
}

// Package testservers finds and starts the real servers the GCS, Azure Blob and MongoDB state
// stores are tested and measured on (fake-gcs-server, Azurite, FerretDB: StartFakeGCS,
// StartAzurite, StartFerretDB), each on a free loopback port, and makes the bucket, container or
// collection a store needs (nuv never makes one). Each test package starts its server once
// (Shared) and stops it when its tests end; bench/state starts all of them. A program is found
// through its environment variable, else where hack/state-servers.sh caches it.
package testservers

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/syncbuf"
)

// Program is a server program the tests need.
type Program struct {
	Name   string // "fake-gcs-server"
	Env    string // the variable that names the program's path, "NUV_TEST_FAKE_GCS"
	Script string // the argument of hack/state-servers.sh that installs it, "gcs"
	Cached string // its path under the cache, "test-servers/fake-gcs-server-v1.56.1/fake-gcs-server"
}

// Path returns the program's path, or an error that says how to install it.
func (p Program) Path() (string, error) {
	if v := os.Getenv(p.Env); v != "" {
		if _, err := os.Stat(v); err != nil {
			return "", fmt.Errorf("%s=%s: %w", p.Env, v, err)
		}
		return v, nil
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache")
	}
	path := filepath.Join(cache, "nuv", p.Cached)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s is not installed: run `bash hack/state-servers.sh %s` (or set %s to its path)",
			p.Name, p.Script, p.Env)
	}
	return path, nil
}

// FreePort returns a TCP port free on 127.0.0.1 at the time of the call.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Server is a started server program.
type Server struct {
	Name    string
	Addr    string        // "127.0.0.1:PORT"
	Startup time.Duration // from start to ready
	Dir     string        // removed by Stop ("" for none): where the server keeps its data
	cmd     *exec.Cmd
	out     *syncbuf.Buffer
	done    chan struct{}
}

// Start runs path with the args made for a free port and waits (up to a minute) until ready
// answers nil; the error of a server that does not get ready carries its output.
func Start(name, path string, args func(port int) []string, ready func(addr string) error) (*Server, error) {
	return start(name, path, nil, args, ready)
}

// start is Start with env added to the server's environment.
func start(name, path string, env []string, args func(port int) []string, ready func(addr string) error) (*Server, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Name: name, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), out: &syncbuf.Buffer{Limit: 1 << 20}, // the first MiB says why it failed
		done: make(chan struct{})}
	s.cmd = exec.Command(path, args(port)...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if env != nil {
		s.cmd.Env = append(os.Environ(), env...)
	}
	// Its own process group, killed with the test binary if that dies first.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	begin := time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(time.Minute)
	for {
		err := ready(s.Addr)
		if err == nil {
			s.Startup = time.Since(begin)
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("%s exited before it was ready (%v); its output:\n%s", name, s.cmd.ProcessState, s.out)
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("%s not ready on %s after a minute: %v; its output:\n%s", name, s.Addr, err, s.out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Output is what the server printed so far.
func (s *Server) Output() string { return s.out.String() }

// RSS is the resident memory of the server's process (its own, not its children's), in KiB.
func (s *Server) RSS() int { return ProcessRSS(s.cmd.Process.Pid) }

// ProcessRSS is the resident memory (VmRSS) of process pid in KiB, 0 if unknown.
func ProcessRSS(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

// Stop ends the server's process group, waits for it and removes its Dir.
func (s *Server) Stop() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	if s.Dir != "" {
		_ = os.RemoveAll(s.Dir)
	}
}

// DialReady is a readiness probe: the port accepts connections.
func DialReady(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// Shared is a server a test package starts once, at its first test that needs it, and stops in
// TestMain after its tests.
type Shared struct {
	once  sync.Once
	start func() (*Server, error)
	srv   *Server
	err   error
}

// NewShared returns a Shared that start starts.
func NewShared(start func() (*Server, error)) *Shared { return &Shared{start: start} }

// Get starts the server if no test did yet. Integration tests are skipped under -short; one that
// cannot have its server fails, with the reason (how to install a missing program).
func (s *Shared) Get(t testing.TB) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("an integration test: skipped under -short")
	}
	s.once.Do(func() { s.srv, s.err = s.start() })
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.srv
}

// Stop stops the server if it was started.
func (s *Shared) Stop() {
	s.once.Do(func() { s.err = errors.New("stopped") })
	if s.srv != nil {
		s.srv.Stop()
	}
}

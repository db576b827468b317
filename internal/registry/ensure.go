package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/proc"
)

// Port is NUV_REGISTRY_PORT or DefaultPort.
func Port(getenv func(string) string) (int, error) {
	v := getenv("NUV_REGISTRY_PORT")
	if v == "" {
		return DefaultPort, nil
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < 0 || p > 65535 {
		return 0, cli.Usagef("NUV_REGISTRY_PORT=%q is not a port number", v)
	}
	return p, nil
}

// Ensure starts the registry for env (running `<nuv> registry serve`) unless it runs.
func Ensure(ctx context.Context, env *cli.Env, home string) (State, bool, error) {
	port, err := Port(env.Getenv)
	if err != nil {
		return State{}, false, err
	}
	exe := env.Exe
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return State{}, false, err
		}
	}
	return Up(ctx, UpOptions{Dir: Dir(home), Port: port, Command: []string{exe, "registry", "serve"}})
}

// ServeDir listens on addr and on the unix socket SocketPath(dir), records the state in dir and
// serves both until SIGTERM/SIGINT or ctx ends. One handler serves both listeners: a client of the
// socket (the relay container kind nodes pull through) and a client of the port see the same
// registry, with no second process holding its own view of the storage.
func ServeDir(ctx context.Context, dir, addr string, logw io.Writer) error {
	return ServeDirWith(ctx, dir, addr, logw, ListenOptions{})
}

// ListenOptions say whether the registry may listen on an address other than loopback.
type ListenOptions struct {
	// AllowRemote permits a non-loopback address (reachable from other machines); it requires
	// TLS, CertFile and KeyFile. Pushes need the push credentials either way.
	AllowRemote bool
	// CertFile and KeyFile are the PEM certificate and key the registry serves TLS with.
	CertFile, KeyFile string
}

// CheckAddr refuses a listen address that is not loopback (127.0.0.0/8, ::1, localhost), unless
// o allows it and gives TLS; the error names the address and what allows it.
func CheckAddr(addr string, o ListenOptions) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("registry address %q: want HOST:PORT (e.g. 127.0.0.1:5001): %w", addr, err)
	}
	if isLoopbackName(host) {
		return nil
	}
	if !o.AllowRemote {
		return fmt.Errorf("registry address %q is not loopback: the registry would be reachable from other machines; listen on 127.0.0.1, or allow it explicitly with TLS (--allow-remote --tls-cert FILE --tls-key FILE)", addr)
	}
	if o.CertFile == "" || o.KeyFile == "" {
		return fmt.Errorf("registry address %q is not loopback: --allow-remote needs TLS (--tls-cert FILE --tls-key FILE)", addr)
	}
	return nil
}

// ServeDirWith is ServeDir with o saying whether a non-loopback addr is allowed (with TLS).
func ServeDirWith(ctx context.Context, dir, addr string, logw io.Writer, o ListenOptions) error {
	if err := CheckAddr(addr, o); err != nil {
		return err
	}
	var tc *tls.Config
	if o.CertFile != "" || o.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return fmt.Errorf("registry TLS certificate %s and key %s: %w", o.CertFile, o.KeyFile, err)
		}
		tc = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	h, err := NewHandler(dir, logw)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("registry listen on %s: %w", addr, err)
	}
	if tc != nil {
		ln = tls.NewListener(ln, tc)
	}
	sock, sockPath, err := listenSocket(dir)
	if err != nil {
		ln.Close()
		return err
	}
	if sock == nil && logw != nil {
		fmt.Fprintf(logw, "registry: no unix socket: %s is longer than a unix socket address (%d bytes); kind clusters cannot reach this registry (a shorter NUV_HOME fixes it)\n", SocketPath(dir), maxSocketPath)
	}
	_, start, _ := proc.Stat(os.Getpid())
	if err := WriteState(dir, State{PID: os.Getpid(), Start: start, Addr: ln.Addr().String(), Dir: dir, Socket: sockPath}); err != nil {
		ln.Close()
		if sock != nil {
			sock.Close()
		}
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if sock == nil {
		return Serve(ctx, ln, h)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 2)
	go func() { errs <- Serve(ctx, ln, h) }()
	go func() { errs <- Serve(ctx, sock, h) }()
	err = <-errs
	cancel() // one listener failed or ctx ended: stop the other
	if err2 := <-errs; err == nil {
		err = err2
	}
	return err
}

// listenSocket opens the registry's unix socket in a directory only its owner may enter (the relay
// container runs as the same user; pushes through it need the push credentials like any other). A socket file left
// by a registry that died is replaced: ServeDir runs only when no registry of dir answers. It
// returns a nil listener when the path is too long for a unix socket.
func listenSocket(dir string) (net.Listener, string, error) {
	path := SocketPath(dir)
	if len(path) > maxSocketPath {
		return nil, "", nil
	}
	if err := os.MkdirAll(SocketDir(dir), 0o700); err != nil {
		return nil, "", fmt.Errorf("registry socket directory: %w", err)
	}
	if err := os.Chmod(SocketDir(dir), 0o700); err != nil {
		return nil, "", fmt.Errorf("registry socket directory: %w", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, "", fmt.Errorf("registry socket %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, "", fmt.Errorf("registry listen on %s: %w", path, err)
	}
	return ln, path, nil
}

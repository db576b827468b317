package registry

import (
	"context"
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

// ServeDir listens on addr, records the state in dir and serves until SIGTERM/SIGINT or ctx ends.
func ServeDir(ctx context.Context, dir, addr string, logw io.Writer) error {
	h, err := NewHandler(dir, logw)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("registry listen on %s: %w", addr, err)
	}
	_, start, _ := proc.Stat(os.Getpid())
	if err := WriteState(dir, State{PID: os.Getpid(), Start: start, Addr: ln.Addr().String(), Dir: dir}); err != nil {
		ln.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return Serve(ctx, ln, h)
}

package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/proc"
)

const usage = `Usage: nuv registry up|down|status

The OCI registry nuv runs on loopback for local clusters (images persist under
$NUV_HOME/registry). build-and-load pushes there and starts it when needed.

  up       start it (detached) unless it runs; prints its address
  down     stop it (the images stay on disk)
  status   print its address and whether it runs (exit 1 when it does not)

Environment: NUV_REGISTRY_PORT (default 5001; 0 picks a free port), NUV_HOME.
`

// Command is `nuv registry`.
func Command() cli.Command {
	return cli.Command{Name: "registry", Short: "the loopback OCI registry for local clusters (up|down|status)", Run: run}
}

func run(ctx context.Context, env *cli.Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(env.Out, usage)
		if len(args) == 0 {
			return cli.Usagef("nuv registry: missing subcommand (up, down or status)")
		}
		return nil
	}
	sub, rest := args[0], args[1:]
	if sub == "serve" {
		return serveCmd(ctx, env, rest)
	}
	fs := pflag.NewFlagSet("registry "+sub, pflag.ContinueOnError)
	fs.SetOutput(env.Err)
	fs.Usage = func() { fmt.Fprint(env.Err, usage) }
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return cli.Usagef("nuv registry %s: %v", sub, err)
	}
	home, err := paths.EnsureHome(env.Getenv)
	if err != nil {
		return err
	}
	dir := Dir(home)
	switch sub {
	case "up":
		s, started, err := Ensure(ctx, env, home)
		if err != nil {
			return err
		}
		if started {
			env.Log.Infof("registry started (pid %d, storage %s)", s.PID, s.Dir)
		}
		fmt.Fprintln(env.Out, s.Host())
		return nil
	case "down":
		stopped, err := Down(ctx, dir)
		if err != nil {
			return err
		}
		if stopped {
			env.Log.Infof("registry stopped")
		} else {
			env.Log.Infof("registry was not running")
		}
		return nil
	case "status":
		s, ok, err := Status(ctx, dir)
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(env.Out, "registry: stopped")
			return cli.Exit(1, nil)
		}
		fmt.Fprintf(env.Out, "registry: running at %s (pid %d, storage %s)\n", s.Host(), s.PID, s.Dir)
		return nil
	}
	return cli.Usagef("nuv registry: unknown subcommand %q (up, down or status)", sub)
}

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

// serveCmd is the detached process itself: `nuv registry serve --dir D --addr A`.
func serveCmd(ctx context.Context, env *cli.Env, args []string) error {
	fs := pflag.NewFlagSet("registry serve", pflag.ContinueOnError)
	fs.SetOutput(env.Err)
	dir := fs.String("dir", "", "storage directory")
	addr := fs.String("addr", "127.0.0.1:5001", "listen address")
	if err := fs.Parse(args); err != nil {
		return cli.Usagef("nuv registry serve: %v", err)
	}
	if *dir == "" {
		return cli.Usagef("nuv registry serve: --dir is required")
	}
	return ServeDir(ctx, *dir, *addr, env.Err)
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

// Package registrycmd is `nuv registry up|down|status` (and `serve`, the detached process itself)
// over internal/registry.
package registrycmd

import (
	"context"
	"fmt"
	"io"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/registry"
	"github.com/nuv-dev/nuv/internal/registry/relayctl"
)

// NewCommand returns `nuv registry`.
func NewCommand() cli.Command {
	return cli.GroupCommand("registry", &cli.Group{
		Name:  "nuv registry",
		Short: "the loopback OCI registry for local clusters (up|down|status)",
		Long: `The OCI registry nuv runs on loopback for local clusters (images persist under
$NUV_HOME/registry). build-and-load pushes there and starts it when needed. Kind clusters reach
it through a relay container, which up and down start and stop with it.

Environment: NUV_REGISTRY_PORT (default 5001; 0 picks a free port), NUV_HOME.`,
		Examples: "nuv registry up\nnuv registry status",
		Verbs: []cli.Verb{
			{Name: "up", Short: "start it (detached) unless it runs, and its relay for kind clusters; print its address", Run: runUp},
			{Name: "down", Short: "stop it and its relay for kind clusters (the images stay on disk)", Run: runDown},
			{Name: "status", Short: "print its address and whether it runs (exit 1 when it does not), and its relay", Run: runStatus},
			{Name: "serve", Short: "serve the registry in the foreground (what up starts detached)", Hidden: true, Run: runServe},
		},
	})
}

// noFlags parses the (flagless) command line of a subcommand; done when help was printed.
func noFlags(env *cli.Env, sub, short string, args []string) (bool, error) {
	u := cli.Usage{Line: "nuv registry " + sub, Short: short}
	fs := cli.NewFlagSet("nuv registry " + sub)
	if done, err := cli.Parse(env, fs, u, args); done || err != nil {
		return done, err
	}
	return false, cli.NoArgs(fs, u)
}

func runUp(ctx context.Context, env *cli.Env, args []string) error {
	if done, err := noFlags(env, "up", "start the loopback registry (detached) unless it runs; prints its address", args); done || err != nil {
		return err
	}
	home, err := paths.EnsureHome(env.Getenv)
	if err != nil {
		return err
	}
	s, started, err := registry.Ensure(ctx, env, home)
	if err != nil {
		return err
	}
	if started {
		env.Log.Infof("registry started (pid %d, storage %s)", s.PID, s.Dir)
	}
	relay, err := relayctl.Start(ctx, env.Getenv, home)
	if err != nil {
		return err
	}
	if relay {
		env.Log.Infof("registry relay %s started (kind clusters pull through it)", relayctl.Name(registry.Dir(home)))
	}
	fmt.Fprintln(env.Out, s.Host())
	return nil
}

func runDown(ctx context.Context, env *cli.Env, args []string) error {
	if done, err := noFlags(env, "down", "stop the loopback registry (the images stay on disk)", args); done || err != nil {
		return err
	}
	home, err := paths.EnsureHome(env.Getenv)
	if err != nil {
		return err
	}
	stopped, err := registry.Down(ctx, registry.Dir(home))
	if err != nil {
		return err
	}
	if stopped {
		env.Log.Infof("registry stopped")
	} else {
		env.Log.Infof("registry was not running")
	}
	// the relay kind clusters reach it by (an apply of such a cluster starts both again)
	relay, err := relayctl.Stop(ctx, env.Getenv, home)
	if err != nil {
		return err
	}
	if relay {
		env.Log.Infof("registry relay %s stopped (kind clusters cannot pull from the registry until `nuv registry up` or an apply)", relayctl.Name(registry.Dir(home)))
	}
	return nil
}

func runStatus(ctx context.Context, env *cli.Env, args []string) error {
	u := cli.Usage{Line: "nuv registry status [-o table|wide|json|yaml]", Short: "print the registry's address and whether it runs (exit 1 when it does not)",
		Long:     "-o json|yaml print the machine form: running, host, addr, pid, storage, socket and the relay (name, running,\nruntime, networks); the exit code is the same in every form.",
		Examples: "nuv registry status\nnuv registry status -o json"}
	fs := cli.NewFlagSet("nuv registry status")
	var output cli.OutputOption
	output.AddFlags(fs)
	if done, err := cli.Parse(env, fs, u, args); done || err != nil {
		return err
	}
	if err := cli.NoArgs(fs, u); err != nil {
		return err
	}
	_ = output.Validate(u)
	home, err := paths.EnsureHome(env.Getenv)
	if err != nil {
		return err
	}
	s, ok, err := registry.Status(ctx, registry.Dir(home))
	if err != nil {
		return err
	}
	relay, err := relayctl.Of(ctx, env.Getenv, home)
	if err != nil {
		return err
	}
	st := Status{Running: ok, Relay: relay}
	if ok {
		st.Host, st.Addr, st.PID, st.Storage, st.Socket = s.Host(), s.Addr, s.PID, s.Dir, s.Socket
	}
	if err := writeStatus(env.Out, &output, st); err != nil {
		return err
	}
	if !ok {
		return cli.Exit(cli.ExitFailure, nil)
	}
	return nil
}

// Status is what `nuv registry status` reports; its JSON/YAML field names are the machine form.
type Status struct {
	Running bool `json:"running"`
	// Host is how clients name it (localhost:PORT); Addr where it listens (127.0.0.1:PORT).
	Host    string          `json:"host,omitempty"`
	Addr    string          `json:"addr,omitempty"`
	PID     int             `json:"pid,omitempty"`
	Storage string          `json:"storage,omitempty"`
	Socket  string          `json:"socket,omitempty"`
	Relay   *relayctl.Relay `json:"relay,omitempty"`
}

// writeStatus prints st in the format of o: the status lines (wide: with the unix socket), or the
// machine form.
func writeStatus(w io.Writer, o *cli.OutputOption, st Status) error {
	if done, err := o.Write(w, st); done {
		return err
	}
	if !st.Running {
		fmt.Fprintln(w, "registry: stopped")
	} else {
		fmt.Fprintf(w, "registry: running at %s (pid %d, storage %s)\n", st.Host, st.PID, st.Storage)
		if o.Wide() {
			socket := st.Socket
			if socket == "" {
				socket = "none"
			}
			fmt.Fprintf(w, "socket:   %s\n", socket)
		}
	}
	if st.Relay != nil {
		fmt.Fprintln(w, st.Relay.String())
	}
	return nil
}

// runServe is the detached process itself: `nuv registry serve --dir D --addr A`.
func runServe(ctx context.Context, env *cli.Env, args []string) error {
	u := cli.Usage{Line: "nuv registry serve --dir D [--addr A] [--allow-remote --tls-cert F --tls-key F]", Short: "serve the registry in the foreground (what `up` starts detached)"}
	fs := cli.NewFlagSet("nuv registry serve")
	dir := fs.String("dir", "", "storage directory")
	addr := fs.String("addr", "127.0.0.1:5001", "listen address (loopback unless --allow-remote)")
	allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback --addr (needs --tls-cert and --tls-key)")
	cert := fs.String("tls-cert", "", "PEM certificate to serve TLS with")
	key := fs.String("tls-key", "", "PEM key of --tls-cert")
	if done, err := cli.Parse(env, fs, u, args); done || err != nil {
		return err
	}
	if *dir == "" {
		return u.Errorf("nuv registry serve: --dir is required")
	}
	o := registry.ListenOptions{AllowRemote: *allowRemote, CertFile: *cert, KeyFile: *key}
	if err := registry.CheckAddr(*addr, o); err != nil {
		return u.Errorf("nuv registry serve: %v", err)
	}
	return registry.ServeDirWith(ctx, *dir, *addr, env.Err, o)
}

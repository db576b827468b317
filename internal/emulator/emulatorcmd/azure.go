package emulatorcmd

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/emulator/azure"
)

// The Azure emulator (internal/emulator/azure) runs beside the AWS one as its own process and
// port (NUV_AZURE_EMULATOR_PORT, default 5003): `nuv emulator up|down|status|env` act on both.

// azurePort is NUV_AZURE_EMULATOR_PORT or azure.DefaultPort.
func azurePort(getenv func(string) string) (int, error) {
	return portEnv(getenv, "NUV_AZURE_EMULATOR_PORT", azure.DefaultPort)
}

// EnsureAzure starts the Azure emulator for env (running `<nuv> emulator serve-azure`) unless it runs.
func EnsureAzure(ctx context.Context, env *cli.Env, home string) (azure.Process, bool, error) {
	port, err := azurePort(env.Getenv)
	if err != nil {
		return azure.Process{}, false, err
	}
	cmd, err := serveCommand(env, "serve-azure")
	if err != nil {
		return azure.Process{}, false, err
	}
	return azure.Up(ctx, azure.UpOptions{Dir: azure.Dir(home), Port: port, Command: cmd})
}

// Up, Down and Env are the Azure emulator's part of the subcommands (see cloud).
func (azureCloud) Up(ctx context.Context, env *cli.Env, home string) error {
	p, started, err := EnsureAzure(ctx, env, home)
	if err != nil {
		return err
	}
	// stdout keeps the AWS endpoint alone (scripts read it); the Azure one is in status and env.
	if started {
		env.Log.Infof("azure emulator started at %s (pid %d, state %s)", p.URL(), p.PID, p.Dir)
	}
	return nil
}

func (azureCloud) Down(ctx context.Context, env *cli.Env, home string) error {
	stopped, err := azure.Down(ctx, azure.Dir(home))
	if err != nil {
		return err
	}
	if stopped {
		env.Log.Infof("azure emulator stopped")
	}
	return nil
}

func (azureCloud) Status(ctx context.Context, home string) (Status, error) {
	st := Status{Cloud: "azure", label: azureCloud{}.Label()}
	p, ok, err := azure.Status(ctx, azure.Dir(home))
	if err != nil || !ok {
		return st, err
	}
	c, err := azure.ReadCredentials(p.Dir)
	if err != nil {
		return st, err
	}
	st.Running, st.URL, st.PID, st.State = true, p.URL(), p.PID, p.Dir
	st.Subscription, st.Tenant, st.CA = c.SubscriptionID, c.TenantID, azure.CAFile(p.Dir)
	return st, nil
}

// Env prints the export lines of the running Azure emulator (nothing when it does not run).
func (azureCloud) Env(ctx context.Context, env *cli.Env, home string) error {
	p, ok, err := azure.Status(ctx, azure.Dir(home))
	if err != nil || !ok {
		return err
	}
	c, err := azure.ReadCredentials(p.Dir)
	if err != nil {
		return err
	}
	// This command exists to print the secret: it goes to stdout only, never to the log.
	for _, kv := range azure.Env(p, c) {
		fmt.Fprintf(env.Out, "export %s\n", kv)
	}
	return printAdminToken(env.Out, "azure", p.Dir)
}

// serveAzureCmd is the detached process: `nuv emulator serve-azure --dir D --addr A [--delay D]`.
func serveAzureCmd(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("nuv emulator serve-azure")
	dir := fs.String("dir", "", "state directory")
	addr := fs.String("addr", "127.0.0.1:"+strconv.Itoa(azure.DefaultPort), "listen address (loopback)")
	delay := fs.Duration("delay", 2*time.Second, "how long operations stay in progress")
	if done, err := cli.Parse(env, fs, cli.Usage{Line: "nuv emulator serve-azure --dir DIR [flags]", Short: "serve the Azure emulator in the foreground (what up starts detached)"}, args); done || err != nil {
		return err
	}
	if *dir == "" {
		return cli.Usagef("nuv emulator serve-azure: --dir is required")
	}
	if err := loopbackAddr("serve-azure", *addr); err != nil {
		return err
	}
	s, err := azure.New(azure.Options{Dir: *dir, Delay: *delay, Log: env.Log})
	if err != nil {
		return err
	}
	return listenAndServe(ctx, env, "azure emulator", *dir, *addr, func(a net.Addr) {
		env.Log.Infof("azure emulator listening on https://%s (state %s, delay %s)", a, *dir, *delay)
	}, func(ctx context.Context, ln net.Listener) error { return azure.Serve(ctx, ln, s) })
}

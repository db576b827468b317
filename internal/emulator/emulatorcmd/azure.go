package emulatorcmd

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/emulator/azure"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/proc"
)

// The Azure emulator (internal/emulator/azure) runs beside the AWS one as its own process and
// port (NUV_AZURE_EMULATOR_PORT, default 5003): `nuv emulator up|down|status|env` act on both.

// azurePort is NUV_AZURE_EMULATOR_PORT or azure.DefaultPort.
func azurePort(getenv func(string) string) (int, error) {
	v := getenv("NUV_AZURE_EMULATOR_PORT")
	if v == "" {
		return azure.DefaultPort, nil
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < 0 || p > 65535 {
		return 0, cli.Usagef("NUV_AZURE_EMULATOR_PORT=%q is not a port number", v)
	}
	return p, nil
}

// EnsureAzure starts the Azure emulator for env (running `<nuv> emulator serve-azure`) unless it runs.
func EnsureAzure(ctx context.Context, env *cli.Env, home string) (azure.Process, bool, error) {
	port, err := azurePort(env.Getenv)
	if err != nil {
		return azure.Process{}, false, err
	}
	delay, err := Delay(env.Getenv)
	if err != nil {
		return azure.Process{}, false, err
	}
	exe := env.Exe
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return azure.Process{}, false, err
		}
	}
	cmd := []string{exe, "emulator", "serve-azure", "--delay", delay.String()}
	return azure.Up(ctx, azure.UpOptions{Dir: azure.Dir(home), Port: port, Command: cmd, Env: childEnv(os.Environ())})
}

// azureUp, azureDown, azureStatus and azureEnv are the Azure halves of the subcommands.
func azureUp(ctx context.Context, env *cli.Env, home string) error {
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

func azureDown(ctx context.Context, env *cli.Env, home string) error {
	stopped, err := azure.Down(ctx, azure.Dir(home))
	if err != nil {
		return err
	}
	if stopped {
		env.Log.Infof("azure emulator stopped")
	}
	return nil
}

func azureStatus(ctx context.Context, env *cli.Env, home string) (bool, error) {
	p, ok, err := azure.Status(ctx, azure.Dir(home))
	if err != nil || !ok {
		fmt.Fprintln(env.Out, "azure emulator: stopped")
		return false, err
	}
	c, err := azure.ReadCredentials(p.Dir)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(env.Out, "azure emulator: running at %s (pid %d, subscription %s, tenant %s, CA %s)\n", p.URL(), p.PID, c.SubscriptionID, c.TenantID, azure.CAFile(p.Dir))
	return true, nil
}

// azureEnv prints the export lines of the running Azure emulator (nothing when it does not run).
func azureEnv(ctx context.Context, env *cli.Env, home string) (bool, error) {
	p, ok, err := azure.Status(ctx, azure.Dir(home))
	if err != nil || !ok {
		return false, err
	}
	c, err := azure.ReadCredentials(p.Dir)
	if err != nil {
		return false, err
	}
	// This command exists to print the secret: it goes to stdout only, never to the log.
	for _, kv := range azure.Env(p, c) {
		fmt.Fprintf(env.Out, "export %s\n", kv)
	}
	return true, nil
}

// serveAzureCmd is the detached process: `nuv emulator serve-azure --dir D --addr A [--delay D]`.
func serveAzureCmd(ctx context.Context, env *cli.Env, args []string) error {
	fs := pflag.NewFlagSet("emulator serve-azure", pflag.ContinueOnError)
	fs.SetOutput(env.Err)
	dir := fs.String("dir", "", "state directory")
	addr := fs.String("addr", "127.0.0.1:"+strconv.Itoa(azure.DefaultPort), "listen address (loopback)")
	delay := fs.Duration("delay", 2*time.Second, "how long operations stay in progress")
	if err := fs.Parse(args); err != nil {
		return cli.Usagef("nuv emulator serve-azure: %v", err)
	}
	if *dir == "" {
		return cli.Usagef("nuv emulator serve-azure: --dir is required")
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
		return cli.Usagef("nuv emulator serve-azure: --addr %q must be a loopback host:port", *addr)
	}
	s, err := azure.New(azure.Options{Dir: *dir, Delay: *delay, Log: env.Log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("azure emulator listen on %s: %w", *addr, err)
	}
	_, start, _ := proc.Stat(os.Getpid())
	if err := azure.WriteProcess(*dir, azure.Process{PID: os.Getpid(), Start: start, Addr: ln.Addr().String(), Dir: *dir}); err != nil {
		ln.Close()
		return err
	}
	env.Log.Infof("azure emulator listening on https://%s (state %s, delay %s)", ln.Addr(), *dir, *delay)
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return azure.Serve(ctx, ln, s)
}

// azureFaultsCmd lists, adds or clears the faults of the running Azure emulator.
func azureFaultsCmd(ctx context.Context, env *cli.Env, args []string) error {
	home, err := paths.EnsureHome(env.Getenv)
	if err != nil {
		return err
	}
	p, ok, err := azure.Status(ctx, azure.Dir(home))
	if err != nil {
		return err
	}
	if !ok {
		return cli.Exit(1, fmt.Errorf("the azure emulator is not running: start it with `nuv emulator up`"))
	}
	method, body := http.MethodGet, ""
	switch {
	case len(args) == 0 || (len(args) == 1 && args[0] == "list"):
	case len(args) == 2 && args[0] == "add":
		method, body = http.MethodPost, args[1]
	case len(args) == 1 && args[0] == "clear":
		method = http.MethodDelete
	default:
		return cli.Usagef("nuv emulator faults --azure: want no argument, list, add JSON or clear")
	}
	hc, err := azure.Client(p.Dir)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, p.URL()+"/_nuv/faults", strings.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("azure emulator faults: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return cli.Exit(2, fmt.Errorf("%s", strings.TrimSpace(string(b))))
	}
	_, err = env.Out.Write(b)
	return err
}

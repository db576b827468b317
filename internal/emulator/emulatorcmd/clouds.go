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
	"syscall"

	"github.com/nuv-dev/nuv/internal/cli"
	awsemu "github.com/nuv-dev/nuv/internal/emulator/aws"
	"github.com/nuv-dev/nuv/internal/emulator/azure"
	"github.com/nuv-dev/nuv/internal/emulator/emucore"
	"github.com/nuv-dev/nuv/internal/proc"
)

// cloud is one of the emulators `nuv emulator` runs, as its subcommands see it.
type cloud interface {
	// Name is how `nuv emulator faults --cloud` names it: aws, azure or gcp.
	Name() string
	// Label names it in messages: "emulator" (AWS), "azure emulator", "GKE emulator".
	Label() string
	// Dir is its state directory under nuv's home.
	Dir(home string) string
	// Running is the base URL of the emulator recorded in dir, and whether it runs and answers.
	Running(ctx context.Context, dir string) (url string, ok bool, err error)
	// Client is the HTTP client that reaches the emulator of dir.
	Client(dir string) (*http.Client, error)
	// Up starts it unless it runs (`nuv emulator up`), Down stops it (`nuv emulator down`), each
	// saying so in the log; only the AWS one prints its endpoint on stdout, for scripts.
	Up(ctx context.Context, env *cli.Env, home string) error
	Down(ctx context.Context, env *cli.Env, home string) error
	// Env prints the export lines that point clients at it (`nuv emulator env`); the AWS one is
	// required (exit 1 when it does not run), the others print nothing when stopped.
	Env(ctx context.Context, env *cli.Env, home string) error
	// Status is its status (`nuv emulator status`): where it runs and what it emulates, or not
	// running. Never a secret.
	Status(ctx context.Context, home string) (Status, error)
}

// Status is one emulator's state as `nuv emulator status` reports it; its JSON/YAML field names
// are the machine form (-o json|yaml). Credentials are never part of it.
type Status struct {
	Cloud   string `json:"cloud"` // aws, azure or gcp
	Running bool   `json:"running"`
	URL     string `json:"url,omitempty"`
	PID     int    `json:"pid,omitempty"`
	// State is the emulator's state directory.
	State string `json:"state,omitempty"`
	// Region and Account are the AWS emulator's.
	Region  string `json:"region,omitempty"`
	Account string `json:"account,omitempty"`
	// Subscription, Tenant and CA (the file of its certificate authority) are the Azure emulator's.
	Subscription string `json:"subscription,omitempty"`
	Tenant       string `json:"tenant,omitempty"`
	CA           string `json:"ca,omitempty"`
	label        string
}

// line is the status line of s (wide: with the Azure emulator's state directory too).
func (s Status) line(wide bool) string {
	if !s.Running {
		return s.label + ": stopped"
	}
	switch s.Cloud {
	case "aws":
		return fmt.Sprintf("%s: running at %s (pid %d, region %s, account %s, state %s)", s.label, s.URL, s.PID, s.Region, s.Account, s.State)
	case "azure":
		extra := ""
		if wide {
			extra = ", state " + s.State
		}
		return fmt.Sprintf("%s: running at %s (pid %d, subscription %s, tenant %s, CA %s%s)", s.label, s.URL, s.PID, s.Subscription, s.Tenant, s.CA, extra)
	}
	return fmt.Sprintf("%s: running at %s (pid %d, state %s)", s.label, s.URL, s.PID, s.State)
}

// clouds are the emulators, in the order `nuv emulator up` starts them and `env` prints them
// (`down` stops them in the reverse order).
var clouds = []cloud{awsCloud{}, azureCloud{}, gcpCloud{}}

// cloudNamed is the emulator called name (aws, azure or gcp).
func cloudNamed(name string) (cloud, error) {
	for _, c := range clouds {
		if c.Name() == name {
			return c, nil
		}
	}
	return nil, cli.Usagef("nuv emulator faults: --cloud %q: want aws, azure or gcp", name)
}

type awsCloud struct{}

func (awsCloud) Name() string                        { return "aws" }
func (awsCloud) Label() string                       { return "emulator" }
func (awsCloud) Dir(home string) string              { return awsemu.Dir(home) }
func (awsCloud) Client(string) (*http.Client, error) { return http.DefaultClient, nil }
func (awsCloud) Running(ctx context.Context, dir string) (string, bool, error) {
	p, ok, err := awsemu.Status(ctx, dir)
	return p.URL(), ok, err
}

type azureCloud struct{}

func (azureCloud) Name() string                            { return "azure" }
func (azureCloud) Label() string                           { return "azure emulator" }
func (azureCloud) Dir(home string) string                  { return azure.Dir(home) }
func (azureCloud) Client(dir string) (*http.Client, error) { return azure.Client(dir) }
func (azureCloud) Running(ctx context.Context, dir string) (string, bool, error) {
	p, ok, err := azure.Status(ctx, dir)
	return p.URL(), ok, err
}

// gcpCloud is the GKE emulator; it runs and records itself as the AWS one does (package
// emulator's process functions), on its own port and directory.
type gcpCloud struct{}

func (gcpCloud) Name() string                        { return "gcp" }
func (gcpCloud) Label() string                       { return "GKE emulator" }
func (gcpCloud) Dir(home string) string              { return gcpDir(home) }
func (gcpCloud) Client(string) (*http.Client, error) { return http.DefaultClient, nil }
func (gcpCloud) Running(ctx context.Context, dir string) (string, bool, error) {
	p, ok, err := awsemu.Status(ctx, dir)
	return p.URL(), ok, err
}

// portEnv is the port variable name, or def when it is unset.
func portEnv(getenv func(string) string, name string, def int) (int, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < 0 || p > 65535 {
		return 0, cli.Usagef("%s=%q is not a port number", name, v)
	}
	return p, nil
}

// serveCommand is what runs a detached emulator: `<nuv> emulator <sub> --delay D [extra...]`.
func serveCommand(env *cli.Env, sub string, extra ...string) ([]string, error) {
	delay, err := Delay(env.Getenv)
	if err != nil {
		return nil, err
	}
	exe := env.Exe
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	return append([]string{exe, "emulator", sub, "--delay", delay.String()}, extra...), nil
}

// loopbackAddr checks the --addr of `nuv emulator <sub>`.
func loopbackAddr(sub, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
		return cli.Usagef("nuv emulator %s: --addr %q must be a loopback host:port", sub, addr)
	}
	return nil
}

// listenAndServe is the end of every detached emulator: listen on addr, record the process in
// dir, say so (listening gets the address), and serve until SIGTERM or SIGINT.
func listenAndServe(ctx context.Context, env *cli.Env, label, dir, addr string, listening func(net.Addr), serve func(context.Context, net.Listener) error) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s listen on %s: %w", label, addr, err)
	}
	_, start, _ := proc.Stat(os.Getpid())
	if err := emucore.WriteRecord(dir, emucore.Record{PID: os.Getpid(), Start: start, Addr: ln.Addr().String(), Dir: dir}); err != nil {
		ln.Close()
		return err
	}
	listening(ln.Addr())
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return serve(ctx, ln)
}

func (awsCloud) Up(ctx context.Context, env *cli.Env, home string) error {
	p, started, err := Ensure(ctx, env, home)
	if err != nil {
		return err
	}
	if started {
		env.Log.Infof("emulator started (pid %d, state %s); `eval \"$(nuv emulator env)\"` points AWS clients at it", p.PID, p.Dir)
	}
	fmt.Fprintln(env.Out, p.URL())
	return nil
}

func (awsCloud) Down(ctx context.Context, env *cli.Env, home string) error {
	stopped, err := awsemu.Down(ctx, awsemu.Dir(home))
	if err != nil {
		return err
	}
	if stopped {
		env.Log.Infof("emulator stopped")
	} else {
		env.Log.Infof("emulator was not running")
	}
	return nil
}

func (awsCloud) Env(ctx context.Context, env *cli.Env, home string) error {
	dir := awsemu.Dir(home)
	p, ok, err := awsemu.Status(ctx, dir)
	if err != nil {
		return err
	}
	if !ok {
		return cli.Exit(1, fmt.Errorf("the emulator is not running: start it with `nuv emulator up`"))
	}
	c, err := awsemu.ReadCredentials(dir)
	if err != nil {
		return err
	}
	// This command exists to print the secret: it goes to stdout only, never to the log.
	fmt.Fprintf(env.Out, "export AWS_ENDPOINT_URL=%s\nexport AWS_ACCESS_KEY_ID=%s\nexport AWS_SECRET_ACCESS_KEY=%s\nexport AWS_REGION=%s\nexport AWS_DEFAULT_REGION=%s\n",
		p.URL(), c.AccessKeyID, c.SecretAccessKey, c.Region, c.Region)
	return printAdminToken(env.Out, "aws", dir)
}

// printAdminToken prints the export line of the admin token of the emulator of cloud with state
// in dir (what its /_nuv/faults requires).
func printAdminToken(w io.Writer, cloud, dir string) error {
	tok, err := emucore.ReadAdminToken(dir)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "export %s=%s\n", emucore.AdminTokenEnv(cloud), tok)
	return err
}

func (gcpCloud) Up(ctx context.Context, env *cli.Env, home string) error {
	g, started, err := EnsureGCP(ctx, env, home)
	if err != nil {
		return fmt.Errorf("GKE emulator: %w", err)
	}
	if started {
		env.Log.Infof("GKE emulator started at %s (pid %d, state %s); `eval \"$(nuv emulator env)\"` points Google clients at it", g.URL(), g.PID, g.Dir)
	}
	return nil
}

func (gcpCloud) Down(ctx context.Context, env *cli.Env, home string) error {
	if _, err := awsemu.Down(ctx, gcpDir(home)); err != nil {
		return fmt.Errorf("GKE emulator: %w", err)
	}
	return nil
}

func (gcpCloud) Env(ctx context.Context, env *cli.Env, home string) error {
	return gcpEnv(ctx, env.Out, home)
}

func (awsCloud) Status(ctx context.Context, home string) (Status, error) {
	dir := awsemu.Dir(home)
	st := Status{Cloud: "aws", label: awsCloud{}.Label()}
	p, ok, err := awsemu.Status(ctx, dir)
	if err != nil || !ok {
		return st, err
	}
	c, err := awsemu.ReadCredentials(dir)
	if err != nil {
		return st, err
	}
	st.Running, st.URL, st.PID, st.State, st.Region, st.Account = true, p.URL(), p.PID, p.Dir, c.Region, c.Account
	return st, nil
}

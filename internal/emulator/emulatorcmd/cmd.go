// Package emulatorcmd is `nuv emulator` (the loopback AWS, Azure and GKE emulators: up, down,
// status, env, faults) and the program that runs it, cmd/nuv-emulator (Main). The emulators are a
// program of their own so that nuv's full program, which users run every day, does not link them:
// `nuv emulator ...` (through the slim nuv, or through nuv-full) hands the command line over to
// nuv-emulator unchanged.
package emulatorcmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	awsemu "github.com/nuv-dev/nuv/internal/emulator/aws"
	"github.com/nuv-dev/nuv/internal/emulator/emucore"
	"github.com/nuv-dev/nuv/internal/paths"
)

const long = `The cloud emulators nuv runs on loopback, each on its own port: AWS (EKS, EC2, IAM and STS in
AWS's own protocols, so the AWS SDKs and the aws CLI work against it), Azure Resource Manager
(https, its own CA and Azure AD authority; managed clusters and agent pools) and GKE (the
ClusterManager API in gRPC and REST, for the Go client and gcloud). Each cluster they create is a
real local control plane. State persists under $NUV_HOME/emulator.

Environment: NUV_EMULATOR_PORT (default 5002; 0 picks a free port), NUV_EMULATOR_DELAY (how long
resources stay CREATING/DELETING, default 2s), NUV_EMULATOR_REGION (region of a new emulator,
default us-east-1), NUV_AZURE_EMULATOR_PORT (default 5003), NUV_EMULATOR_GCP_PORT (default 5004;
any free port when only NUV_EMULATOR_PORT is set), NUV_EMULATOR_GCP_PROJECT (project of a new GKE
emulator, default nuv-emulator), NUV_HOME.`

const faultsLong = `Without a verb (or with list) prints the injected faults; "add JSON" adds one (or a list);
"clear" removes all. AWS's emulator by default; --cloud azure|gcp (or the older spellings
--azure and a first word gcp) names another.`

// NewCommand is `nuv emulator`.
func NewCommand() cli.Command {
	simple := func(verb, short string, do func(context.Context, *cli.Env, string) error) cli.Verb {
		return cli.Verb{Name: verb, Short: short, Run: func(ctx context.Context, env *cli.Env, args []string) error {
			u := cli.Usage{Line: "nuv emulator " + verb, Short: short, Long: long}
			fs := cli.NewFlagSet("nuv emulator " + verb)
			if done, err := cli.Parse(env, fs, u, args); done || err != nil {
				return err
			}
			if err := cli.NoArgs(fs, u); err != nil {
				return err
			}
			home, err := paths.EnsureHome(env.Getenv)
			if err != nil {
				return err
			}
			return do(ctx, env, home)
		}}
	}
	return cli.GroupCommand("emulator", &cli.Group{
		Name:  "nuv emulator",
		Short: "the loopback cloud emulators: AWS, Azure, GKE (up|down|status|env|faults)",
		Long:  long,
		Examples: `nuv emulator up
eval "$(nuv emulator env)"
nuv emulator faults add '{"operation":"eks:CreateCluster","kind":"throttle","every":3}'
nuv emulator faults --cloud azure add '{"operation":"AgentPools_CreateOrUpdate","kind":"lro-failure","count":1}'
nuv emulator faults --cloud gcp add '{"method":"CreateNodePool","kind":"fail-operation"}'`,
		Verbs: []cli.Verb{
			simple("up", "start them (detached) unless they run; prints the AWS endpoint (status shows all three)", up),
			simple("down", "stop them (state stays; the control planes of their clusters keep running)", down),
			{Name: "status", Short: statusShort, Run: statusCmd},
			simple("env", `print the shell lines that point AWS and Google clients at them: eval "$(nuv emulator env)"`, envLines),
			{Name: "faults", Short: "list, add (JSON) or clear the injected faults of an emulator", Run: faultsCmd},
			{Name: "serve", Hidden: true, Short: "serve the AWS emulator in the foreground", Run: serveCmd},
			{Name: "serve-azure", Hidden: true, Short: "serve the Azure emulator in the foreground", Run: serveAzureCmd},
			{Name: "serve-gcp", Hidden: true, Short: "serve the GKE emulator in the foreground", Run: serveGCP},
		},
	})
}

func up(ctx context.Context, env *cli.Env, home string) error {
	for _, c := range clouds {
		if err := c.Up(ctx, env, home); err != nil {
			return err
		}
	}
	return nil
}

func down(ctx context.Context, env *cli.Env, home string) error {
	for i := len(clouds) - 1; i >= 0; i-- {
		if err := clouds[i].Down(ctx, env, home); err != nil {
			return err
		}
	}
	return nil
}

const statusShort = "print each one's endpoint and what it emulates (exit 1 when any of them does not run)"

// statusCmd is `nuv emulator status [-o table|wide|json|yaml]`.
func statusCmd(ctx context.Context, env *cli.Env, args []string) error {
	u := cli.Usage{Line: "nuv emulator status [-o table|wide|json|yaml]", Short: statusShort,
		Long:     "-o json|yaml print the machine form: a list with each emulator's cloud, running, url, pid, state and\nwhat it emulates (region, account; subscription, tenant, ca), never a credential; the exit code is\nthe same in every form.\n\n" + long,
		Examples: "nuv emulator status\nnuv emulator status -o json"}
	fs := cli.NewFlagSet("nuv emulator status")
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
	return status(ctx, env.Out, home, &output)
}

// status prints every emulator's status in the format of o, in the order up starts them; exit 1
// when any of them does not run.
func status(ctx context.Context, w io.Writer, home string, o *cli.OutputOption) error {
	var all []Status
	stopped := false
	for _, c := range clouds {
		st, err := c.Status(ctx, home)
		if !o.Machine() { // a line as each answers, as before -o existed
			if werr := writeStatus(w, o, []Status{st}); werr != nil {
				return werr
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", c.Label(), err)
		}
		stopped = stopped || !st.Running
		all = append(all, st)
	}
	if o.Machine() {
		if err := writeStatus(w, o, all); err != nil {
			return err
		}
	}
	if stopped {
		return cli.Exit(1, nil)
	}
	return nil
}

// writeStatus prints the emulators' statuses: one line each (table, wide), or the machine form.
func writeStatus(w io.Writer, o *cli.OutputOption, all []Status) error {
	if done, err := o.Write(w, all); done {
		return err
	}
	for _, st := range all {
		fmt.Fprintln(w, st.line(o.Wide()))
	}
	return nil
}

func envLines(ctx context.Context, env *cli.Env, home string) error {
	for _, c := range clouds {
		if err := c.Env(ctx, env, home); err != nil {
			return err
		}
	}
	return nil
}

// Port is NUV_EMULATOR_PORT or awsemu.DefaultPort.
func Port(getenv func(string) string) (int, error) {
	return portEnv(getenv, "NUV_EMULATOR_PORT", awsemu.DefaultPort)
}

// Delay is NUV_EMULATOR_DELAY or 2s.
func Delay(getenv func(string) string) (time.Duration, error) {
	v := getenv("NUV_EMULATOR_DELAY")
	if v == "" {
		return 2 * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, cli.Usagef("NUV_EMULATOR_DELAY=%q is not a duration (e.g. 2s, 500ms, 0s)", v)
	}
	return d, nil
}

// Ensure starts the emulator for env (running `<nuv> emulator serve`) unless it runs.
func Ensure(ctx context.Context, env *cli.Env, home string) (awsemu.Process, bool, error) {
	port, err := Port(env.Getenv)
	if err != nil {
		return awsemu.Process{}, false, err
	}
	var extra []string
	if r := env.Getenv("NUV_EMULATOR_REGION"); r != "" {
		extra = []string{"--region", r}
	}
	cmd, err := serveCommand(env, "serve", extra...)
	if err != nil {
		return awsemu.Process{}, false, err
	}
	return awsemu.Up(ctx, awsemu.UpOptions{Dir: awsemu.Dir(home), Port: port, Command: cmd})
}

// serveCmd is the detached process: `nuv emulator serve --dir D --addr A [--delay D] [--region R]`.
func serveCmd(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("nuv emulator serve")
	dir := fs.String("dir", "", "state directory")
	addr := fs.String("addr", "127.0.0.1:"+strconv.Itoa(awsemu.DefaultPort), "listen address (loopback)")
	delay := fs.Duration("delay", 2*time.Second, "how long resources stay in transitional statuses")
	region := fs.String("region", awsemu.DefaultRegion, "region of a new emulator")
	if done, err := cli.Parse(env, fs, cli.Usage{Line: "nuv emulator serve --dir DIR [flags]", Short: "serve the AWS emulator in the foreground (what up starts detached)"}, args); done || err != nil {
		return err
	}
	if *dir == "" {
		return cli.Usagef("nuv emulator serve: --dir is required")
	}
	if err := loopbackAddr("serve", *addr); err != nil {
		return err
	}
	s, err := awsemu.New(awsemu.Options{Dir: *dir, Region: *region, Delay: *delay, Log: env.Log})
	if err != nil {
		return err
	}
	return listenAndServe(ctx, env, "emulator", *dir, *addr, func(a net.Addr) {
		env.Log.Infof("emulator listening on %s (state %s, delay %s)", a, *dir, *delay)
	}, func(ctx context.Context, ln net.Listener) error { return awsemu.Serve(ctx, ln, s) })
}

// faultsCmd lists, adds or clears the faults of a running emulator: AWS's by default, another's
// with --cloud aws|azure|gcp (or the older spellings --azure and gcp).
func faultsCmd(ctx context.Context, env *cli.Env, args []string) error {
	u := cli.Usage{Line: "nuv emulator faults [--cloud aws|azure|gcp] [list | add JSON | clear]",
		Short: "list, add (JSON) or clear the injected faults of an emulator", Long: faultsLong,
		Examples: `nuv emulator faults add '{"operation":"eks:CreateCluster","kind":"throttle","every":3}'
nuv emulator faults --cloud gcp clear`}
	fs := cli.NewFlagSet("nuv emulator faults")
	var name string
	cli.EnumVarP(fs, &name, "cloud", "", "aws", []string{"aws", "azure", "gcp"}, "the emulator whose faults these are")
	azure := fs.Bool("azure", false, "the Azure emulator's (same as --cloud azure)")
	if done, err := cli.Parse(env, fs, u, args); done || err != nil {
		return err
	}
	args = fs.Args()
	if *azure {
		name = "azure"
	}
	if len(args) > 0 && args[0] == "gcp" {
		name, args = "gcp", args[1:]
	}
	c, err := cloudNamed(name)
	if err != nil {
		return err
	}
	method, body := http.MethodGet, ""
	switch {
	case len(args) == 0 || (len(args) == 1 && args[0] == "list"):
	case len(args) == 2 && args[0] == "add":
		method, body = http.MethodPost, args[1]
	case len(args) == 1 && args[0] == "clear":
		method = http.MethodDelete
	default:
		return u.Errorf("want no argument, list, add JSON or clear; got %q", strings.Join(args, " "))
	}
	home, err := paths.EnsureHome(env.Getenv)
	if err != nil {
		return err
	}
	dir := c.Dir(home)
	url, ok, err := c.Running(ctx, dir)
	if err != nil {
		return err
	}
	if !ok {
		return cli.Exit(1, fmt.Errorf("the %s is not running: start it with `nuv emulator up`", c.Label()))
	}
	hc, err := c.Client(dir)
	if err != nil {
		return err
	}
	tok, err := emucore.ReadAdminToken(dir)
	if err != nil {
		return fmt.Errorf("%s faults: %w", c.Label(), err)
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := emucore.NewAdminRequest(ctx, method, url+"/_nuv/faults", tok, rd)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s faults: %w", c.Label(), err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return cli.Exit(2, fmt.Errorf("%s", bytes.TrimSpace(b)))
	}
	_, err = env.Out.Write(b)
	return err
}

package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
)

// verb describes one deploy command.
type verb struct {
	name, short, usage string
	dryRun             bool // accepts --dry-run
	run                func(ctx context.Context, env *cli.Env, o Options, f *flags) error
}

// flags are the parsed flags of one invocation (a new set each time; no global state).
type flags struct {
	all     bool
	cluster string
	args    []string
}

// Commands returns the deploy verbs as nuv commands. hasDtest tells `up` at run time whether nuv
// has a `dtest` command to run after the instance is Ready.
func Commands(hasDtest func() bool) []cli.Command {
	verbs := []verb{
		{name: "operator", short: "deploy the operator (kustomize + server-side apply), wait until Available", dryRun: true,
			usage: "nuv operator [--dry-run] [--timeout D] [--kubeconfig F]\n\nImage: MY_OPERATOR_IMAGE[:TAG], else the one build-and-load recorded for the cluster, else the kustomization's default.",
			run:   func(ctx context.Context, _ *cli.Env, o Options, _ *flags) error { return Operator(ctx, o) }},
		{name: "instance", short: "apply tests/<type>/$WHISK.yaml, wait until the Whisk is Ready", dryRun: true,
			usage: "nuv instance [--dry-run] [--timeout D] [--kubeconfig F]\n\nWHISK names the instance file (default whisk); tests/<type>/ is chosen by the cluster type, else tests/generic/.",
			run:   func(ctx context.Context, _ *cli.Env, o Options, _ *flags) error { return Instance(ctx, o) }},
		{name: "destroy", short: "delete the instance, then the operator, waiting for each", dryRun: true,
			usage: "nuv destroy [--dry-run] [--timeout D] [--kubeconfig F]",
			run:   func(ctx context.Context, _ *cli.Env, o Options, _ *flags) error { return Destroy(ctx, o) }},
		{name: "clean", short: "delete everything the operator and its instances created (PVCs included)", dryRun: true,
			usage: "nuv clean [--dry-run] [--timeout D] [--kubeconfig F]",
			run:   func(ctx context.Context, _ *cli.Env, o Options, _ *flags) error { return Clean(ctx, o) }},
		{name: "defin", short: "remove finalizers from stuck Whisks, listing what it touched", dryRun: true,
			usage: "nuv defin [--all] [--dry-run] [--kubeconfig F]\n\nWithout --all only Whisks being deleted are touched.",
			run:   func(ctx context.Context, _ *cli.Env, o Options, f *flags) error { return Defin(ctx, o, f.all) }},
		{name: "run", short: "run the operator from source against the selected cluster (foreground)",
			usage: "nuv run [--kubeconfig F] [-- operator flags]",
			run:   func(ctx context.Context, _ *cli.Env, o Options, f *flags) error { return Run(ctx, o, f.args) }},
		{name: "status", short: "the operator and the Whisks on the selected cluster",
			usage: "nuv status [--kubeconfig F]",
			run:   func(ctx context.Context, _ *cli.Env, o Options, _ *flags) error { return Status(ctx, o) }},
		{name: "up", short: "local cluster dev + operator + instance, Ready: the first command to run",
			usage: "nuv up [--cluster NAME] [--timeout D]",
			run: func(ctx context.Context, env *cli.Env, o Options, f *flags) error {
				u := UpOptions{Options: o, Cluster: f.cluster}
				if hasDtest != nil && hasDtest() {
					u.Dtest = func(ctx context.Context) error {
						// --keep: up leaves the deployment running (dtest would otherwise destroy it)
						return runNuv(ctx, env, o.Project, "dtest", "--keep", "--timeout", o.Timeout.String())
					}
				}
				return Up(ctx, u)
			}},
	}
	cmds := make([]cli.Command, 0, len(verbs))
	for _, v := range verbs {
		v := v
		cmds = append(cmds, cli.Command{Name: v.name, Short: v.short, Run: func(ctx context.Context, env *cli.Env, args []string) error {
			return v.exec(ctx, env, args)
		}})
	}
	return cmds
}

func (v verb) exec(ctx context.Context, env *cli.Env, args []string) error {
	fs := pflag.NewFlagSet(v.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o Options
	var f flags
	fs.DurationVar(&o.Timeout, "timeout", DefaultTimeout, "bound of each wait")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: the project's selected cluster)")
	if v.dryRun {
		fs.BoolVar(&o.DryRun, "dry-run", false, "server-side dry run: print what would change, change nothing")
	}
	switch v.name {
	case "defin":
		fs.BoolVar(&f.all, "all", false, "remove the finalizers of every Whisk, not only of those being deleted")
	case "up":
		fs.StringVar(&f.cluster, "cluster", DefaultUpCluster, "name of the local cluster to create or reuse")
	}
	fs.Usage = func() {}
	usage := func() string {
		return fmt.Sprintf("%s: %s\n\nUsage: %s\n\nFlags:\n%s", v.name, v.short, v.usage, fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(env.Out, usage())
			return nil
		}
		return cli.Usagef("%s: %v\n\n%s", v.name, err, usage())
	}
	f.args = fs.Args()
	if len(f.args) > 0 && v.name != "run" {
		return cli.Usagef("%s: unexpected arguments %s", v.name, strings.Join(f.args, " "))
	}
	if o.Timeout <= 0 {
		return cli.Usagef("%s: --timeout must be positive", v.name)
	}
	o.Project = paths.Project(env.Getenv, env.Dir)
	o.Out, o.Log, o.Getenv = env.Out, env.Log, env.Getenv
	return v.run(ctx, env, o, &f)
}

// runNuv runs this nuv binary with args in the project directory.
func runNuv(ctx context.Context, env *cli.Env, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, env.Exe, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = env.Out, env.Err
	return cmd.Run()
}

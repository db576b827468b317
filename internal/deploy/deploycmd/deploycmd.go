// Package deploycmd holds the operator verbs as nuv commands (operator, instance, destroy, clean,
// defin, run, status) and `nuv up`, which composes them (internal/up). The verbs themselves live
// in internal/deploy; this package only reads their command lines.
package deploycmd

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/deploy"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/up"
)

// verb describes one deploy command.
type verb struct {
	name   string
	usage  cli.Usage
	dryRun bool // accepts --dry-run
	args   bool // takes arguments after its flags (run: the operator's)
	flags  func(fs *pflag.FlagSet, f *flags)
	run    func(ctx context.Context, env *cli.Env, o deploy.Options, f *flags) error
}

// flags are the parsed flags of one invocation (a new set each time; no global state).
type flags struct {
	all       bool
	cluster   string
	skipDtest bool
	args      []string
	output    cli.OutputOption
}

const imageNote = "Image: MY_OPERATOR_IMAGE[:TAG], else the one build-and-load recorded for the cluster, else the kustomization's default\n" +
	"(checked before applying on clusters that pull images)."

func verbs() []verb {
	return []verb{
		{name: "operator", dryRun: true,
			usage: cli.Usage{Line: "nuv operator [--dry-run] [--timeout D] [--kubeconfig F]", Examples: "nuv operator\nnuv operator --dry-run\nMY_OPERATOR_IMAGE=registry.local:5000/op:dev nuv operator", Short: "deploy the operator (kustomize + server-side apply), wait until Available", Long: imageNote},
			run: func(ctx context.Context, _ *cli.Env, o deploy.Options, _ *flags) error {
				return deploy.Operator(ctx, o)
			}},
		{name: "instance", dryRun: true,
			usage: cli.Usage{Line: "nuv instance [--dry-run] [--timeout D] [--kubeconfig F]", Examples: "nuv instance\nWHISK=whisk-ha nuv instance --timeout 5m", Short: "apply tests/<type>/$WHISK.yaml, wait until the Whisk is Ready",
				Long: "WHISK names the instance file (default whisk); tests/<type>/ is chosen by the cluster type, else tests/generic/."},
			run: func(ctx context.Context, _ *cli.Env, o deploy.Options, _ *flags) error {
				return deploy.Instance(ctx, o)
			}},
		{name: "destroy", dryRun: true,
			usage: cli.Usage{Line: "nuv destroy [--dry-run] [--timeout D] [--kubeconfig F]", Examples: "nuv destroy\nnuv destroy --dry-run", Short: "delete the instance, then the operator, waiting for each"},
			run:   func(ctx context.Context, _ *cli.Env, o deploy.Options, _ *flags) error { return deploy.Destroy(ctx, o) }},
		{name: "clean", dryRun: true,
			usage: cli.Usage{Line: "nuv clean [--dry-run] [--timeout D] [--kubeconfig F]", Examples: "nuv clean --dry-run\nnuv clean", Short: "delete everything the operator and its instances created (PVCs included)"},
			run:   func(ctx context.Context, _ *cli.Env, o deploy.Options, _ *flags) error { return deploy.Clean(ctx, o) }},
		{name: "defin", dryRun: true,
			usage: cli.Usage{Line: "nuv defin [--all] [--dry-run] [--kubeconfig F]", Examples: "nuv defin\nnuv defin --all --dry-run", Short: "remove finalizers from stuck Whisks, listing what it touched",
				Long: "Without --all only Whisks being deleted are touched."},
			flags: func(fs *pflag.FlagSet, f *flags) {
				fs.BoolVar(&f.all, "all", false, "remove the finalizers of every Whisk, not only of those being deleted")
			},
			run: func(ctx context.Context, _ *cli.Env, o deploy.Options, f *flags) error {
				return deploy.Defin(ctx, o, f.all)
			}},
		{name: "run", args: true,
			usage: cli.Usage{Line: "nuv run [--kubeconfig F] [-- operator flags]", Examples: "nuv run\nnuv run -- --zap-log-level=debug", Short: "run the operator from source against the selected cluster (foreground)"},
			run: func(ctx context.Context, _ *cli.Env, o deploy.Options, f *flags) error {
				return deploy.Run(ctx, o, f.args)
			}},
		{name: "status",
			usage: cli.Usage{Line: "nuv status [--kubeconfig F] [-o table|wide|json|yaml]", Short: "the operator and the Whisks on the selected cluster",
				Long:     "-o wide adds each condition's reason; -o json|yaml print the machine form: cluster (name, type, server,\nsource), operator (deployment, deployed, available, reason, images), host, whisks (ready, reason,\nconditions).",
				Examples: "nuv status\nnuv status -o json\nnuv status --kubeconfig clusters/dev.kubeconfig"},
			flags: func(fs *pflag.FlagSet, f *flags) { f.output.AddFlags(fs) },
			run: func(ctx context.Context, _ *cli.Env, o deploy.Options, f *flags) error {
				_ = f.output.Validate(cli.Usage{})
				return deploy.StatusAs(ctx, o, &f.output)
			}},
		{name: "up",
			usage: cli.Usage{Line: "nuv up [--cluster NAME] [--timeout D] [--skip-dtest]", Examples: "nuv up\nnuv up --cluster demo --skip-dtest", Short: "local cluster dev + operator + instance, Ready: the first command to run",
				Long: "Creates (or reuses) the local cluster, selects it, deploys the operator and the instance and runs the\ndeployment test, keeping the deployment. Run again it changes nothing."},
			flags: func(fs *pflag.FlagSet, f *flags) {
				fs.StringVar(&f.cluster, "cluster", up.DefaultCluster, "name of the local cluster to create or reuse")
				fs.BoolVar(&f.skipDtest, "skip-dtest", false, "leave out the deployment test")
			},
			run: func(ctx context.Context, env *cli.Env, o deploy.Options, f *flags) error {
				return up.Up(ctx, env, up.Options{Options: o, Cluster: f.cluster, SkipDtest: f.skipDtest})
			}},
	}
}

// NewCommands returns the operator verbs and `nuv up` as nuv commands.
func NewCommands() []cli.Command {
	vs := verbs()
	cmds := make([]cli.Command, 0, len(vs))
	for _, v := range vs {
		c := cli.Command{Name: v.name, Short: v.usage.Short, Run: func(ctx context.Context, env *cli.Env, args []string) error {
			return v.exec(ctx, env, args)
		}}
		if v.name == "up" {
			c.FlagValues = map[string]string{"cluster": cli.ValCluster}
		}
		cmds = append(cmds, c)
	}
	return cmds
}

func (v verb) exec(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(v.name)
	var (
		o       deploy.Options
		f       flags
		timeout cli.TimeoutOption
		sel     cli.ClusterOption
	)
	timeout.AddFlags(fs, deploy.DefaultTimeout, "bound of each wait")
	if v.name != "up" { // up's cluster is its local cluster (--cluster)
		sel.AddFlags(fs)
	}
	if v.dryRun {
		fs.BoolVar(&o.DryRun, "dry-run", false, "server-side dry run: print what would change (secrets shown as ***), change nothing")
	}
	if v.flags != nil {
		v.flags(fs, &f)
	}
	if done, err := cli.Parse(env, fs, v.usage, args); done || err != nil {
		return err
	}
	if !v.args {
		if err := cli.NoArgs(fs, v.usage); err != nil {
			return err
		}
	}
	f.args = fs.Args()
	if err := timeout.Validate(v.usage, false); err != nil {
		return err
	}
	o.Timeout, o.Kubeconfig = timeout.Timeout, sel.Kubeconfig
	o.Project = paths.Project(env.Getenv, env.Dir)
	o.Out, o.Log, o.Getenv = env.Out, env.Log, env.Getenv
	return v.run(ctx, env, o, &f)
}

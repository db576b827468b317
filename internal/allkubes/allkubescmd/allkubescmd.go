// Package allkubescmd is `nuv all-kubes [flags] -- <target> [args]` over internal/allkubes.
package allkubescmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/nuv-dev/nuv/internal/allkubes"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/upgrade"
)

var usage = cli.Usage{
	Line:  "nuv all-kubes [flags] -- <target> [args]\n       nuv all-kubes plan [flags] -- <target> [args]   (the cells for a CI matrix; plan -h)",
	Short: "run a target on every cluster in parallel, with one matrix report",
	Long: `Runs <target> once per clusters/*.kubeconfig, concurrently, each run a child nuv process with its
own KUBECONFIG, KUBE, NUV_CLUSTER and scratch TMPDIR (~/.kube/config is never used), and writes
one report under <project>/_reports/<timestamp>/ (report.json, junit.xml, index.html, logs/,
artifacts/ of failed clusters; private to you, secret values masked). The exit code is non-zero
when any cluster did not pass.

How <target> is resolved:
  a nuv built-in command (dtest, itest, utest, test, operator, ...)  nuv <target> [args]
  a word starting with "-" (a tool, e.g. -task)                       nuv <target> [args]
  anything else, or any target with --task                           nuv -task <target> [args]
                                                                     (a task of the project Taskfile)

With --upgrade-from REF (a git tag or commit of the project, or an operator image) the report
gets a second axis: on each cluster the target runs twice, one after the other, as an install
cell and as an upgrade cell, whose child gets NUV_UPGRADE_FROM=REF: dtest then installs the
operator and instance at REF, upgrades to the working tree's operator and checks that the
instance kept its UID and its data before its usual phases.

Without arguments it prints this help.`,
	Examples: "nuv all-kubes -- dtest\nnuv all-kubes --only dev,kind-1 --retries 1 -- itest\nnuv all-kubes --upgrade-from v1.2.0 -- dtest\nnuv all-kubes -- addons apply",
}

// NewCommand returns `nuv all-kubes`; isBuiltin tells whether a word is one of nuv's built-in
// commands.
func NewCommand(isBuiltin func(string) bool) cli.Command {
	return cli.Command{
		Name:  "all-kubes",
		Short: "run a target on every cluster in parallel, with one matrix report",
		Run: func(ctx context.Context, env *cli.Env, args []string) error {
			return run(ctx, env, args, isBuiltin)
		},
		Args:       []string{cli.ValCommand},
		FlagValues: map[string]string{"only": cli.ValInventory, "exclude": cli.ValInventory},
	}
}

func run(ctx context.Context, env *cli.Env, args []string, isBuiltin func(string) bool) error {
	if len(args) > 0 && args[0] == "plan" {
		return allkubes.PlanCommand(ctx, env, args[1:])
	}
	fs := cli.NewFlagSet("all-kubes")
	fs.SetInterspersed(false)
	only := fs.StringSlice("only", nil, "run only on these clusters (names, comma separated)")
	exclude := fs.StringSlice("exclude", nil, "skip these clusters")
	parallel := fs.StringP("parallel", "p", "0", "at most N runs at once (0: all clusters at once; auto: from cores, memory and which clusters are local)")
	var timeout cli.TimeoutOption
	timeout.AddFlags(fs, 30*time.Minute, "end a run that takes longer (0: no limit)")
	retries := fs.Int("retries", 0, "run a failed cluster again up to R times")
	probe := fs.Duration("probe-timeout", 5*time.Second, "a cluster that does not answer within this is unreachable")
	group := fs.Bool("group", false, "print each cluster's output as one block when it ends")
	asTask := fs.Bool("task", false, "run <target> as a task of the project Taskfile even if nuv has a command of that name")
	noProgress := fs.Bool("no-progress", false, "no live progress line, even on a terminal")
	reports := fs.String("reports", "", "write the report directory under this directory (default <project>/_reports)")
	upgradeFrom := fs.String("upgrade-from", "", "also run each cluster's upgrade path: install at this git tag/commit (or operator image), upgrade to the working tree, then the target")
	if done, err := cli.Parse(env, fs, usage, args); done || err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		if len(args) == 0 {
			usage.Print(env.Out, fs) // nuv's one habit: no arguments, the help
			return nil
		}
		return usage.Errorf("all-kubes: name a target, e.g. `nuv all-kubes -- dtest`")
	}
	if err := timeout.Validate(usage, true); err != nil {
		return err
	}
	nParallel, auto, err := allkubes.ParseParallel(*parallel)
	if err != nil {
		return usage.Errorf("all-kubes: %v", err)
	}
	if *retries < 0 || *probe <= 0 {
		return usage.Errorf("all-kubes: --retries must not be negative, --probe-timeout must be positive")
	}
	command := allkubes.Resolve(rest, *asTask, isBuiltin)
	project := paths.Project(env.Getenv, env.Dir)
	if fs.Changed("upgrade-from") {
		// a bad version is one error now, not a failed cell per cluster
		src, err := upgrade.Resolve(ctx, project, *upgradeFrom)
		if err != nil {
			return usage.Errorf("all-kubes: %v", err)
		}
		if src.Commit != "" {
			fmt.Fprintf(env.Out, "all-kubes: upgrade path from %s (commit %s)\n", *upgradeFrom, src.Commit)
		} else {
			fmt.Fprintf(env.Out, "all-kubes: upgrade path from the operator image %s\n", src.Image)
		}
	}
	home, err := paths.Home(env.Getenv)
	if err != nil {
		return err
	}
	progress := false
	if f, ok := env.Out.(*os.File); ok && !*noProgress {
		progress = term.IsTerminal(int(f.Fd()))
	}
	res, err := allkubes.Run(ctx, allkubes.Options{
		Project: project, Exe: env.Exe, Command: command, Target: rest[0], Args: rest[1:],
		Only: *only, Exclude: *exclude, Parallel: nParallel, AutoParallel: auto, Timeout: timeout.Timeout, Retries: *retries,
		ProbeTimeout: *probe, Group: *group, Progress: progress, ReportsDir: allkubes.AbsIn(env.Dir, *reports),
		UpgradeFrom: strings.TrimSpace(*upgradeFrom),
		Out:         env.Out, Log: env.Log, Home: home, Inv: allkubes.KubeInventory{Getenv: env.Getenv},
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, allkubes.ErrInterrupted):
		return cli.Exit(cli.ExitInterrupted, err)
	case res != nil:
		return cli.Exit(cli.ExitFailure, err)
	}
	return fmt.Errorf("all-kubes: %w", err)
}

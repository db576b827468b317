package allkubes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/paths"
)

const usage = `Usage: nuv all-kubes [flags] -- <target> [args]
       nuv all-kubes plan [flags] -- <target> [args]   (the cells for a CI matrix; plan -h)

Runs <target> once per clusters/*.kubeconfig, concurrently, each run a child nuv process with its
own KUBECONFIG, KUBE, NUV_CLUSTER and scratch TMPDIR (~/.kube/config is never used), and writes
one report under <project>/_reports/<timestamp>/ (report.json, junit.xml, index.html, logs/,
artifacts/ of failed clusters). The exit code is non-zero when any cluster did not pass.

How <target> is resolved:
  a nuv built-in command (dtest, itest, utest, test, operator, ...)  nuv <target> [args]
  a word starting with "-" (a tool, e.g. -task)                       nuv <target> [args]
  anything else, or any target with --task                           nuv -task <target> [args]
                                                                     (a task of the project Taskfile)

Flags:
`

// Command is `nuv all-kubes`; isBuiltin tells whether a word is one of nuv's built-in commands.
func Command(isBuiltin func(string) bool) cli.Command {
	return cli.Command{
		Name:  "all-kubes",
		Short: "run a target on every cluster in parallel, with one matrix report",
		Run: func(ctx context.Context, env *cli.Env, args []string) error {
			return runCommand(ctx, env, args, isBuiltin)
		},
	}
}

func runCommand(ctx context.Context, env *cli.Env, args []string, isBuiltin func(string) bool) error {
	if len(args) > 0 && args[0] == "plan" {
		return planCommand(ctx, env, args[1:])
	}
	fs := pflag.NewFlagSet("all-kubes", pflag.ContinueOnError)
	fs.SetOutput(env.Err)
	fs.SetInterspersed(false)
	only := fs.StringSlice("only", nil, "run only on these clusters (names, comma separated)")
	exclude := fs.StringSlice("exclude", nil, "skip these clusters")
	parallel := fs.StringP("parallel", "p", "0", "at most N runs at once (0: all clusters at once; auto: from cores, memory and which clusters are local)")
	timeout := fs.Duration("timeout", 30*time.Minute, "end a run that takes longer (0: no limit)")
	retries := fs.Int("retries", 0, "run a failed cluster again up to R times")
	probe := fs.Duration("probe-timeout", 5*time.Second, "a cluster that does not answer within this is unreachable")
	group := fs.Bool("group", false, "print each cluster's output as one block when it ends")
	asTask := fs.Bool("task", false, "run <target> as a task of the project Taskfile even if nuv has a command of that name")
	noProgress := fs.Bool("no-progress", false, "no live progress line, even on a terminal")
	reports := fs.String("reports", "", "write the report directory under this directory (default <project>/_reports)")
	fs.Usage = func() {
		fmt.Fprint(env.Err, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return cli.Usagef("all-kubes: %v", err)
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fs.Usage()
		return cli.Usagef("all-kubes: name a target, e.g. `nuv all-kubes -- dtest`")
	}
	nParallel, auto, err := ParseParallel(*parallel)
	if err != nil {
		return cli.Usagef("all-kubes: %v", err)
	}
	if *retries < 0 || *timeout < 0 || *probe <= 0 {
		return cli.Usagef("all-kubes: --retries and --timeout must not be negative, --probe-timeout must be positive")
	}
	command := Resolve(rest, *asTask, isBuiltin)
	project := paths.Project(env.Getenv, env.Dir)
	home, err := paths.Home(env.Getenv)
	if err != nil {
		return err
	}
	progress := false
	if f, ok := env.Out.(*os.File); ok && !*noProgress {
		progress = term.IsTerminal(int(f.Fd()))
	}
	res, err := Run(ctx, Options{
		Project: project, Exe: env.Exe, Command: command, Target: rest[0], Args: rest[1:],
		Only: *only, Exclude: *exclude, Parallel: nParallel, AutoParallel: auto, Timeout: *timeout, Retries: *retries,
		ProbeTimeout: *probe, Group: *group, Progress: progress, ReportsDir: absIn(env.Dir, *reports),
		Out: env.Out, Log: env.Log, Home: home, Inv: KubeInventory{Getenv: env.Getenv},
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrInterrupted):
		return cli.Exit(130, err)
	case res != nil:
		return cli.Exit(1, err)
	}
	return fmt.Errorf("all-kubes: %w", err)
}

// Resolve turns the words after -- into the child's nuv arguments (see the usage text).
func Resolve(words []string, asTask bool, isBuiltin func(string) bool) []string {
	target := words[0]
	if !asTask && (strings.HasPrefix(target, "-") || (isBuiltin != nil && isBuiltin(target))) {
		return append([]string(nil), words...)
	}
	return append([]string{"-task"}, words...)
}

// KubeInventory is the Inventory of nuv's clusters/ directory (internal/kube). A cluster's type is
// its explicit override (clusters/<name>.type) when there is one, else detected afresh.
type KubeInventory struct{ Getenv func(string) string }

// List implements Inventory.
func (k KubeInventory) List(project string) ([]Cluster, error) {
	cs, err := kube.List(project)
	if err != nil {
		return nil, err
	}
	out := make([]Cluster, 0, len(cs))
	for _, c := range cs {
		t, _ := kube.Override(project, c.Name, k.Getenv)
		src := ""
		if t != "" {
			src = "DETECT_FORCE or detect.force"
			if _, err := os.Stat(kube.OverridePath(project, c.Name)); err == nil {
				src = kube.OverridePath(project, c.Name)
			}
		}
		out = append(out, Cluster{Name: c.Name, Kubeconfig: c.Path, Server: c.Server, Type: t, TypeSource: src, Err: c.Err})
	}
	return out, nil
}

// RESTConfig implements Inventory.
func (KubeInventory) RESTConfig(path string) (*rest.Config, error) { return kube.RESTConfig(path) }

// Nodes implements Inventory.
func (KubeInventory) Nodes(ctx context.Context, cfg *rest.Config) ([]corev1.Node, error) {
	return ListNodes(ctx, cfg)
}

// absIn makes a path given on the command line absolute against dir ("" stays "").
func absIn(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

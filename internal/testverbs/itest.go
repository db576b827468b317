package testverbs

import (
	"context"
	"fmt"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/itest"
	"github.com/nuv-dev/nuv/internal/report"
)

// ItestCommand is `nuv itest [T=prefix]`.
func ItestCommand() cli.Command {
	return cli.Command{Name: "itest", Short: itestUsage.Short, Run: runItest}
}

func runItest(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("itest")
	timeout := fs.Duration("timeout", itest.DefaultTimeout, "default timeout of assert, error and delete steps")
	keep := fs.Bool("keep", false, "keep each test's namespace for debugging")
	u := itestUsage
	if done, err := cli.Parse(env, fs, u, args); done || err != nil {
		return err
	}
	prefix, rest := prefixArg(env, fs.Args())
	if len(rest) > 0 {
		return u.Errorf("itest: unexpected arguments %q (filter with T=prefix)", rest)
	}
	t, err := resolve(ctx, env)
	if err != nil {
		return fmt.Errorf("itest: %w", err)
	}
	st := &steps{getenv: env.Getenv}
	err = itestInto(ctx, env, t, prefix, *timeout, *keep, st)
	if werr := st.write(); werr != nil {
		env.Log.Warnf("itest: %v", werr)
	}
	return err
}

// itestInto runs the integration tests on t, recording each test as a step in st.
func itestInto(ctx context.Context, env *cli.Env, t *target, prefix string, timeout time.Duration, keep bool, st *steps) error {
	fmt.Fprintf(env.Out, "itest on %s (type %s)\n", t.Name, t.Type)
	results, err := itest.Run(ctx, itest.Config{
		Project: t.Project, KubeType: t.Type, Cluster: t.Name, Kubeconfig: t.Kubeconfig, REST: t.Config,
		Prefix: prefix, Timeout: timeout, Out: env.Out, Getenv: env.Getenv, Keep: keep,
		Artifacts: env.Getenv(report.EnvArtifacts), Touched: env.Getenv(report.EnvTouched),
	})
	for _, r := range results {
		s := report.Step{Name: r.Name, Status: report.Passed, Seconds: report.Seconds(r.Duration)}
		if r.Err != nil {
			s.Status, s.Message = report.Failed, r.FailingStep+": "+r.Err.Error()
			if st.res.FailingStep == "" {
				st.res.FailingStep, st.res.Message = r.FailingStep, s.Message
			}
		}
		st.res.Steps = append(st.res.Steps, s)
	}
	if err != nil && st.res.Message == "" {
		st.res.Message = err.Error()
	}
	return err
}

var itestUsage = cli.Usage{
	Short:    "run the declarative integration tests on the selected cluster (T=prefix)",
	Line:     "nuv itest [T=prefix] [--timeout D] [--keep]",
	Long:     "Runs tests/itest/<test>/ and tests/<type>/itest/<test>/ on the selected cluster, each in its own namespace.",
	Examples: "nuv itest\nnuv itest T=redis --keep\nnuv itest --timeout 2m",
}

package testverbs

import (
	"context"
	"fmt"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/deploy"
	"github.com/nuv-dev/nuv/internal/itest"
	"github.com/nuv-dev/nuv/internal/paths"
)

// TestCommand is `nuv test`.
func TestCommand() cli.Command {
	return cli.Command{Name: "test", Short: testUsage.Short, Run: runTest}
}

func runTest(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("test")
	timeout := fs.Duration("timeout", deploy.DefaultTimeout, "bound of each deploy wait")
	stepTimeout := fs.Duration("step-timeout", itest.DefaultTimeout, "default itest step timeout")
	noUnit := fs.Bool("skip-utest", false, "skip the Go unit tests")
	u := testUsage
	if done, err := cli.Parse(env, fs, u, args); done || err != nil {
		return err
	}
	prefix, rest := prefixArg(env, fs.Args())
	if len(rest) > 0 {
		return u.Errorf("test: unexpected arguments %q (filter with T=prefix)", rest)
	}
	t, err := resolve(ctx, env)
	if err != nil {
		return fmt.Errorf("test: %w", err)
	}
	st := &steps{getenv: env.Getenv}
	err = Test(ctx, env, t, prefix, *timeout, *stepTimeout, !*noUnit, st)
	if werr := st.write(); werr != nil {
		env.Log.Warnf("test: %v", werr)
	}
	return err
}

// Test runs clean, utest, operator, itest and dtest, stopping at the first failure.
func Test(ctx context.Context, env *cli.Env, t *target, prefix string, timeout, stepTimeout time.Duration, unit bool, st *steps) error {
	o := t.deployOptions(env, timeout)
	start := time.Now()
	if err := st.run("clean", func() error { return deploy.Clean(ctx, o) }); err != nil {
		return fmt.Errorf("test: clean: %w", err)
	}
	if unit {
		project := paths.Project(env.Getenv, env.Dir)
		if err := st.run("utest", func() error { return goTest(ctx, env, project, UtestArgs(prefix, nil)) }); err != nil {
			return fmt.Errorf("test: %w", err)
		}
	}
	if err := st.run("operator", func() error { return deploy.Operator(ctx, o) }); err != nil {
		return fmt.Errorf("test: operator: %w", err)
	}
	// itest writes its own per-test steps; keep them and add the phase.
	inner := &steps{getenv: func(string) string { return "" }}
	err := st.run("itest", func() error {
		return itestInto(ctx, env, t, prefix, stepTimeout, false, inner)
	})
	for _, s := range inner.res.Steps {
		s.Name = "itest/" + s.Name
		st.res.Steps = append(st.res.Steps, s)
	}
	if err != nil {
		if inner.res.FailingStep != "" {
			st.res.FailingStep = inner.res.FailingStep
		}
		return fmt.Errorf("test: %w", err)
	}
	dt := &steps{getenv: env.Getenv}
	err = Dtest(ctx, env, t, timeout, false, dt)
	for _, s := range dt.res.Steps {
		s.Name = "dtest/" + s.Name
		st.res.Steps = append(st.res.Steps, s)
	}
	if err != nil {
		st.res.FailingStep, st.res.Message = "dtest/"+dt.res.FailingStep, dt.res.Message
		return fmt.Errorf("test: %w", err)
	}
	fmt.Fprintf(env.Out, "test: passed in %.1fs\n", time.Since(start).Seconds())
	return nil
}

var testUsage = cli.Usage{
	Short:    "clean, utest, operator, itest, dtest on the selected cluster (T=prefix)",
	Line:     "nuv test [T=prefix] [--timeout D] [--step-timeout D] [--skip-utest]",
	Long:     "Runs, stopping at the first failure: clean (remove leftovers), utest, operator (the itest suites\ntest the operator's behaviour), itest, dtest (instance, assertions, destroy, nothing leaked).",
	Examples: "nuv test\nnuv test T=redis --skip-utest\nnuv all-kubes -- test",
}

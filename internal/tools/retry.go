package tools

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/runner"
)

func retryTool(ctx context.Context, env *cli.Env, args []string) error {
	f := newFlags("retry", "[-t TRIES] [-m MAX] [-d DELAY] CMD [ARGS...]", `
Runs CMD until it succeeds or TRIES attempts have failed, waiting DELAY after the first failure
and doubling the wait after each further one, never more than MAX seconds. Exits with the exit
code of the last attempt (127 when CMD cannot be started). Flags go before CMD.`, `nuv -retry -t 5 -d 2s kubectl get nodes`)
	tries := f.IntP("tries", "t", 10, "number of attempts")
	maxWait := f.IntP("max", "m", 60, "longest wait between attempts, in seconds")
	delay := f.DurationP("delay", "d", time.Second, "first wait between attempts")
	f.SetInterspersed(false)
	if done, err := f.parse(env, args); done || err != nil {
		return err
	}
	if f.NArg() == 0 {
		return f.usagef("no command given")
	}
	if *tries < 1 || *maxWait < 0 || *delay < 0 {
		return f.usagef("TRIES must be >= 1, MAX and DELAY >= 0")
	}
	r := retrier{tries: *tries, max: time.Duration(*maxWait) * time.Second, delay: *delay}
	return r.run(ctx, func(ctx context.Context) int { return runCmd(ctx, env, f.Args()) }, func(attempt, code int, wait time.Duration) {
		fmt.Fprintf(env.Err, "retry: %s: attempt %d/%d failed (exit %d), next in %s\n", strings.Join(f.Args(), " "), attempt, *tries, code, wait)
	})
}

// retrier runs an attempt up to tries times with exponential backoff.
type retrier struct {
	tries int
	max   time.Duration
	delay time.Duration
}

// run calls attempt until it returns 0; report is told of each failure that is followed by a
// wait. The result carries the last attempt's exit code.
func (r retrier) run(ctx context.Context, attempt func(context.Context) int, report func(n, code int, wait time.Duration)) error {
	wait := r.delay
	code := 0
	for n := 1; n <= r.tries; n++ {
		if code = attempt(ctx); code == 0 {
			return nil
		}
		if n == r.tries {
			break
		}
		if wait > r.max {
			wait = r.max
		}
		report(n, code, wait)
		select {
		case <-ctx.Done():
			return cli.Exit(code, fmt.Errorf("nuv -retry: interrupted: %w", ctx.Err()))
		case <-time.After(wait):
		}
		wait *= 2
	}
	return cli.Exit(code, nil)
}

// runCmd runs argv with the tool's streams and directory and returns its exit code.
func runCmd(ctx context.Context, env *cli.Env, argv []string) int {
	err := runner.Run(ctx, runner.Cmd{Path: argv[0], Args: argv[1:], Dir: env.Dir, Stdin: env.In, Stdout: env.Out, Stderr: env.Err})
	if err == nil {
		return 0
	}
	if code := runner.ExitCode(err); code > 0 {
		return code
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return 1 // killed by a signal
	}
	fmt.Fprintf(env.Err, "retry: %v\n", err)
	return 127
}

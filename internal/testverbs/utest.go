package testverbs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
)

// UtestCommand is `nuv utest [T=prefix] [go test flags]`.
func UtestCommand() cli.Command {
	return cli.Command{Name: "utest", Short: "run the operator's Go unit tests (T=prefix filters)", Run: runUtest}
}

// UtestArgs is the go test command line for a prefix and extra arguments.
func UtestArgs(prefix string, extra []string) []string {
	args := []string{"test"}
	if prefix != "" {
		args = append(args, "-run", "^"+regexp.QuoteMeta(prefix))
	}
	args = append(args, extra...)
	return append(args, "./operator/...")
}

func runUtest(ctx context.Context, env *cli.Env, args []string) error {
	fs := pflag.NewFlagSet("utest", pflag.ContinueOnError)
	fs.SetOutput(env.Err)
	pkgs := fs.String("pkg", "./operator/...", "packages to test")
	fs.Usage = func() {
		fmt.Fprintln(env.Err, "Usage: nuv utest [T=prefix] [--pkg PATTERN] [-- go test flags]\n\nRuns `go test ./operator/...` in the project; T=prefix runs only tests whose name starts with it.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return cli.Usagef("utest: %v", err)
	}
	prefix, extra := prefixArg(env, fs.Args())
	project := paths.Project(env.Getenv, env.Dir)
	if _, err := os.Stat(filepath.Join(project, "operator")); err != nil {
		return fmt.Errorf("utest: no operator/ in %s: %w", project, err)
	}
	goArgs := UtestArgs(prefix, extra)
	goArgs[len(goArgs)-1] = *pkgs
	st := &steps{getenv: env.Getenv}
	err := st.run("utest", func() error { return goTest(ctx, env, project, goArgs) })
	if werr := st.write(); werr != nil {
		env.Log.Warnf("utest: %v", werr)
	}
	return err
}

// goTest runs go with args in dir, its exit code passed through.
func goTest(ctx context.Context, env *cli.Env, dir string, args []string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("utest needs the go command on PATH: %w", err)
	}
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = env.Out, env.Err
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	fmt.Fprintf(env.Out, "$ go %s\n", joinArgs(args))
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() > 0 {
			return cli.Exit(ee.ExitCode(), fmt.Errorf("utest: go test failed (exit %d)", ee.ExitCode()))
		}
		return fmt.Errorf("utest: %w", err)
	}
	return nil
}

func joinArgs(a []string) string {
	s := ""
	for i, x := range a {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s
}

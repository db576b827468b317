package testverbs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/runner"
)

// UtestCommand is `nuv utest [T=prefix] [go test flags]`.
func UtestCommand() cli.Command {
	return cli.Command{Name: "utest", Short: utestUsage.Short, Run: runUtest}
}

// UtestArgs is the go test command line for a prefix and extra arguments. It runs with -count=1
// (never a cached result) unless extra sets -count itself.
func UtestArgs(prefix string, extra []string) []string {
	args := []string{"test"}
	if !hasFlag(extra, "count") {
		args = append(args, "-count=1")
	}
	if prefix != "" {
		args = append(args, "-run", "^"+regexp.QuoteMeta(prefix))
	}
	args = append(args, extra...)
	return append(args, "./operator/...")
}

func runUtest(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("utest")
	pkgs := fs.String("pkg", "./operator/...", "packages to test")
	u := utestUsage
	if done, err := cli.Parse(env, fs, u, args); done || err != nil {
		return err
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
	goBin, err := runner.FindGo(env.Getenv)
	if err != nil {
		return fmt.Errorf("utest: %w", err)
	}
	counter := &testCounter{w: env.Out}
	fmt.Fprintf(env.Out, "$ go %s\n", joinArgs(args))
	if err := runner.Run(ctx, runner.Cmd{Path: goBin, Args: args, Dir: dir, Stdout: counter, Stderr: env.Err, Group: true}); err != nil {
		if code := runner.ExitCode(err); code > 0 && ctx.Err() == nil {
			return cli.Exit(code, fmt.Errorf("utest: go test failed (exit %d)", code))
		}
		return fmt.Errorf("utest: %w", err)
	}
	if counter.ran == 0 && !hasFlag(args, "json") {
		return fmt.Errorf("utest: no test ran in %s (a filter, T= or -run, that matches no test is a failure, not a pass)", args[len(args)-1])
	}
	return nil
}

// hasFlag tells whether args set the go test flag name (-name, --name, -name=v, -test.name).
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		a = strings.TrimLeft(a, "-")
		a, _, _ = strings.Cut(a, "=")
		if a == name || a == "test."+name {
			return true
		}
	}
	return false
}

// testCounter watches go test's output on its way to the user and counts the packages that ran at
// least one test ("ok" without "[no tests to run]", or "FAIL").
type testCounter struct {
	w       io.Writer
	partial []byte
	ran     int
}

func (c *testCounter) Write(p []byte) (int, error) {
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		c.line(string(c.partial[:i]))
		c.partial = c.partial[i+1:]
	}
	return c.w.Write(p)
}

func (c *testCounter) line(l string) {
	switch {
	case strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "ok\t"):
		if !strings.Contains(l, "[no tests to run]") {
			c.ran++
		}
	case strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "--- FAIL"):
		c.ran++
	}
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

var utestUsage = cli.Usage{
	Short:    "run the operator's Go unit tests (T=prefix filters)",
	Line:     "nuv utest [T=prefix] [--pkg PATTERN] [-- go test flags]",
	Long:     "Runs `go test ./operator/...` in the project; T=prefix runs only tests whose name starts with it.\nA filter that matches no test is a failure, not a pass.",
	Examples: "nuv utest\nnuv utest T=TestReconcile\nnuv utest -- -race -v",
}

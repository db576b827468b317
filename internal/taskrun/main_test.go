package taskrun_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/shell"
	"github.com/nuv-dev/nuv/internal/taskrun"
	"github.com/nuv-dev/nuv/internal/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestMain makes the test binary behave as nuv when a task runs it through the link directory
// (`nuv`, `task`, `retry`, ...), so tasks in these tests call the code under test.
func TestMain(m *testing.M) {
	if code, ok := asNuv(os.Args); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func asNuv(args []string) (int, bool) {
	name := filepath.Base(args[0])
	if !slices.Contains(shell.DefaultLinks, name) {
		return 0, false
	}
	exe, _ := os.Executable()
	wd, _ := os.Getwd()
	env := &cli.Env{Streams: cli.OSStreams(), Log: cli.Quiet(), Exe: exe, Getenv: os.Getenv, Dir: wd}
	rest := args[1:]
	if name == "nuv" {
		if len(rest) == 0 || !strings.HasPrefix(rest[0], "-") {
			fmt.Fprintln(os.Stderr, "test nuv: only -task and -<tool> are wired")
			return 2, true
		}
		name, rest = strings.TrimPrefix(rest[0], "-"), rest[1:]
	}
	var err error
	if name == "task" {
		err = taskrun.Main(context.Background(), env, rest, taskrun.Options{})
	} else {
		err = cli.Usagef("unknown tool %q", name)
		for _, t := range tools.Commands() {
			if t.Name == name {
				err = t.Run(context.Background(), env, rest)
			}
		}
	}
	if ee := (*cli.ExitError)(nil); err != nil && !(asExit(err, &ee) && ee.Err == nil) {
		fmt.Fprintf(os.Stderr, "nuv: %v\n", err)
	}
	return cli.ExitCode(err), true
}

// fixture copies testdata/<name> to a fresh directory and returns it.
func fixture(t testing.TB, name string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", name)
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// harness runs nuv -task invocations in-process and records a transcript for a golden file.
type harness struct {
	t     testing.TB
	dir   string
	home  string
	exe   string
	opts  taskrun.Options
	trans strings.Builder
}

func newHarness(t testing.TB, fixtureName string) *harness {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, dir: fixture(t, fixtureName), home: t.TempDir(), exe: exe}
	h.opts.Env = []string{"NUV_HOME=" + h.home, "NO_COLOR=1"}
	return h
}

func (h *harness) env(out, errw *bytes.Buffer) *cli.Env {
	return &cli.Env{
		Streams: cli.Streams{In: strings.NewReader(""), Out: out, Err: errw},
		Log:     cli.Quiet(),
		Exe:     h.exe,
		Getenv: func(k string) string {
			if k == "NUV_HOME" {
				return h.home
			}
			return os.Getenv(k)
		},
		Dir: h.dir,
	}
}

// main runs `nuv -task args...` and appends it to the transcript; it returns the exit code.
func (h *harness) main(args ...string) int {
	var out, errb bytes.Buffer
	err := taskrun.Main(context.Background(), h.env(&out, &errb), args, h.opts)
	return h.record("nuv -task "+strings.Join(args, " "), &out, &errb, err)
}

func (h *harness) record(cmd string, out, errb *bytes.Buffer, err error) int {
	code := cli.ExitCode(err)
	if ee := (*cli.ExitError)(nil); err != nil && !(asExit(err, &ee) && ee.Err == nil) {
		fmt.Fprintf(errb, "nuv: %v\n", err)
	}
	fmt.Fprintf(&h.trans, "$ %s\nexit: %d\n-- stdout --\n%s-- stderr --\n%s\n", cmd, code, h.clean(out.String()), h.clean(errb.String()))
	return code
}

// clean replaces the run's temporary paths with stable names.
func (h *harness) clean(s string) string {
	s = strings.ReplaceAll(s, h.dir, "$DIR")
	// go-task shows paths relative to the process directory, however deep the checkout sits.
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, h.dir); err == nil && rel != "." {
			s = strings.ReplaceAll(s, rel, "$DIR")
		}
	}
	s = relDir.ReplaceAllString(s, "$$DIR")
	if links, err := filepath.Glob(filepath.Join(h.home, "links", "*")); err == nil {
		for _, l := range links {
			s = strings.ReplaceAll(s, l, "$LINKS")
		}
	}
	return strings.ReplaceAll(s, h.home, "$NUV_HOME")
}

var relDir = regexp.MustCompile(`(\.\./)*\.\.\$DIR`)

// golden compares the transcript with testdata/golden/<name>.golden (rewritten with -update).
func (h *harness) golden(name string) {
	h.t.Helper()
	path := filepath.Join("testdata", "golden", name+".golden")
	got := h.trans.String()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			h.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			h.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		h.t.Errorf("transcript differs from %s (go test -update rewrites it)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

package taskrun_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/taskrun"
)

func asExit(err error, target **cli.ExitError) bool { return errors.As(err, target) }

// semCase is a sequence of `nuv -task` runs on one fixture, with their exit codes. setup adds
// nuv-only options (the case is then skipped in the comparison with stock go-task).
type semCase struct {
	name    string
	fixture string
	setup   func(h *harness)
	runs    [][]string
	codes   []int
}

func semanticCases() []semCase {
	return []semCase{
		{name: "includes", fixture: "includes", runs: [][]string{{}, {"--list-all"}, {"-d", "sub", "hello"}, {"-t", "sub/Taskfile.yml", "hello", "WHO=flag"}}, codes: []int{0, 0, 0, 0}},
		{name: "deps-parallel", fixture: "deps", runs: [][]string{{"-s"}}, codes: []int{0}},
		{name: "dotenv", fixture: "dotenv", setup: func(h *harness) {
			h.opts.DefaultEnv = []string{"FROM_NUV_DOTENV=nuv-dotenv", "PROCESS_WINS=from-dotenv"}
			h.opts.Env = append(h.opts.Env, "PROCESS_WINS=from-process", "OVERRIDE=from-nuv-config")
		}, runs: [][]string{{"-s"}}, codes: []int{0}},
		{name: "sh-vars", fixture: "vars", runs: [][]string{{"-s"}, {"-s", "FROM_CLI=given"}}, codes: []int{0, 0}},
		{name: "requires", fixture: "requires", runs: [][]string{
			{"deploy"}, {"deploy", "ENVIRONMENT=staging"}, {"pick", "SIZE=huge"}, {"pick", "SIZE=small"},
		}, codes: []int{206, 0, 207, 0}},
		{name: "preconditions", fixture: "preconditions", runs: [][]string{{"guarded"}, {"prepare"}, {"guarded"}}, codes: []int{201, 0, 0}},
		{name: "for-loops", fixture: "loops", runs: [][]string{{"-s"}}, codes: []int{0}},
		{name: "up-to-date", fixture: "uptodate", runs: [][]string{
			{"build"}, {"build"}, {"--status", "build"}, {"-f", "build"}, {"--status", "stamp"}, {"stamp"}, {"stamp"},
		}, codes: []int{0, 0, 0, 0, 1, 0, 0}},
		{name: "cli-args", fixture: "cliargs", runs: [][]string{
			{"-s", "GREETING=hi", "--", "a", "b c"}, {"-s", "other", "default", "--", "x"},
		}, codes: []int{0, 0}},
		{name: "dry-run", fixture: "cliargs", runs: [][]string{{"-n", "GREETING=dry", "--", "one"}}, codes: []int{0}},
		{name: "exit-codes", fixture: "exitcodes", runs: [][]string{
			{"ok"}, {"nope"}, {"fail"}, {"-x", "fail"}, {"internal-task"}, {"-l"}, {"--list", "--json"},
			{"--list", "--list-all"}, {"--no-such-flag"}, {"-t", "missing.yml"}, {"--init"}, {"--version"},
		}, codes: []int{0, 200, 201, 3, 202, 0, 0, 1, 2, 100, 101, 0}},
		{name: "flags", fixture: "flags", runs: [][]string{
			{"--summary", "documented"}, {"-o", "prefixed", "documented"}, {"-C", "1", "-s", "one", "two"},
			{"-y", "careful"}, {"careful"}, {"-p", "-s", "-o", "group", "--output-group-error-only", "one", "two"},
		}, codes: []int{0, 0, 0, 0, 205, 0}},
		{name: "bad-yaml", fixture: "badyaml", runs: [][]string{{}}, codes: []int{109}},
		{name: "taskrc", fixture: "taskrc", runs: [][]string{{}, {"--experiments"}, {"--force-all"}}, codes: []int{0, 0, 0}},
		{name: "secrets", fixture: "secrets", setup: func(h *harness) {
			h.opts.Env = append(h.opts.Env, "API_TOKEN=tok-1234567", "USER_NAME=alice")
			h.opts.DefaultEnv = []string{"PLAIN=visible"}
			h.opts.SecretKeys = []string{"USER_NAME"}
		}, runs: [][]string{{"--dry"}, {"check"}, {"pick"}}, codes: []int{0, 201, 207}},
	}
}

// TestTaskSemantics drives `nuv -task` in-process on the Taskfiles under testdata and compares
// each transcript (commands, exit codes, stdout, stderr) with a golden file.
func TestTaskSemantics(t *testing.T) {
	for _, tc := range semanticCases() {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.fixture)
			if tc.setup != nil {
				tc.setup(h)
			}
			for i, args := range tc.runs {
				if code := h.main(args...); code != tc.codes[i] {
					t.Errorf("nuv -task %s: exit %d, want %d", strings.Join(args, " "), code, tc.codes[i])
				}
			}
			h.golden(tc.name)
		})
	}
}

// TestNoBashNoCoreutils runs a task with PATH holding only nuv's link directory: mkdir -p, ls,
// cat and echo come from the embedded shell and go-task's Go core utilities, validate and nuv from
// the running binary.
func TestNoBashNoCoreutils(t *testing.T) {
	h := newHarness(t, "nocoreutils")
	h.opts.Env = append(h.opts.Env, "PATH=")
	if code := h.main("-s"); code != 0 {
		t.Errorf("exit %d, want 0\n%s", code, h.trans.String())
	}
	if b, err := os.ReadFile(filepath.Join(h.dir, "out", "nested", "file.txt")); err != nil || string(b) != "written by a task\n" {
		t.Errorf("out/nested/file.txt = %q, %v", b, err)
	}
	h.golden("no-bash-no-coreutils")

	// TASK_CORE_UTILS=false switches go-task's core utilities off, as with the go-task CLI: with
	// nothing on PATH, ls is then not found.
	h2 := newHarness(t, "nocoreutils")
	h2.opts.Env = append(h2.opts.Env, "PATH=", "TASK_CORE_UTILS=false")
	if code := h2.main("-s"); code != 201 || !strings.Contains(h2.trans.String(), `"mkdir": executable file not found`) {
		t.Errorf("with TASK_CORE_UTILS=false: exit %d, want 201 and mkdir not found\n%s", code, h2.trans.String())
	}
}

// TestRun is the API bundle dispatch uses: an explicit entrypoint, call variables (a list among
// them), CLI_ARGS, and Env overriding the process environment.
func TestRun(t *testing.T) {
	h := newHarness(t, "run")
	t.Setenv("KUBECONFIG", "/from/process")
	h.opts.Entrypoint = "nuvfile.yml"
	h.opts.Env = append(h.opts.Env, "KUBECONFIG=/selected/cluster.kubeconfig")
	var out, errb bytes.Buffer
	err := taskrun.Run(context.Background(), h.env(&out, &errb), h.opts,
		[]taskrun.Call{{Task: "greet", Vars: map[string]any{"NAME": "world", "ITEMS": []string{"a", "b"}}}},
		[]string{"--flag", "two words"})
	h.record("taskrun.Run greet NAME=world ITEMS=[a b] -- --flag 'two words'", &out, &errb, err)
	err = taskrun.Run(context.Background(), h.env(&out, &errb), h.opts, []taskrun.Call{{Task: "missing"}}, nil)
	if got := cli.ExitCode(err); got != 200 {
		t.Errorf("Run(missing): exit %d, want 200 (%v)", got, err)
	}
	h.opts.Silent = true
	errb.Reset()
	if err := taskrun.Run(context.Background(), h.env(&out, &errb), h.opts, []taskrun.Call{{Task: "greet"}}, nil); err != nil || errb.Len() != 0 {
		t.Errorf("Run with Silent: %v, stderr %q (want no command echo)", err, errb.String())
	}
	h.opts.Silent = false
	h.opts.Entrypoint = ""
	err = taskrun.Run(context.Background(), h.env(&out, &errb), h.opts, []taskrun.Call{{Task: "fail"}}, nil)
	if got := cli.ExitCode(err); got != 201 {
		t.Errorf("Run(fail): exit %d, want 201 (%v)", got, err)
	}
	h.opts.ExitCode = true
	err = taskrun.Run(context.Background(), h.env(&out, &errb), h.opts, []taskrun.Call{{Task: "fail"}}, nil)
	if got := cli.ExitCode(err); got != 5 {
		t.Errorf("Run(fail) with ExitCode: exit %d, want 5 (%v)", got, err)
	}
	if os.Getenv("KUBECONFIG") != "/from/process" {
		t.Errorf("the process environment was not restored: KUBECONFIG=%q", os.Getenv("KUBECONFIG"))
	}
	h.golden("run-api")
}

// TestUnwritableHome: when nuv's home cannot hold the link directory, the run stops with an error
// naming the directory instead of running tasks without nuv on PATH.
func TestUnwritableHome(t *testing.T) {
	h := newHarness(t, "exitcodes")
	h.home = filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(h.home, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := taskrun.Main(context.Background(), h.env(&out, &errb), []string{"ok"}, h.opts)
	if err == nil || !strings.Contains(err.Error(), h.home) || cli.ExitCode(err) != 1 {
		t.Errorf("err %v (exit %d), want exit 1 naming %s", err, cli.ExitCode(err), h.home)
	}
	if out.Len() != 0 {
		t.Errorf("a task ran: %q", out.String())
	}
}

// TestNuvIsTheRunningBinary: another `nuv` and `task` earlier on PATH never shadow the running
// binary inside a task.
func TestNuvIsTheRunningBinary(t *testing.T) {
	h := newHarness(t, "impostor")
	fake := t.TempDir()
	for _, name := range []string{"nuv", "task"} {
		if err := os.WriteFile(filepath.Join(fake, name), []byte("#!/bin/sh\necho impostor\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h.opts.Env = append(h.opts.Env, "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	err := taskrun.Main(context.Background(), h.env(&out, &errb), nil, h.opts)
	want := "cmVhbA==\ninner task run by the running nuv\n"
	if err != nil || out.String() != want {
		t.Errorf("err %v, stdout %q, want %q (stderr %q)", err, out.String(), want, errb.String())
	}
}

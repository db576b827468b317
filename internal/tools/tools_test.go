package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/shell"
)

// result is one tool invocation: its streams and exit code (the dispatcher prints a non-silent
// error on stderr, as here).
type result struct {
	out, err string
	code     int
}

func runTool(t *testing.T, dir, name string, args []string, stdin string, vars map[string]string) result {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{
		Streams: cli.Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb},
		Log:     cli.Quiet(),
		Getenv:  func(k string) string { return vars[k] },
		Dir:     dir,
	}
	var run func(context.Context, *cli.Env, []string) error
	for _, c := range Commands() {
		if c.Name == name {
			run = c.Run
		}
	}
	if run == nil {
		t.Fatalf("no tool %q", name)
	}
	err := run(context.Background(), env, args)
	var ee *cli.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.Err == nil) {
		fmt.Fprintf(&errb, "nuv: %v\n", err)
	}
	return result{out.String(), errb.String(), cli.ExitCode(err)}
}

type toolCase struct {
	name    string
	tool    string
	args    []string
	stdin   string
	vars    map[string]string
	out     string // exact stdout, unless outRE is set
	outRE   string
	errHas  string // substring of stderr ("" = stderr must be empty when code is 0)
	code    int
	prepare func(t *testing.T, dir string)
	check   func(t *testing.T, dir string)
}

func (tc toolCase) run(t *testing.T) {
	dir := t.TempDir()
	if tc.prepare != nil {
		tc.prepare(t, dir)
	}
	r := runTool(t, dir, tc.tool, tc.args, tc.stdin, tc.vars)
	if r.code != tc.code {
		t.Errorf("exit %d, want %d (stderr %q)", r.code, tc.code, r.err)
	}
	switch {
	case tc.outRE != "":
		if !regexp.MustCompile(tc.outRE).MatchString(r.out) {
			t.Errorf("stdout %q does not match %s", r.out, tc.outRE)
		}
	case r.out != tc.out:
		t.Errorf("stdout %q, want %q", r.out, tc.out)
	}
	if tc.errHas != "" && !strings.Contains(r.err, tc.errHas) {
		t.Errorf("stderr %q lacks %q", r.err, tc.errHas)
	}
	if tc.errHas == "" && tc.code == 0 && r.err != "" {
		t.Errorf("unexpected stderr %q", r.err)
	}
	if tc.check != nil {
		tc.check(t, dir)
	}
}

func TestTools(t *testing.T) {
	cases := []toolCase{
		// -base64
		{name: "base64 args", tool: "base64", args: []string{"hello", "world"}, out: "aGVsbG8gd29ybGQ=\n"},
		{name: "base64 -e", tool: "base64", args: []string{"-e", "hi"}, out: "aGk=\n"},
		{name: "base64 stdin -n", tool: "base64", args: []string{"-n"}, stdin: "hi", out: "aGk="},
		{name: "base64 decode", tool: "base64", args: []string{"-d", "aGVsbG8gd29ybGQ="}, out: "hello world\n"},
		{name: "base64 decode unpadded url", tool: "base64", args: []string{"-d", "-n", "Pz8_"}, out: "???"},
		{name: "base64 bad", tool: "base64", args: []string{"-d", "!!"}, code: 1, errHas: "invalid base64"},
		// -urlenc
		{name: "urlenc pairs", tool: "urlenc", args: []string{"q=a b&c", "lang=go"}, out: "q=a+b%26c&lang=go\n"},
		{name: "urlenc sep", tool: "urlenc", args: []string{"-s", ";", "a=1", "x y"}, out: "a=1;x+y\n"},
		{name: "urlenc env", tool: "urlenc", args: []string{"-e", "USER"}, vars: map[string]string{"USER": "a&b"}, out: "USER=a%26b\n"},
		{name: "urlenc none", tool: "urlenc", code: 2, errHas: "nothing to encode"},
		// -random
		{name: "random float", tool: "random", outRE: `^0(\.\d+)?\n$`},
		{name: "random int", tool: "random", args: []string{"--int", "7", "5"}, outRE: `^[567]\n$`},
		{name: "random str", tool: "random", args: []string{"--str", "12", "ab"}, outRE: `^[ab]{12}\n$`},
		{name: "random uuid", tool: "random", args: []string{"-u"}, outRE: `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\n$`},
		{name: "random bad int", tool: "random", args: []string{"--int", "1", "5"}, code: 2, errHas: "MIN <= MAX"},
		// -datefmt
		{name: "datefmt rfc3339", tool: "datefmt", args: []string{"-t", "86400", "-z", "UTC", "-f", "rfc3339"}, out: "1970-01-02T00:00:00Z\n"},
		{name: "datefmt millis layout", tool: "datefmt", args: []string{"-m", "1500", "-z", "UTC", "-f", "15:04:05.000"}, out: "00:00:01.500\n"},
		{name: "datefmt parse", tool: "datefmt", args: []string{"-d", "2024-02-29", "-s", "date", "-f", "unix"}, out: "1709164800\n"},
		{name: "datefmt default", tool: "datefmt", args: []string{"-t", "0", "-z", "UTC"}, out: "Thu Jan  1 00:00:00 UTC 1970\n"},
		{name: "datefmt bad date", tool: "datefmt", args: []string{"-d", "yesterday"}, code: 1, errHas: "does not match"},
		{name: "datefmt bad zone", tool: "datefmt", args: []string{"-z", "Mars/Base"}, code: 2, errHas: "unknown time zone"},
		// -die
		{name: "die", tool: "die", args: []string{"cannot", "go", "on"}, code: 1, errHas: "cannot go on\n"},
		{name: "die code", tool: "die", args: []string{"-c", "9", "stop"}, code: 9, errHas: "stop"},
		// -empty
		{name: "empty missing", tool: "empty", args: []string{"nope.txt"}},
		{name: "empty file", tool: "empty", args: []string{"e.txt"}, prepare: write("e.txt", "")},
		{name: "not empty", tool: "empty", args: []string{"f.txt"}, prepare: write("f.txt", "x"), code: 1},
		{name: "blank -w", tool: "empty", args: []string{"-w", "f.txt"}, prepare: write("f.txt", " \n\t")},
		{name: "empty dir", tool: "empty", args: []string{"."}},
		{name: "dir with entry", tool: "empty", args: []string{"."}, prepare: write("f.txt", "x"), code: 1},
		// -executable
		{name: "executable", tool: "executable", args: []string{"run.sh"}, prepare: write("run.sh", "#!/bin/sh\n"),
			check: func(t *testing.T, dir string) {
				st, err := os.Stat(filepath.Join(dir, "run.sh"))
				if err != nil || st.Mode().Perm() != 0o755 {
					t.Errorf("mode %v, %v; want 0755", st.Mode().Perm(), err)
				}
			}},
		{name: "executable missing", tool: "executable", args: []string{"nope"}, code: 1, errHas: "no such file"},
		// -needupdate
		{name: "needupdate newer", tool: "needupdate", args: []string{"1.10.0", "1.9.3"}},
		{name: "needupdate v prefix", tool: "needupdate", args: []string{"v2", "1.99.99"}},
		{name: "needupdate equal", tool: "needupdate", args: []string{"1.2.3", "v1.2.3"}, code: 1},
		{name: "needupdate older", tool: "needupdate", args: []string{"1.2.3-rc.1", "1.2.3"}, code: 1},
		{name: "needupdate invalid", tool: "needupdate", args: []string{"one", "1.0"}, code: 2, errHas: "not a semantic version"},
		// -validate
		{name: "validate email", tool: "validate", args: []string{"-e", "dev@example.com"}},
		{name: "validate email bad", tool: "validate", args: []string{"-e", "dev@"}, code: 1, errHas: `"dev@" is not an email address`},
		{name: "validate number", tool: "validate", args: []string{"-n", "--", "-3.5"}},
		{name: "validate integer bad", tool: "validate", args: []string{"-i", "3.5"}, code: 1, errHas: "not an integer"},
		{name: "validate regex", tool: "validate", args: []string{"-r", "^[a-z]+-[0-9]+$", "kind-1"}},
		{name: "validate regex msg", tool: "validate", args: []string{"-r", "^[a-z]+$", "Kind", "cluster names are lower case"}, code: 1, errHas: "nuv: cluster names are lower case\n"},
		{name: "validate url", tool: "validate", args: []string{"-u", "https://registry.local:5000/v2"}},
		{name: "validate semver combined", tool: "validate", args: []string{"-z", "-s", "latest"}, code: 1, errHas: "not a semantic version"},
		{name: "validate no check", tool: "validate", args: []string{"x"}, code: 2, errHas: "no check given"},
		// -envsubst
		{name: "envsubst", tool: "envsubst", stdin: "image: $REPO/${NAME}:${TAG:-latest} cost $5", vars: map[string]string{"REPO": "reg", "NAME": "op"},
			out: "image: reg/op:latest cost $5"},
		{name: "envsubst unset", tool: "envsubst", stdin: "$A ${NUV_TEST_UNSET_B} $NUV_TEST_UNSET_C", vars: map[string]string{"A": "a"}, code: 1,
			errHas: "unset variable(s): NUV_TEST_UNSET_B, NUV_TEST_UNSET_C"},
		{name: "envsubst -i", tool: "envsubst", args: []string{"-i"}, stdin: "[${NUV_TEST_UNSET_B}]", out: "[]"},
		{name: "envsubst only", tool: "envsubst", args: []string{"$A"}, stdin: "$A $B", vars: map[string]string{"A": "1"}, out: "1 $B"},
		{name: "envsubst files", tool: "envsubst", args: []string{"-f", "in.tpl", "-o", "out.yaml"}, vars: map[string]string{"X": "42"},
			prepare: write("in.tpl", "x: ${X}\n"), check: fileIs("out.yaml", "x: 42\n")},
		{name: "envsubst unset writes nothing", tool: "envsubst", args: []string{"-f", "in.tpl", "-o", "out.yaml"},
			prepare: write("in.tpl", "x: ${NUV_TEST_UNSET_X}\n"), code: 1, errHas: "NUV_TEST_UNSET_X", check: fileIs("out.yaml", "")},
		// usage
		{name: "help", tool: "retry", args: []string{"-h"}, outRE: `(?s)^Usage: nuv -retry .*--tries`},
		{name: "bad flag", tool: "base64", args: []string{"--bogus"}, code: 2, errHas: "unknown flag: --bogus"},
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}
}

func write(name, content string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fileIs checks a file's content; "" means the file must not exist.
func fileIs(name, want string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if want == "" {
			if err == nil {
				t.Errorf("%s exists with %q, want no file", name, b)
			}
			return
		}
		if err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q", name, b, err, want)
		}
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	env := &cli.Env{Streams: cli.Streams{Out: &out, Err: &out}, Log: cli.Quiet()}
	v := Version("1.2.3")
	if err := v.Run(context.Background(), env, nil); err != nil || out.String() != "1.2.3\n" {
		t.Errorf("-version: %v, %q", err, out.String())
	}
	out.Reset()
	if err := v.Run(context.Background(), env, []string{"-h"}); err != nil || !strings.HasPrefix(out.String(), "Usage: nuv -version") {
		t.Errorf("-version -h: %v, %q", err, out.String())
	}
	if err := v.Run(context.Background(), env, []string{"extra"}); cli.ExitCode(err) != 2 {
		t.Errorf("-version extra: exit %d, want 2", cli.ExitCode(err))
	}
}

func TestEveryToolHasUsage(t *testing.T) {
	for _, c := range Commands() {
		r := runTool(t, t.TempDir(), c.Name, []string{"-h"}, "", nil)
		if r.code != 0 || !strings.HasPrefix(r.out, "Usage: nuv -"+c.Name) {
			t.Errorf("-%s -h: exit %d, output %q", c.Name, r.code, r.out)
		}
	}
}

func TestRetryBackoff(t *testing.T) {
	cases := []struct {
		name      string
		tries     int
		failFirst int // attempts that fail before one succeeds (>= tries: never succeeds)
		wantCode  int
		wantWaits []time.Duration
	}{
		{"first try", 5, 0, 0, nil},
		{"third try", 5, 2, 0, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}},
		{"gives up with last code", 4, 9, 7, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 25 * time.Millisecond}},
		{"one try", 1, 9, 7, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := retrier{tries: tc.tries, max: 25 * time.Millisecond, delay: 10 * time.Millisecond}
			n := 0
			var waits []time.Duration
			err := r.run(context.Background(), func(context.Context) int {
				n++
				if n <= tc.failFirst {
					return 7
				}
				return 0
			}, func(_, _ int, w time.Duration) { waits = append(waits, w) })
			if got := cli.ExitCode(err); got != tc.wantCode {
				t.Errorf("exit %d, want %d", got, tc.wantCode)
			}
			if fmt.Sprint(waits) != fmt.Sprint(tc.wantWaits) {
				t.Errorf("waits %v, want %v", waits, tc.wantWaits)
			}
		})
	}
}

func TestRetryCommand(t *testing.T) {
	dir := t.TempDir()
	// the command fails until its third run, counting runs in a file
	script := `n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; [ $n -ge 3 ]`
	r := runTool(t, dir, "retry", []string{"-t", "5", "-d", "1ms", "sh", "-c", script}, "", nil)
	if r.code != 0 || strings.Count(r.err, "failed (exit 1)") != 2 {
		t.Errorf("exit %d, stderr %q; want success after 2 reported failures", r.code, r.err)
	}
	r = runTool(t, dir, "retry", []string{"-t", "2", "-d", "1ms", "sh", "-c", "exit 5"}, "", nil)
	if r.code != 5 {
		t.Errorf("exit %d, want 5 (the last attempt's code)", r.code)
	}
	r = runTool(t, dir, "retry", []string{"-t", "1", "nuv-no-such-command"}, "", nil)
	if r.code != 127 {
		t.Errorf("exit %d, want 127 for a missing command", r.code)
	}
}

// TestLinkNamesAreTools: every name in nuv's link directory besides nuv and task must dispatch
// to a tool of this package.
func TestLinkNamesAreTools(t *testing.T) {
	have := map[string]bool{}
	for _, c := range Commands() {
		have[c.Name] = true
	}
	for _, n := range shell.DefaultLinks {
		if n != "nuv" && n != "task" && !have[n] {
			t.Errorf("link %q names no tool", n)
		}
	}
}

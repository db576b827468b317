package app

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

// TestEveryCommandHelpNoArgumentsAndBadFlags drives each built-in command through the dispatcher:
// --help prints a usage to stdout and exits 0; a bad flag exits 2 naming the usage; a command
// given no arguments prints its help (groups: nuv's one habit) or does its job, never silently.
func TestEveryCommandHelpNoArgumentsAndBadFlags(t *testing.T) {
	project, home := t.TempDir(), t.TempDir()
	run := func(args ...string) (string, string, error) {
		var out, errb bytes.Buffer
		exe, _ := os.Executable()
		env := &cli.Env{Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, Log: cli.NewLogger(&errb, 0), Exe: exe, Dir: project,
			Getenv: func(k string) string {
				switch k {
				case "NUV_HOME":
					return home
				case "NUV_PROJECT":
					return project
				case "PATH", "HOME":
					return os.Getenv(k)
				}
				return ""
			}}
		err := RunEnv(context.Background(), env, append([]string{"nuv"}, args...))
		return out.String(), errb.String(), err
	}
	// What each command does with no arguments (the ones that act on a cluster fail: none here).
	noArgs := map[string]struct {
		code   int
		expect string // in stdout+stderr+error
	}{
		"cluster": {0, "Usage: nuv cluster <verb>"}, "kube": {0, "Usage: nuv kube <verb>"}, "image": {0, "Usage: nuv image <verb>"},
		"registry": {0, "Usage: nuv registry <verb>"}, "all-kubes": {0, "Usage: nuv all-kubes"}, "operator": {1, "no cluster selected"}, "instance": {1, "no cluster selected"},
		"destroy": {1, "no cluster selected"}, "clean": {1, "no cluster selected"}, "defin": {1, "no cluster selected"},
		"run": {1, "no cluster selected"}, "status": {1, "no cluster selected"}, "itest": {1, "no cluster selected"},
		"dtest": {1, "no cluster selected"}, "test": {1, "no cluster selected"}, "utest": {1, "no operator/"}, "up": {},
		"report": {0, "Usage: nuv report <verb>"}, "addons": {0, "Usage: nuv addons <verb>"},
		"completion": {0, "Usage: nuv completion <verb>"}, "emulator": {0, "Usage: nuv emulator <verb>"},
	}
	for _, c := range commandTable() {
		t.Run(c.Name, func(t *testing.T) {
			out, errOut, err := run(c.Name, "--help")
			if cli.ExitCode(err) != cli.ExitOK || !strings.Contains(out, "Usage") {
				t.Errorf("--help: exit %d, stdout %q, stderr %q", cli.ExitCode(err), out, errOut)
			}
			out, errOut, err = run(c.Name, "--no-such-flag")
			if all := out + errOut + errString(err); cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(all, "Usage") {
				t.Errorf("--no-such-flag: exit %d, %q", cli.ExitCode(err), all)
			}
			want, ok := noArgs[c.Name]
			if !ok {
				t.Fatalf("no expectation for a bare `nuv %s`: add one", c.Name)
			}
			if c.Name == "up" {
				return // creates a cluster: its integration test covers it
			}
			out, errOut, err = run(c.Name)
			if all := out + errOut + errString(err); cli.ExitCode(err) != want.code || !strings.Contains(all, want.expect) {
				t.Errorf("no arguments: exit %d, %q; want exit %d with %q", cli.ExitCode(err), all, want.code, want.expect)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

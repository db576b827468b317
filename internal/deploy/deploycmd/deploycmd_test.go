package deploycmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

func runCmd(t *testing.T, name string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{Streams: cli.Streams{Out: &out, Err: &errb}, Log: cli.Quiet(), Getenv: func(string) string { return "" }, Dir: t.TempDir()}
	for _, c := range NewCommands() {
		if c.Name == name {
			err := c.Run(context.Background(), env, args)
			return out.String(), errb.String(), err
		}
	}
	t.Fatalf("no command %s", name)
	return "", "", nil
}

// TestCommandsHelpAndUsageErrors: help goes to stdout with exit 0, every bad command line is a usage
// error (exit 2) that quotes the usage line.
func TestCommandsHelpAndUsageErrors(t *testing.T) {
	names := map[string]bool{}
	for _, c := range NewCommands() {
		names[c.Name] = true
	}
	for _, n := range []string{"operator", "instance", "destroy", "clean", "defin", "run", "status", "up"} {
		if !names[n] {
			t.Errorf("no %s command", n)
		}
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		errHas string
	}{
		{"operator", []string{"-h"}, 0, "--dry-run", ""},
		{"operator", []string{"--help"}, 0, "Usage: nuv operator [--dry-run]", ""},
		{"defin", []string{"--help"}, 0, "--all", ""},
		{"up", []string{"--help"}, 0, "--skip-dtest", ""},
		{"status", []string{"--dry-run"}, 2, "", "unknown flag: --dry-run\nUsage: nuv status [--kubeconfig F]"},
		{"instance", []string{"extra"}, 2, "", "unexpected arguments: extra\nUsage: nuv instance"},
		{"operator", []string{"--timeout", "0s"}, 2, "", "--timeout 0s: must be positive"},
		{"operator", []string{"--timeout", "soon"}, 2, "", `--timeout "soon": not a duration`},
		{"up", []string{"--kubeconfig", "x"}, 2, "", "unknown flag: --kubeconfig"},
		{"status", nil, 1, "", "no cluster selected"},
	} {
		t.Run(tc.name+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			out, _, err := runCmd(t, tc.name, tc.args...)
			if cli.ExitCode(err) != tc.code {
				t.Fatalf("exit %d (%v), want %d", cli.ExitCode(err), err, tc.code)
			}
			if tc.stdout != "" && !strings.Contains(out, tc.stdout) {
				t.Errorf("stdout %q lacks %q", out, tc.stdout)
			}
			if tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)) {
				t.Errorf("error %v lacks %q", err, tc.errHas)
			}
		})
	}
}

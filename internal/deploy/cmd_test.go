package deploy

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

func runCmd(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{Streams: cli.Streams{Out: &out, Err: &errb}, Log: cli.Quiet(), Getenv: func(string) string { return "" }, Dir: t.TempDir()}
	for _, c := range Commands(nil) {
		if c.Name == name {
			err := c.Run(context.Background(), env, args)
			return out.String() + errb.String(), err
		}
	}
	t.Fatalf("no command %s", name)
	return "", nil
}

func TestCommandsFlags(t *testing.T) {
	names := map[string]bool{}
	for _, c := range Commands(nil) {
		names[c.Name] = true
	}
	for _, n := range []string{"operator", "instance", "destroy", "clean", "defin", "run", "status", "up"} {
		if !names[n] {
			t.Errorf("no %s command", n)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"operator", []string{"-h"}, 0, "--dry-run"},
		{"defin", []string{"--help"}, 0, "--all"},
		{"status", []string{"--dry-run"}, 2, "unknown flag: --dry-run"},
		{"instance", []string{"extra"}, 2, "unexpected arguments extra"},
		{"operator", []string{"--timeout", "0s"}, 2, "--timeout must be positive"},
		{"operator", []string{"--timeout", "soon"}, 2, "invalid argument"},
		{"status", nil, 1, "no cluster selected"},
	} {
		t.Run(tc.name+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			out, err := runCmd(t, tc.name, tc.args...)
			msg := out
			if err != nil {
				msg += err.Error()
			}
			if cli.ExitCode(err) != tc.code || !strings.Contains(msg, tc.want) {
				t.Errorf("exit %d, output %q; want exit %d containing %q", cli.ExitCode(err), msg, tc.code, tc.want)
			}
		})
	}
}

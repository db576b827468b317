package registrycmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

// TestHelpNoArgumentsAndUsageErrors: the group (bare or with --help) and its verbs print help to stdout (exit 0),
// and every bad command line is a usage error (exit 2); no case is silent.
func TestHelpNoArgumentsAndUsageErrors(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, errHas string
	}{
		{nil, 0, "Usage: nuv registry <verb>", ""},
		{[]string{"--help"}, 0, "Usage: nuv registry <verb>", ""},
		{[]string{"up", "--help"}, 0, "Usage: nuv registry up", ""},
		{[]string{"sideways"}, 2, "", `unknown verb "sideways"`},
		{[]string{"stauts"}, 2, "", `did you mean "status"?`},
		{[]string{"down", "--force"}, 2, "", "unknown flag: --force\nUsage: nuv registry down"},
		{[]string{"status", "extra"}, 2, "", "unexpected arguments: extra"},
		{[]string{"serve"}, 2, "", "--dir is required\nUsage: nuv registry serve"},
		{[]string{"status"}, 1, "registry: stopped", ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			env := &cli.Env{Streams: cli.Streams{Out: &out, Err: &errb}, Log: cli.Quiet(), Dir: home,
				Getenv: func(k string) string {
					if k == "NUV_HOME" {
						return home
					}
					return ""
				}}
			err := NewCommand().Run(context.Background(), env, tc.args)
			if cli.ExitCode(err) != tc.code {
				t.Fatalf("exit %d (%v), want %d", cli.ExitCode(err), err, tc.code)
			}
			if tc.stdout != "" && !strings.Contains(out.String(), tc.stdout) {
				t.Errorf("stdout %q lacks %q", out.String(), tc.stdout)
			}
			if tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)) {
				t.Errorf("error %v lacks %q", err, tc.errHas)
			}
		})
	}
}

package allkubescmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

func TestHelpNoArgumentsAndUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args                   []string
		code                   int
		stdout, stderr, errHas string
	}{
		{[]string{"--help"}, 0, "Usage: nuv all-kubes [flags] -- <target> [args]", "", ""},
		{nil, 0, "Usage: nuv all-kubes", "", ""},
		{[]string{"--group"}, 2, "", "", "name a target"},
		{[]string{"--parallel", "-1", "--", "dtest"}, 2, "", "", "use auto or a number"},
		{[]string{"--timeout", "-1s", "--", "dtest"}, 2, "", "", "--timeout -1s: must be positive"},
		{[]string{"--bogus", "--", "dtest"}, 2, "", "", "unknown flag: --bogus\nUsage: nuv all-kubes"},
		{[]string{"--", "dtest"}, 1, "", "", "no clusters in"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			env := &cli.Env{Streams: cli.Streams{Out: &out, Err: &errb}, Log: cli.Quiet(), Dir: dir, Exe: "/bin/false",
				Getenv: func(k string) string {
					if k == "NUV_HOME" {
						return dir
					}
					return ""
				}}
			err := NewCommand(nil).Run(context.Background(), env, tc.args)
			if cli.ExitCode(err) != tc.code {
				t.Fatalf("exit %d (%v), want %d", cli.ExitCode(err), err, tc.code)
			}
			for _, c := range []struct{ got, want string }{{out.String(), tc.stdout}, {errb.String(), tc.stderr}} {
				if !strings.Contains(c.got, c.want) {
					t.Errorf("output %q lacks %q", c.got, c.want)
				}
			}
			if tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)) {
				t.Errorf("error %v lacks %q", err, tc.errHas)
			}
		})
	}
}

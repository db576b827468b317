package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"plain error", errors.New("boom"), 1},
		{"usage error", Usagef("bad %s", "flag"), 2},
		{"explicit code", Exit(201, errors.New("task failed")), 201},
		{"wrapped explicit code", fmt.Errorf("run: %w", Exit(7, nil)), 7},
		{"wrapped usage error", fmt.Errorf("cluster: %w", Usagef("unknown flavor")), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitCode(tt.err); got != tt.want {
				t.Fatalf("ExitCode = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestLoggerVerbosity(t *testing.T) {
	var buf bytes.Buffer
	l := NewLogger(&buf, 1)
	l.Infof("info")
	l.Warnf("careful")
	l.V(1).Infof("detail")
	l.V(2).Infof("hidden")
	want := "info\nwarning: careful\ndetail\n"
	if buf.String() != want {
		t.Fatalf("log = %q, want %q", buf.String(), want)
	}
	if l.V(2).Enabled() || !l.V(1).Enabled() {
		t.Fatal("Enabled does not follow the verbosity")
	}
	Quiet().Infof("nothing") // must not panic
}

func TestParse(t *testing.T) {
	u := Usage{Line: "nuv demo [--timeout D] [--kubeconfig F]", Short: "demo: a command", Long: "More words."}
	cases := []struct {
		name           string
		args           []string
		done           bool
		code           int
		out, errHas    string
		timeout        time.Duration
		kubeconfig     string
		validateErrHas string
	}{
		{name: "defaults", timeout: time.Minute},
		{name: "flags", args: []string{"--timeout", "5s", "--kubeconfig", "k"}, timeout: 5 * time.Second, kubeconfig: "k"},
		{name: "help to stdout, exit 0", args: []string{"--help"}, done: true,
			out: "demo: a command\n\nUsage: nuv demo [--timeout D] [--kubeconfig F]\n\nFlags:\n"},
		{name: "short help", args: []string{"-h"}, done: true, out: "More words.\n"},
		{name: "unknown flag: usage error with the usage line", args: []string{"--nope"}, code: ExitUsage,
			errHas: "demo: unknown flag: --nope\nUsage: nuv demo [--timeout D] [--kubeconfig F]"},
		{name: "bad value names the flag and what it takes", args: []string{"--timeout", "soon"}, code: ExitUsage,
			errHas: `demo: --timeout "soon": not a duration (for example 30s, 5m, 1h30m)`},
		{name: "misspelt flag: did you mean", args: []string{"--timout", "5s"}, code: ExitUsage,
			errHas: "demo: unknown flag: --timout (did you mean --timeout?)"},
		{name: "zero timeout refused", args: []string{"--timeout", "0"}, validateErrHas: "--timeout 0s: must be positive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			env := &Env{Streams: Streams{Out: &out, Err: &out}}
			fs := NewFlagSet("demo")
			var to TimeoutOption
			var co ClusterOption
			to.AddFlags(fs, time.Minute, "bound of each wait")
			co.AddFlags(fs)
			done, err := Parse(env, fs, u, tc.args)
			if done != tc.done || ExitCode(err) != tc.code {
				t.Fatalf("done %v exit %d (%v), want %v %d", done, ExitCode(err), err, tc.done, tc.code)
			}
			if tc.errHas != "" && !strings.Contains(err.Error(), tc.errHas) {
				t.Fatalf("error %q lacks %q", err, tc.errHas)
			}
			if tc.out != "" && !strings.Contains(out.String(), tc.out) {
				t.Fatalf("stdout %q lacks %q", out.String(), tc.out)
			}
			if err != nil || done {
				return
			}
			verr := to.Validate(u, false)
			if tc.validateErrHas != "" {
				if verr == nil || !strings.Contains(verr.Error(), tc.validateErrHas) || ExitCode(verr) != ExitUsage {
					t.Fatalf("Validate = %v", verr)
				}
				return
			}
			if verr != nil || to.Timeout != tc.timeout || co.Kubeconfig != tc.kubeconfig {
				t.Fatalf("timeout %s kubeconfig %q (%v)", to.Timeout, co.Kubeconfig, verr)
			}
		})
	}
}

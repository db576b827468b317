package benchutil

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRepeatAndMedianOf(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name    string
		runs    int
		failAt  int // call index that fails; -1 never
		want    []time.Duration
		wantErr bool
	}{
		{"all runs", 3, -1, []time.Duration{1 * ms, 2 * ms, 3 * ms}, false},
		{"no runs", 0, -1, nil, false},
		{"stops at the first error", 4, 2, []time.Duration{1 * ms, 2 * ms}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			ds, err := Repeat(tc.runs, func() (time.Duration, error) {
				i := calls
				calls++
				if i == tc.failAt {
					return 0, errors.New("boom")
				}
				return time.Duration(i+1) * ms, nil
			})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if len(ds) != len(tc.want) {
				t.Fatalf("durations %v, want %v", ds, tc.want)
			}
			for i := range ds {
				if ds[i] != tc.want[i] {
					t.Errorf("durations %v, want %v", ds, tc.want)
				}
			}
			if tc.failAt >= 0 && calls != tc.failAt+1 {
				t.Errorf("%d calls after the failure at %d", calls, tc.failAt)
			}
		})
	}

	n := 0
	m, err := MedianOf(3, func() error { n++; time.Sleep(time.Duration(n) * 5 * ms); return nil })
	if err != nil || n != 3 {
		t.Fatalf("MedianOf: %v after %d calls", err, n)
	}
	if m < 10*ms || m >= 60*ms { // the middle call slept 10 ms (slack for a loaded machine)
		t.Errorf("MedianOf = %v, want about 10ms", m)
	}
	if _, err := MedianOf(3, func() error { return errors.New("boom") }); err == nil || err.Error() != "boom" {
		t.Errorf("MedianOf error = %v", err)
	}
}

func TestStatsRow(t *testing.T) {
	ds := []time.Duration{3 * time.Millisecond, 1500 * time.Microsecond, 40 * time.Millisecond}
	want := "| plan | 3.0 ms | 1.5 | 40.0 | <= 300 ms |\n"
	if got := StatsRow("plan", ds, "<= 300 ms"); got != want {
		t.Errorf("StatsRow = %q, want %q", got, want)
	}
	if !strings.HasPrefix(StatsHeader, "| figure | median | min | max | target |\n") {
		t.Errorf("StatsHeader = %q", StatsHeader)
	}
}

// TestNuvRun runs real processes: the shell stands in for nuv, since Nuv runs any binary.
func TestNuvRun(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "fake-nuv")
	// prints its directory, a variable and its arguments; "fail" exits 2
	if err := os.WriteFile(script, []byte("#!"+sh+"\necho \"$(pwd) $BENCH_VAR $*\"\n[ \"$1\" = fail ] && exit 2\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	n := Nuv{Bin: script, Dir: dir, Env: []string{"BENCH_VAR=one"}}
	for _, tc := range []struct {
		name     string
		nuv      Nuv
		args     []string
		wantOut  string
		wantExit int
	}{
		{"env and dir", n, []string{"cluster", "plan"}, dir + " one cluster plan\n", 0},
		{"With: later entries win", n.With("BENCH_VAR=two"), []string{"x"}, dir + " two x\n", 0},
		{"failure wraps the exit error", n, []string{"fail", "now"}, dir + " one fail now\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, out, err := tc.nuv.Run(tc.args...)
			if out != tc.wantOut {
				t.Errorf("output %q, want %q", out, tc.wantOut)
			}
			if d <= 0 {
				t.Errorf("duration %v", d)
			}
			var ee *exec.ExitError
			switch {
			case tc.wantExit == 0 && err != nil:
				t.Fatalf("Run: %v", err)
			case tc.wantExit != 0 && (!errors.As(err, &ee) || ee.ExitCode() != tc.wantExit):
				t.Fatalf("Run error %v, want exit %d", err, tc.wantExit)
			case tc.wantExit != 0 && (!strings.Contains(err.Error(), "nuv "+strings.Join(tc.args, " ")) || !strings.Contains(err.Error(), tc.wantOut)):
				t.Errorf("error %q does not name the command and carry the output", err)
			}
		})
	}
	if base := n.With("A=1"); len(n.Env) != 1 || len(base.Env) != 2 {
		t.Errorf("With changed its receiver: %v / %v", n.Env, base.Env)
	}
}

func TestServeLoopback(t *testing.T) {
	stopped := make(chan struct{})
	addr, stop, err := ServeLoopback(func(ctx context.Context, ln net.Listener) error {
		go func() { <-ctx.Done(); ln.Close() }()
		defer close(stopped)
		for {
			c, err := ln.Accept()
			if err != nil {
				return nil
			}
			io.WriteString(c, "hello")
			c.Close()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Errorf("addr %s is not on loopback", addr)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(c)
	c.Close()
	if string(got) != "hello" {
		t.Errorf("served %q", got)
	}
	stop()
	select {
	case <-stopped:
	default:
		t.Fatal("stop returned before serve did")
	}
}

func TestWorkspace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nuv")
	}
	ws, err := NewWorkspace("nuv-benchutil-test-")
	if err != nil {
		t.Fatal(err)
	}
	_, out, err := Nuv{Bin: ws.Nuv}.Run("-version")
	if err != nil || strings.TrimSpace(out) == "" {
		t.Errorf("built nuv -version: %v %q", err, out)
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ws.Dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s: %v", ws.Dir, err)
	}
}

// TestExit runs itself as a benchmark program whose run failed (or did not).
func TestExit(t *testing.T) {
	switch os.Getenv("BENCHUTIL_TEST_EXIT") {
	case "fail":
		Exit("bench/x", errors.New("boom"))
		os.Exit(0) // not reached
	case "ok":
		Exit("bench/x", nil)
		os.Stdout.WriteString("continued")
		os.Exit(0)
	}
	for _, tc := range []struct {
		mode, stdout, stderr string
		code                 int
	}{
		{"fail", "", "bench/x: boom\n", 1},
		{"ok", "continued", "", 0},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestExit$")
		cmd.Env = append(os.Environ(), "BENCHUTIL_TEST_EXIT="+tc.mode)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || stdout.String() != tc.stdout || stderr.String() != tc.stderr {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.mode, code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
}

package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunErrors(t *testing.T) {
	long := strings.Repeat("x", 10000) + "THE END"
	cases := []struct {
		name     string
		cmd      Cmd
		code     int
		msgHas   []string
		stderrIs string
	}{
		{name: "success", cmd: Cmd{Path: "sh", Args: []string{"-c", "exit 0"}}},
		{name: "exit status and stderr kept", cmd: Cmd{Path: "sh", Args: []string{"-c", "echo out; echo 'no such package' >&2; exit 3"}},
			code: 3, msgHas: []string{"sh -c", "exit status 3", "no such package"}, stderrIs: "no such package\n"},
		{name: "stderr also reaches the caller's writer", cmd: Cmd{Path: "sh", Args: []string{"-c", "echo oops >&2; exit 1"}, Stderr: &bytes.Buffer{}},
			code: 1, msgHas: []string{"oops"}, stderrIs: "oops\n"},
		{name: "only the tail of a long stderr", cmd: Cmd{Path: "sh", Args: []string{"-c", "printf '" + long + "' >&2; exit 1"}},
			code: 1, msgHas: []string{"THE END"}},
		{name: "a program that does not exist", cmd: Cmd{Path: "/nonexistent/prog", Args: []string{"a"}},
			code: -1, msgHas: []string{"prog a", "no such file"}},
		{name: "killed by a signal", cmd: Cmd{Path: "sh", Args: []string{"-c", "kill -9 $$"}},
			code: -1, msgHas: []string{"signal: killed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Run(context.Background(), tc.cmd)
			if tc.msgHas == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var re *RunError
			if !errors.As(err, &re) {
				t.Fatalf("error %v (%T) is not a *RunError", err, err)
			}
			if re.ExitCode != tc.code || ExitCode(err) != tc.code {
				t.Errorf("exit code %d, want %d", re.ExitCode, tc.code)
			}
			for _, s := range tc.msgHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("message %q lacks %q", err.Error(), s)
				}
			}
			if tc.stderrIs != "" && string(re.Stderr) != tc.stderrIs {
				t.Errorf("Stderr %q, want %q", re.Stderr, tc.stderrIs)
			}
			if len(re.Stderr) > stderrTail {
				t.Errorf("kept %d bytes of stderr", len(re.Stderr))
			}
			if b, ok := tc.cmd.Stderr.(*bytes.Buffer); ok && b.String() != tc.stderrIs {
				t.Errorf("caller's stderr %q", b.String())
			}
		})
	}
}

func TestOutputAndEnv(t *testing.T) {
	dir := t.TempDir()
	out, err := Output(context.Background(), Cmd{Path: "sh", Args: []string{"-c", "echo $A; pwd"}, Dir: dir, Env: []string{"A=b"}})
	if err != nil || string(out) != "b\n"+dir+"\n" {
		t.Fatalf("Output = %q, %v", out, err)
	}
	var both bytes.Buffer
	out, err = Output(context.Background(), Cmd{Path: "sh", Args: []string{"-c", "echo x; echo y >&2"}, Stdout: &both, Stderr: &both})
	if err != nil || string(out) != "x\n" || both.Len() != 0 {
		t.Fatalf("Output with shared writer = %q, %q, %v", out, both.String(), err)
	}
}

// TestGroupCancelEndsGrandchildren: a cancelled context ends the program's whole process group.
func TestGroupCancelEndsGrandchildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	p, err := Start(ctx, Cmd{Path: "sh", Args: []string{"-c", "sleep 300 & echo $! > " + pidFile + "; wait"}, Group: true, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	for i := 0; i < 200 && pid == 0; i++ {
		time.Sleep(10 * time.Millisecond)
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pid == 0 {
		t.Fatal("the grandchild did not start")
	}
	cancel()
	err = p.Wait()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Wait = %v, want context.Canceled", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d outlived the cancelled group", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestFindGo(t *testing.T) {
	fakeGo := func(t *testing.T) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "go"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	onPath, root := fakeGo(t), t.TempDir()
	os.MkdirAll(filepath.Join(root, "bin"), 0o755)
	os.WriteFile(filepath.Join(root, "bin", "go"), []byte("#!/bin/sh\n"), 0o755)
	notExec := t.TempDir()
	os.WriteFile(filepath.Join(notExec, "go"), []byte("not a program"), 0o644)
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"PATH first", map[string]string{"PATH": notExec + ":" + onPath, "GOROOT": root}, filepath.Join(onPath, "go")},
		{"GOROOT when PATH has none", map[string]string{"PATH": notExec, "GOROOT": root}, filepath.Join(root, "bin", "go")},
	}
	for _, tc := range cases {
		got, err := FindGo(func(k string) string { return tc.env[k] })
		if err != nil || got != tc.want {
			t.Errorf("%s: FindGo = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	// Nothing on PATH and no GOROOT: the toolchain nuv was built with, or a clear error.
	got, err := FindGo(func(string) string { return "" })
	if err != nil && !strings.Contains(err.Error(), "install Go") {
		t.Errorf("error %q does not say what to install", err)
	}
	if err == nil && !strings.HasSuffix(got, filepath.Join("bin", "go")) {
		t.Errorf("fallback %q", got)
	}
}

// TestSessionWritesStraightToItsFile: a detached program keeps writing to its log after the
// starter closed its own handle (no pipe through nuv), in a session of its own.
func TestSessionWritesStraightToItsFile(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(context.Background(), Cmd{Path: "sh", Args: []string{"-c", "sleep 0.2; echo late"}, Stdout: f, Stderr: f, Session: true})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(log); string(b) != "late\n" {
		t.Fatalf("log %q", b)
	}
}

// Package clustertest holds what the cloud providers' tests share: the test binary acting as nuv
// in its own process (so a failpoint can SIGKILL it and a kubeconfig's exec credential can run
// it), running that process and reading its exit, and an emulator served on loopback for the
// duration of a test.
package clustertest

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"

	"github.com/nuv-dev/nuv/internal/app"
)

// ActAsNuv is a test package's TestMain: when the environment variable named asNuv is "1" the
// test binary is nuv (its arguments nuv's, the same signal handling as nuv's main) and exits with
// nuv's exit code; otherwise it runs the tests.
func ActAsNuv(m *testing.M, asNuv string) {
	if os.Getenv(asNuv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := app.Main(ctx, append([]string{"nuv"}, os.Args[1:]...))
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// Command is `nuv ARGS` run by the test binary (ActAsNuv with asNuv set), in this process's
// environment plus env (later entries win). The caller may still change it before running it.
func Command(asNuv string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), asNuv+"=1"), env...)
	return cmd
}

// Output runs cmd and returns its stdout, its stderr and its exit code (-1 when a signal killed
// it). A command that cannot be started fails the test.
func Output(t testing.TB, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// Serve runs serve on a free 127.0.0.1 port until the test ends: its cleanup cancels serve's
// context and waits for it; an error other than http.ErrServerClosed fails the test. Cleanups
// registered after Serve run before it stops (e.g. deleting what a failed test left behind the
// emulator). It returns the listener's host:port.
func Serve(t testing.TB, serve func(ctx context.Context, ln net.Listener) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("server on %s: %v", ln.Addr(), err)
		}
	})
	return ln.Addr().String()
}

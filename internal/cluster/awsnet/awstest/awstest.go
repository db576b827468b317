// Package awstest holds the test helpers of nuv's AWS providers (packages eks and awsmachines):
// nuv's AWS emulator on loopback with the SDK's default chain pointed at it, a spec from YAML and
// golden files.
package awstest

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	emulator "github.com/nuv-dev/nuv/internal/emulator/aws"
	"github.com/nuv-dev/nuv/internal/syncbuf"
)

// Emulator is nuv's AWS emulator serving on loopback for a test.
type Emulator struct {
	*emulator.Server
	// URL is the emulator's endpoint.
	URL string
	env map[string]string
}

// StartEmulator serves nuv's AWS emulator on loopback until the test ends and points the SDK's
// default chain at it (through the environment, as `eval "$(nuv emulator env)"` does); delay is
// the emulator's delay of state changes. Its EKS clusters would be real local clusters; the unit
// tests only plan, so none is made.
func StartEmulator(t testing.TB, delay time.Duration) *Emulator {
	t.Helper()
	dir := t.TempDir()
	s, err := emulator.New(emulator.Options{Dir: dir, Delay: delay, Log: EmulatorLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- emulator.Serve(ctx, ln, s) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("emulator stopped with %v", err)
		}
	})
	key, secret, _, region := s.Credentials()
	e := &Emulator{Server: s, URL: "http://" + ln.Addr().String(), env: map[string]string{
		"AWS_ENDPOINT_URL": "http://" + ln.Addr().String(), "AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret,
		"AWS_REGION": region, "AWS_CONFIG_FILE": filepath.Join(dir, "no-config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "no-credentials"),
		"AWS_EC2_METADATA_DISABLED": "true",
	}}
	for k, v := range e.env {
		t.Setenv(k, v)
	}
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_SESSION_TOKEN", "")
	return e
}

// EmulatorLog is a logger for an emulator of the test (what it launched, when machines ran,
// how long the machine image took, what failed), whose lines are shown when the test fails: a
// request that timed out in the client says nothing of the emulator's side otherwise.
func EmulatorLog(t testing.TB) cli.Logger {
	b := &syncbuf.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the emulator's log:\n%s", b.String())
		}
	})
	return cli.NewLogger(b, 1)
}

// Getenv reads the environment that points at the emulator (a provider's Getenv).
func (e *Emulator) Getenv(k string) string { return e.env[k] }

// Parse decodes a spec document.
func Parse(t testing.TB, doc string) *spec.Cluster {
	t.Helper()
	cs, err := spec.Decode("spec.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cs[0]
}

// Golden compares got with testdata/NAME, rewriting the file first when update is set (a test
// package's -update flag).
func Golden(t testing.TB, update bool, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept):\n%s", path, got)
	}
}

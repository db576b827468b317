package eks

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	emulator "github.com/nuv-dev/nuv/internal/emulator/aws"
)

// testEmulator serves nuv's AWS emulator on loopback until the test ends and points the SDK's
// default chain at it (through the environment, as `eval "$(nuv emulator env)"` does). Its EKS
// clusters would be real local clusters; the unit tests here only plan, so none is made.
type testEmulator struct {
	*emulator.Server
	URL string
	env map[string]string
}

func startEmulator(t testing.TB, delay time.Duration) *testEmulator {
	t.Helper()
	dir := t.TempDir()
	// The emulator's log (the machine image's resolution, what it launched) is shown when the test
	// fails: a request that timed out says nothing of what the emulator was doing meanwhile.
	elog := &lockedLog{}
	s, err := emulator.New(emulator.Options{Dir: dir, Delay: delay, Log: cli.NewLogger(elog, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the emulator's log:\n%s", elog.String())
		}
	})
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
	e := &testEmulator{Server: s, URL: "http://" + ln.Addr().String(), env: map[string]string{
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

func (e *testEmulator) getenv(k string) string { return e.env[k] }

// lockedLog keeps what the emulator logs from its request goroutines.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

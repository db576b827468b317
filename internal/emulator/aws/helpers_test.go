package aws

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// testEmulator is an emulator serving on loopback for one test.
type testEmulator struct {
	*Server
	URL string
	Cfg aws.Config
	Dir string
}

// startEmulator serves an emulator with state in dir (a new temporary directory when empty) until
// the test ends; Cfg is an SDK configuration with the emulator's credentials.
func startEmulator(t testing.TB, dir string, delay time.Duration) *testEmulator {
	t.Helper()
	return startEmulatorWith(t, Options{Dir: dir, Delay: delay})
}

// startEmulatorWith is startEmulator with all the options (o.Dir empty: a new temporary directory).
func startEmulatorWith(t testing.TB, o Options) *testEmulator {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	dir := o.Dir
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, s) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("emulator stopped with %v", err)
			}
		}
	}
	t.Cleanup(stop)
	key, secret, _, region := s.Credentials()
	url := "http://" + ln.Addr().String()
	cfg := aws.Config{
		Region:       region,
		Credentials:  credentials.NewStaticCredentialsProvider(key, secret, ""),
		BaseEndpoint: aws.String(url),
	}
	return &testEmulator{Server: s, URL: url, Cfg: cfg, Dir: dir}
}

// admin sends method with body to the emulator's /_nuv/faults with its admin token.
func (e *testEmulator) admin(method, body string) (*http.Response, error) {
	tok, err := emucore.ReadAdminToken(e.Dir)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := emucore.NewAdminRequest(context.Background(), method, e.URL+"/_nuv/faults", tok, rd)
	if err != nil {
		return nil, err
	}
	return http.DefaultClient.Do(req)
}

// apiCode returns the AWS error code of err ("" when it is not an API error).
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// wantCode fails unless err is an API error with code, and returns its message.
func wantCode(t testing.TB, err error, code string) string {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %s", code)
	}
	if got := apiCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
	var ae smithy.APIError
	errors.As(err, &ae)
	return ae.ErrorMessage()
}

// mustErr is the panic of must: the failed call's error and where it was made.
type mustErr struct {
	err   error
	where string
}

// must returns v, or ends the test (through catch) when err is not nil.
func must[T any](v T, err error) T {
	if err != nil {
		_, file, line, _ := runtime.Caller(1)
		panic(mustErr{err, fmt.Sprintf("%s:%d", filepath.Base(file), line)})
	}
	return v
}

// catch turns a must failure into t.Fatal; every test using must defers it first.
func catch(t testing.TB) {
	if r := recover(); r != nil {
		if m, ok := r.(mustErr); ok {
			t.Fatalf("%s: %v", m.where, m.err)
		}
		panic(r)
	}
}

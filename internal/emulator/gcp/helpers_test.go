package gcp_test

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nuv-dev/nuv/internal/cluster/gke"
	"github.com/nuv-dev/nuv/internal/emulator/emucore"
	"github.com/nuv-dev/nuv/internal/emulator/gcp"
)

// testEmulator is an emulator serving on loopback for one test, and a Go client (gRPC, ADC with
// the emulator's credentials file) connected to it.
type testEmulator struct {
	*gcp.Server
	URL     string
	Dir     string
	Env     map[string]string
	Conn    *gke.Conn
	Project string
	stop    func()
}

func (e *testEmulator) getenv(k string) string { return e.Env[k] }

// startEmulator serves an emulator with state in dir (a new temporary directory when empty).
func startEmulator(t testing.TB, dir string, o gcp.Options) *testEmulator {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	o.Dir = dir
	s, err := gcp.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gcp.Serve(ctx, ln, s) }()
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
	url := "http://" + ln.Addr().String()
	project, _ := s.Project()
	e := &testEmulator{Server: s, URL: url, Dir: dir, Project: project, stop: stop, Env: map[string]string{
		gke.EndpointEnv:                  url + "/",
		"GOOGLE_APPLICATION_CREDENTIALS": filepath.Join(dir, gcp.CredentialsFileName),
		"HOME":                           t.TempDir(),
	}}
	// Serve writes the credentials file when it starts listening.
	for i := 0; i < 100; i++ {
		if gcp.Ping(context.Background(), ln.Addr().String()) == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cn, err := gke.Connect(context.Background(), e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cn.Client.Close() })
	e.Conn = cn
	return e
}

func (e *testEmulator) loc(l string) string { return "projects/" + e.Project + "/locations/" + l }

// wantCode fails unless err is a gRPC error with code, and returns its message.
func wantCode(t testing.TB, err error, code codes.Code) string {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %s", code)
	}
	if got := status.Code(err); got != code {
		t.Fatalf("error %v; want %s", err, code)
	}
	return status.Convert(err).Message()
}

// waitOp polls an operation until DONE.
func (e *testEmulator) waitOp(t testing.TB, op *containerpb.Operation, seen map[containerpb.Operation_Status]bool) *containerpb.Operation {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if seen != nil {
			seen[op.Status] = true
		}
		if op.Status == containerpb.Operation_DONE {
			return op
		}
		if time.Now().After(deadline) {
			t.Fatalf("operation %s still %s", op.Name, op.Status)
		}
		time.Sleep(50 * time.Millisecond)
		var err error
		op, err = e.Conn.Client.GetOperation(context.Background(), &containerpb.GetOperationRequest{Name: e.loc(op.Location) + "/operations/" + op.Name})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// fault adds faults through the admin endpoint.
func (e *testEmulator) fault(t testing.TB, body string) {
	t.Helper()
	tok, err := emucore.ReadAdminToken(e.Dir)
	if err != nil {
		t.Fatal(err)
	}
	req, err := emucore.NewAdminRequest(context.Background(), http.MethodPost, e.URL+"/_nuv/faults", tok, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("faults: %v %v", resp, err)
	}
	resp.Body.Close()
}

// Package servertest starts the real servers the shared state stores are tested against, once
// per test binary, on loopback: SeaweedFS (`weed server -s3`) for S3. A test asks for one (S3)
// and gets it started on first use; Main, which the package's TestMain calls, stops them at the
// end:
//
//	func TestMain(m *testing.M) { os.Exit(servertest.Main(m)) }
//
// The servers' binaries are built by hack/state-servers.sh (a stage of hack/test.sh) into the
// user's cache, named by their pinned version; a test outside -short fails, naming that script,
// when one is missing. Each server's process is recorded under TMPDIR (a pid file), so a test
// binary that dies before Main stops it leaves it to hack/test.sh's reaper.
package servertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/proc"
	"github.com/nuv-dev/nuv/internal/testservers"
)

// SeaweedFSVersion is the SeaweedFS module version the tests run (hack/state-servers.sh builds it).
const SeaweedFSVersion = "v0.0.0-20261109003541-7506e5f91cd6"

// S3Server is a running S3 server and the settings that reach it.
type S3Server struct {
	// Endpoint is http://127.0.0.1:PORT.
	Endpoint string
	// AccessKey and SecretKey are its one identity's (an administrator's) credentials.
	AccessKey, SecretKey string
	// Dir is the server's data directory; Log its output.
	Dir, Log string
	// StartTime is how long it took to answer.
	StartTime time.Duration
	// PID is the server's process.
	PID int
}

// Env is the environment that points AWS's SDK (and so nuv) at the server: endpoint, region and
// credentials.
func (s *S3Server) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// Setenv sets Env for the rest of the test (t.Setenv: not in parallel tests).
func (s *S3Server) Setenv(t testing.TB) {
	for _, kv := range s.Env() {
		k, v, _ := cut(kv)
		t.Setenv(k, v)
	}
}

func cut(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

var servers struct {
	mu   sync.Mutex
	once sync.Once
	s3   *S3Server
	err  error
	stop []func()
	dir  string
}

// WeedBinary is where the weed binary is: $NUV_WEED, else the cache directory
// hack/state-servers.sh builds it into.
func WeedBinary() (string, error) {
	return testservers.Program{Name: "SeaweedFS's weed " + SeaweedFSVersion, Env: "NUV_WEED", Script: "seaweedfs",
		Cached: "test-servers/weed-" + SeaweedFSVersion + "/weed"}.Path()
}

// S3 returns this test binary's S3 server, starting it on the first call, and points this test
// binary's AWS SDK at it (os.Setenv of Env: the rest of the binary's tests and the nuvs they run
// reach it). Under -short it skips the test; a server that cannot start fails it.
func S3(t testing.TB) *S3Server {
	t.Helper()
	if testing.Short() {
		t.Skip("starts an S3 server (SeaweedFS); skipped under -short")
	}
	servers.once.Do(func() {
		servers.s3, servers.err = startS3()
		if servers.err == nil {
			for _, kv := range servers.s3.Env() {
				k, v, _ := cut(kv)
				os.Setenv(k, v)
			}
		}
	})
	if servers.err != nil {
		t.Fatal(servers.err)
	}
	return servers.s3
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func startS3() (*S3Server, error) {
	weed, err := WeedBinary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "nuv-seaweedfs-")
	if err != nil {
		return nil, err
	}
	servers.mu.Lock()
	servers.stop = append(servers.stop, func() { os.RemoveAll(dir) })
	servers.mu.Unlock()
	s := &S3Server{AccessKey: "nuvtestaccess", SecretKey: "nuv-test-secret-" + strconv.Itoa(os.Getpid()), Dir: dir, Log: filepath.Join(dir, "weed.log")}
	conf := map[string]any{"identities": []any{map[string]any{
		"name":        "nuv-test",
		"credentials": []any{map[string]string{"accessKey": s.AccessKey, "secretKey": s.SecretKey}},
		"actions":     []string{"Admin", "Read", "List", "Tagging", "Write"},
	}}}
	b, _ := json.Marshal(conf)
	confPath := filepath.Join(dir, "s3.json")
	if err := os.WriteFile(confPath, b, 0o600); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return nil, err
	}
	p, err := freePorts(8)
	if err != nil {
		return nil, err
	}
	s.Endpoint = "http://127.0.0.1:" + strconv.Itoa(p[6])
	args := []string{"server", "-ip", "127.0.0.1", "-ip.bind", "127.0.0.1", "-dir", data,
		"-master.port", strconv.Itoa(p[0]), "-master.port.grpc", strconv.Itoa(p[1]),
		"-volume.port", strconv.Itoa(p[2]), "-volume.port.grpc", strconv.Itoa(p[3]),
		"-filer.port", strconv.Itoa(p[4]), "-filer.port.grpc", strconv.Itoa(p[5]),
		"-s3", "-s3.port", strconv.Itoa(p[6]), "-s3.port.grpc", strconv.Itoa(p[7]),
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.config", confPath,
		"-master.volumeSizeLimitMB", "64", "-volume.max", "16"}
	started := time.Now()
	ctx := context.Background()
	pr, err := proc.LaunchReady(ctx, proc.Command{Path: weed, Args: args, Log: s.Log, Dir: dir}, "SeaweedFS (weed server -s3)", 90*time.Second,
		func(ctx context.Context, _ proc.Process) bool { return s3Ready(ctx, s) })
	if err != nil {
		return nil, err
	}
	s.PID = pr.PID
	s.StartTime = time.Since(started)
	_ = proc.WriteRecord(filepath.Join(dir, "weed.pid"), pr.PID)
	servers.mu.Lock()
	servers.stop = append(servers.stop, func() { _, _ = pr.Record.Stop(context.Background(), 10*time.Second) })
	servers.mu.Unlock()
	return s, nil
}

// s3Ready: the S3 port answers a request (any S3 answer, even an error, means it serves).
func s3Ready(ctx context.Context, s *S3Server) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Endpoint+"/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode < 500
}

// Main runs a test binary's tests (call it from TestMain: os.Exit(servertest.Main(m))) and stops
// the servers they started, whatever the result; an interrupt or termination stops them too.
func Main(m *testing.M) int {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			fmt.Fprintf(os.Stderr, "servertest: %v: stopping the test servers\n", s)
			stopAll()
			os.Exit(2)
		case <-done:
		}
	}()
	defer func() {
		signal.Stop(sig)
		close(done)
		stopAll()
	}()
	return m.Run()
}

func stopAll() {
	servers.mu.Lock()
	defer servers.mu.Unlock()
	for i := len(servers.stop) - 1; i >= 0; i-- {
		servers.stop[i]()
	}
	servers.stop = nil
}

// StartS3 starts an S3 server for a program that is not a test (bench/state), pointing the
// process's AWS SDK at it; stop ends it and removes its data.
func StartS3() (s *S3Server, stop func(), err error) {
	s, err = startS3()
	if err != nil {
		stopAll()
		return nil, nil, err
	}
	for _, kv := range s.Env() {
		k, v, _ := cut(kv)
		os.Setenv(k, v)
	}
	return s, stopAll, nil
}

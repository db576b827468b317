package registry

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/nuv-dev/nuv/internal/runner"
)

// unixTransport dials path whatever address a request names.
func unixTransport(path string) *http.Transport {
	return &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}
}

// TestIntegrationRegistrySocketAndRelay: the registry process serves its loopback port and its unix
// socket from one handler (an image pushed to the port is pulled from the socket, and one pushed
// to the socket from the port), the socket's directory is its owner's only, and
// nuv-registry-relay, built from the embedded source as nuv builds it, relays TCP to the socket:
// an image pulls through it, and it keeps working across a registry restart (a new socket file).
func TestIntegrationRegistrySocketAndRelay(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a registry process and builds the relay")
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "registry")
	t.Cleanup(func() { Down(context.Background(), dir) })
	s, _, err := Up(ctx, upOpts(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if s.Socket != SocketPath(dir) {
		t.Fatalf("state socket %q, want %q", s.Socket, SocketPath(dir))
	}
	if fi, err := os.Stat(SocketDir(dir)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket directory: %v %v, want 0700", fi.Mode(), err)
	}
	sock := remote.WithTransport(unixTransport(s.Socket))

	img, err := random.Image(2048, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	viaPort, _ := name.ParseReference(s.Host() + "/nuv/socket:port")
	push := remote.WithAuth(pushAuth(t, dir))
	if err := remote.Write(viaPort, img, push); err != nil {
		t.Fatal(err)
	}
	// the socket's client names any host: the registry answers whatever Host it is given
	got, err := remote.Image(mustRef(t, "nuv-registry:5000/nuv/socket:port"), sock)
	if err != nil {
		t.Fatalf("pull through the socket what was pushed to the port: %v", err)
	}
	if d, _ := got.Digest(); d != want {
		t.Fatalf("socket digest %s, port push %s", d, want)
	}
	img2, _ := random.Image(1024, 1)
	if err := remote.Write(mustRef(t, "nuv-registry:5000/nuv/socket:sock"), img2, sock, push); err != nil {
		t.Fatalf("push through the socket: %v", err)
	}
	if _, err := remote.Image(mustRef(t, s.Host()+"/nuv/socket:sock")); err != nil {
		t.Fatalf("pull from the port what was pushed to the socket: %v", err)
	}

	// the relay, built from RelaySource alone (a module of its own, standard library only)
	bin, relayAddr := startRelay(t, s.Socket)
	probe := func() error {
		out, err := exec.Command(bin, "probe", "http://"+relayAddr+"/v2/").CombinedOutput()
		if err != nil {
			return err
		}
		if !strings.HasPrefix(string(out), "OK ") {
			t.Errorf("probe printed %q", out)
		}
		return nil
	}
	waitFor(t, probe)
	got, err = remote.Image(mustRef(t, relayAddr+"/nuv/socket:port"))
	if err != nil {
		t.Fatalf("pull through the relay: %v", err)
	}
	if d, _ := got.Digest(); d != want {
		t.Fatalf("relay digest %s, want %s", d, want)
	}
	// through the relay (kind's network) as on the port: pulls are anonymous, pushes need the
	// push credentials
	anon, _ := random.Image(512, 1)
	if err := remote.Write(mustRef(t, relayAddr+"/nuv/socket:anon"), anon, noRetry); !isUnauthorized(err) {
		t.Fatalf("anonymous push through the relay: %v, want 401", err)
	}
	if err := remote.Write(mustRef(t, relayAddr+"/nuv/socket:relay"), anon, push); err != nil {
		t.Fatalf("authenticated push through the relay: %v", err)
	}
	layers, _ := got.Layers()
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		rc.Close()
	}

	// the registry restarts (a new socket file in the same directory): the relay reaches it again
	if _, err := Down(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if probe() == nil {
		t.Fatal("the relay answered with the registry down")
	}
	if _, _, err := Up(ctx, upOpts(t, dir)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, probe)
	if _, err := remote.Image(mustRef(t, relayAddr+"/nuv/socket:sock")); err != nil {
		t.Fatalf("pull through the relay after a registry restart: %v", err)
	}
	// probe of something that is not a registry fails
	if out, err := exec.Command(bin, "probe", "http://"+relayAddr+"/nothing").CombinedOutput(); err == nil {
		t.Errorf("probe of a 404 succeeded: %s", out)
	}
}

// TestUpPortTaken: a port held by another program is refused naming the port and the variable.
func TestUpPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	o := upOpts(t, filepath.Join(t.TempDir(), "registry"))
	o.Port = port
	_, _, err = Up(context.Background(), o)
	if err == nil {
		t.Fatal("Up on a taken port succeeded")
	}
	for _, w := range []string{"port " + strconv.Itoa(port), "taken", "NUV_REGISTRY_PORT"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}

// mustRef parses s as a plain-HTTP reference (the registry serves no TLS).
func mustRef(t testing.TB, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func waitFor(t testing.TB, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startRelay builds nuv-registry-relay from RelaySource alone (a module of its own, standard
// library only) and runs it on a free loopback port in front of socket until the test ends.
func startRelay(t testing.TB, socket string) (bin, addr string) {
	t.Helper()
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "go.mod"), []byte("module nuv.dev/registry-relay\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(src, "main.go"), RelaySource, 0o644)
	goBin, err := runner.FindGo(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(t.TempDir(), "nuv-registry-relay")
	build := exec.Command(goBin, "build", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the relay: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	relay := exec.Command(bin, "serve", "--listen", addr, "--socket", socket)
	relay.Stderr = os.Stderr
	if err := relay.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { relay.Process.Kill(); relay.Wait() })
	return bin, addr
}

// BenchmarkPullThroughRelay pulls the same image (4 layers of 8 MiB) from the registry's loopback
// port and through nuv-registry-relay (TCP to the registry's unix socket: the path kind nodes
// take), and prints each one's throughput and the relay's cost as a ratio.
func BenchmarkPullThroughRelay(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "registry")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeDir(ctx, dir, "127.0.0.1:0", nil) }()
	b.Cleanup(func() { cancel(); <-done })
	var s State
	waitFor(b, func() error {
		st, ok, err := Status(context.Background(), dir)
		if err != nil || !ok {
			return fmt.Errorf("registry not up: %v", err)
		}
		s = st
		return nil
	})
	_, relayAddr := startRelay(b, s.Socket)
	img, err := random.Image(8<<20, 4)
	if err != nil {
		b.Fatal(err)
	}
	if err := remote.Write(mustRef(b, s.Host()+"/nuv/bench:1"), img, remote.WithAuth(pushAuth(b, s.Dir))); err != nil {
		b.Fatal(err)
	}
	pull := func(b *testing.B, host string) {
		img, err := remote.Image(mustRef(b, host+"/nuv/bench:1"))
		if err != nil {
			b.Fatal(err)
		}
		layers, _ := img.Layers()
		for _, l := range layers {
			rc, err := l.Compressed()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, rc); err != nil {
				b.Fatal(err)
			}
			rc.Close()
		}
	}
	size := int64(0)
	layers, _ := img.Layers()
	for _, l := range layers {
		n, _ := l.Size()
		size += n
	}
	perOp := map[string]float64{}
	for _, c := range []struct{ name, host string }{{"port", s.Host()}, {"relay", relayAddr}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			start := time.Now()
			for i := 0; i < b.N; i++ {
				pull(b, c.host)
			}
			perOp[c.name] = float64(time.Since(start)) / float64(b.N)
		})
	}
	if perOp["port"] > 0 && perOp["relay"] > 0 {
		fmt.Printf("pull of %d MiB: port %.1f ms, relay %.1f ms: the relay takes %.2fx the direct pull\n",
			size>>20, perOp["port"]/1e6, perOp["relay"]/1e6, perOp["relay"]/perOp["port"])
	}
}

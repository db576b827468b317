package registry

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestMain lets the test binary act as `nuv registry serve`, so Up can start a real detached
// process without building nuv.
func TestMain(m *testing.M) {
	if os.Getenv("NUV_REGISTRY_TEST_SERVE") == "1" {
		args := os.Args[1:]
		var dir, addr string
		for i := 0; i+1 < len(args); i++ {
			switch args[i] {
			case "--dir":
				dir = args[i+1]
			case "--addr":
				addr = args[i+1]
			}
		}
		if err := ServeDir(context.Background(), dir, addr, os.Stderr); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func upOpts(t *testing.T, dir string) UpOptions {
	return UpOptions{Dir: dir, Port: 0, Command: []string{os.Args[0], "serve"}, Env: []string{"NUV_REGISTRY_TEST_SERVE=1"}}
}

func TestIntegrationRegistryUpStatusDownRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a registry process")
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "registry")
	t.Cleanup(func() { Down(context.Background(), dir) })

	if _, ok, err := Status(ctx, dir); err != nil || ok {
		t.Fatalf("status before up = %v, %v; want stopped", ok, err)
	}
	s, started, err := Up(ctx, upOpts(t, dir))
	if err != nil || !started {
		t.Fatalf("up: started=%v err=%v", started, err)
	}
	again, started2, err := Up(ctx, upOpts(t, dir))
	if err != nil || started2 || again.PID != s.PID {
		t.Fatalf("second up should reuse pid %d: got %d started=%v err=%v", s.PID, again.PID, started2, err)
	}
	if _, ok, err := Status(ctx, dir); err != nil || !ok {
		t.Fatalf("status after up = %v, %v", ok, err)
	}

	// push / pull round trip through the detached process
	img, err := random.Image(1024, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(s.Host() + "/nuv/roundtrip:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithAuth(pushAuth(t, dir))); err != nil {
		t.Fatalf("push: %v", err)
	}
	want, _ := img.Digest()
	got, err := remote.Image(ref)
	if err != nil {
		t.Fatalf("pull: %v", err)
	}
	if d, _ := got.Digest(); d != want {
		t.Fatalf("pulled digest %s, pushed %s", d, want)
	}

	// stop, start again: the image survives (blobs on disk, manifests replayed)
	if stopped, err := Down(ctx, dir); err != nil || !stopped {
		t.Fatalf("down: stopped=%v err=%v", stopped, err)
	}
	if _, ok, _ := Status(ctx, dir); ok {
		t.Fatal("status after down says running")
	}
	s2, _, err := Up(ctx, upOpts(t, dir))
	if err != nil {
		t.Fatalf("up after down: %v", err)
	}
	ref2, _ := name.ParseReference(s2.Host() + "/nuv/roundtrip:v1")
	got2, err := remote.Image(ref2)
	if err != nil {
		t.Fatalf("pull after restart: %v", err)
	}
	if d, _ := got2.Digest(); d != want {
		t.Fatalf("after restart digest %s, want %s", d, want)
	}
	layers, _ := got2.Layers()
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			t.Fatalf("layer after restart: %v", err)
		}
		rc.Close()
	}
}

func TestStatusStaleState(t *testing.T) {
	dir := t.TempDir()
	if err := WriteState(dir, State{PID: 999999999, Addr: "127.0.0.1:1", Dir: dir}); err != nil {
		t.Fatal(err)
	}
	_, ok, err := Status(context.Background(), dir)
	if err != nil || ok {
		t.Fatalf("stale state: ok=%v err=%v, want stopped", ok, err)
	}
	stopped, err := Down(context.Background(), dir)
	if err != nil || stopped {
		t.Fatalf("down on stale state: stopped=%v err=%v", stopped, err)
	}
	if _, err := ReadState(dir); !os.IsNotExist(err) {
		t.Fatalf("down should remove the stale state, got %v", err)
	}
}

func TestStateHost(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.1:5001", "localhost:5001"},
		{"127.0.0.1:40000", "localhost:40000"},
	} {
		if got := (State{Addr: tc.addr}).Host(); got != tc.want {
			t.Errorf("Host(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
}

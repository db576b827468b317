package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// pushAuth is the push credentials of the registry in dir.
func pushAuth(t testing.TB, dir string) authn.Authenticator {
	t.Helper()
	a, err := PushAuth(dir)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// isUnauthorized reports whether err is the registry's 401.
func isUnauthorized(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusUnauthorized
}

// TestPushNeedsCredentials: on the loopback port and on the unix socket (the relay's way in), an
// anonymous push, one with another token and a manifest delete are refused with 401 and a basic
// challenge; pulls stay anonymous; the push token is 0600 and the Keychain gives it for the
// registry's own host only.
func TestPushNeedsCredentials(t *testing.T) {
	dir := t.TempDir()
	h, err := NewHandler(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, pushTokenFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("push token file: %v %v, want 0600", fi, err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	sockPath := filepath.Join(t.TempDir(), "r.sock")
	sl, err := net.Listen("unix", sockPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Serve(ctx, sl, h)
	sock := remote.WithTransport(unixTransport(sockPath))

	img, _ := random.Image(512, 1)
	want, _ := img.Digest()
	other := authn.FromConfig(authn.AuthConfig{Username: PushUser, Password: strings.Repeat("0", 64)})
	for _, tc := range []struct {
		name string
		ref  string
		opts []remote.Option
	}{
		{"anonymous on the port", host + "/nuv/auth:anon", nil},
		{"another token on the port", host + "/nuv/auth:other", []remote.Option{remote.WithAuth(other)}},
		{"anonymous on the socket", "nuv-registry:5000/nuv/auth:anon", []remote.Option{sock}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := remote.Write(mustRef(t, tc.ref), img, append(tc.opts, noRetry)...); !isUnauthorized(err) {
				t.Fatalf("push: %v, want 401", err)
			}
		})
	}
	// nothing of the refused pushes was stored
	if _, err := remote.Head(mustRef(t, host+"/nuv/auth:anon")); err == nil {
		t.Fatal("a refused push is served")
	}
	resp, err := http.Post(srv.URL+"/v2/nuv/auth/blobs/uploads/", "application/octet-stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
		t.Fatalf("anonymous upload: %d %v, want 401 with a basic challenge", resp.StatusCode, resp.Header)
	}

	push := remote.WithAuth(pushAuth(t, dir))
	if err := remote.Write(mustRef(t, host+"/nuv/auth:ok"), img, push); err != nil {
		t.Fatalf("authenticated push: %v", err)
	}
	for _, ref := range []string{host + "/nuv/auth:ok", "nuv-registry:5000/nuv/auth:ok"} {
		opts := []remote.Option{}
		if strings.HasPrefix(ref, "nuv-registry") {
			opts = append(opts, sock)
		}
		got, err := remote.Image(mustRef(t, ref), opts...)
		if err != nil {
			t.Fatalf("anonymous pull of %s: %v", ref, err)
		}
		if d, _ := got.Digest(); d != want {
			t.Fatalf("pulled %s, pushed %s", d, want)
		}
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/v2/nuv/auth/manifests/ok", nil)
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("anonymous delete: %d, want 401", resp.StatusCode)
	}

	// The keychain: the registry's own loopback host gets the credentials, others nothing.
	port := strings.TrimPrefix(host, "127.0.0.1:")
	if err := WriteState(dir, State{PID: os.Getpid(), Addr: host, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		reg  string
		auth bool
	}{
		{"localhost:" + port, true}, {"127.0.0.1:" + port, true}, {"localhost:1", false}, {"ghcr.io", false}, {"example.com:" + port, false},
	} {
		r, _ := name.NewRegistry(tc.reg)
		a, err := (Keychain{Dir: dir}).Resolve(r)
		if err != nil || (a != authn.Anonymous) != tc.auth {
			t.Errorf("keychain for %s: %v %v, want credentials %v", tc.reg, a, err, tc.auth)
		}
	}
}

// TestManifestTooLarge: a manifest over the limit is answered 413 (declared or streamed), not cut.
func TestManifestTooLarge(t *testing.T) {
	dir := t.TempDir()
	h, err := NewHandler(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	tok, _ := ReadPushToken(dir)
	big := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","annotations":{"a":"` + strings.Repeat("a", MaxManifest) + `"}}`)
	for _, streamed := range []bool{false, true} {
		var body = bytes.NewReader(big)
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v2/nuv/big/manifests/v1", body)
		if streamed {
			req, _ = http.NewRequest(http.MethodPut, srv.URL+"/v2/nuv/big/manifests/v1", struct{ *bytes.Reader }{body})
			req.ContentLength = -1
		}
		req.SetBasicAuth(PushUser, tok)
		req.Header.Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("manifest of %d bytes (streamed %v): %d, want 413", len(big), streamed, resp.StatusCode)
		}
	}
}

// TestCheckAddr: the registry listens on loopback only, unless allowed explicitly with TLS.
func TestCheckAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		o    ListenOptions
		want string
	}{
		{"127.0.0.1:5001", ListenOptions{}, ""},
		{"localhost:5001", ListenOptions{}, ""},
		{"[::1]:5001", ListenOptions{}, ""},
		{":5001", ListenOptions{}, "is not loopback"},
		{"0.0.0.0:5001", ListenOptions{}, "is not loopback"},
		{"192.168.1.5:5001", ListenOptions{}, "--allow-remote"},
		{"0.0.0.0:5001", ListenOptions{AllowRemote: true}, "needs TLS"},
		{"0.0.0.0:5001", ListenOptions{AllowRemote: true, CertFile: "c.pem", KeyFile: "k.pem"}, ""},
		{"5001", ListenOptions{}, "want HOST:PORT"},
	} {
		err := CheckAddr(tc.addr, tc.o)
		if got := fmt.Sprint(err); (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(got, tc.want)) {
			t.Errorf("CheckAddr(%q, %+v) = %v, want %q", tc.addr, tc.o, err, tc.want)
		}
	}
	// ServeDirWith refuses before listening or writing anything.
	dir := t.TempDir()
	if err := ServeDirWith(context.Background(), dir, "0.0.0.0:0", nil, ListenOptions{}); err == nil || !strings.Contains(err.Error(), "is not loopback") {
		t.Fatalf("serve on 0.0.0.0: %v", err)
	}
	if _, err := os.Stat(stateFile(dir)); !os.IsNotExist(err) {
		t.Fatalf("a refused serve wrote its state: %v", err)
	}
}

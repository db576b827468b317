package localkube

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/version"
)

// TestPrepareFromRelease: with nothing cached, an installed release takes nuv-kube from its own
// release archive (fetched from the mirror, verified against the compiled-in sum) before the
// upstream downloads, for HA clusters too (nuv-kube has the balancer); the next Prepare finds it
// in the cache without a request. A tampered archive stops Prepare: no fallback hides it.
func TestPrepareFromRelease(t *testing.T) {
	const v = "1.2.0"
	archive := testArchive(t, "nuv-kube", "#!/bin/sh\necho Kubernetes v"+KubeVersion+"\n")
	sum := sha256.Sum256(archive)
	name := companion.ReleaseArchives[0].FileName(v, "linux", "amd64")
	for _, tc := range []struct {
		name     string
		served   []byte
		balancer bool
		err      string
	}{
		{name: "plain", served: archive},
		{name: "HA", served: archive, balancer: true},
		{name: "tampered", served: append(append([]byte(nil), archive...), 0), err: "was released with " + hex.EncodeToString(sum[:])},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var requests atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				if r.URL.Path != "/"+name {
					http.NotFound(w, r)
					return
				}
				w.Write(tc.served)
			}))
			defer srv.Close()
			cache := t.TempDir()
			env := map[string]string{"NUV_CACHE_DIR": cache, "HOME": t.TempDir(), "PATH": os.Getenv("PATH"), companion.EnvReleaseMirror: srv.URL}
			c := Companion{Getenv: func(k string) string { return env[k] }, GOOS: "linux", GOARCH: "amd64",
				Release: &companion.Release{Version: v, GOOS: "linux", GOARCH: "amd64", Beside: []string{},
					Sums: map[string]string{version.CompanionKey("nuv-kube", "linux", "amd64"): hex.EncodeToString(sum[:])}}}
			ctx := context.Background()
			b, err := c.Prepare(ctx, PrepareOptions{Balancer: tc.balancer})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, companion.ErrRefused) {
					t.Fatalf("Prepare = %+v, %v; want a refusal with %q", b, err, tc.err)
				}
				if entries, _ := os.ReadDir(filepath.Join(cache, "nuv-kube")); len(entries) != 1 || entries[0].Name() != "release.lock" {
					t.Errorf("the cache holds %v after a refusal", entries)
				}
				return
			}
			want := filepath.Join(companion.ReleaseDir(cache, companion.ReleaseArchives[0], v, "linux", "amd64"), "nuv-kube")
			if err != nil || b.Path != want || !strings.HasPrefix(b.Source, "nuv's release archive "+name+", downloaded from "+srv.URL) {
				t.Fatalf("Prepare = %+v, %v; want %s from the release", b, err, want)
			}
			again, err := c.Prepare(ctx, PrepareOptions{Balancer: tc.balancer})
			if err != nil || again != b || requests.Load() != 1 {
				t.Errorf("second Prepare = %+v, %v after %d requests; want the cached %+v and one request", again, err, requests.Load(), b)
			}
			if got := c.Describe(ctx); got != b.Source {
				t.Errorf("Describe = %q, want %q", got, b.Source)
			}
		})
	}
}

// testArchive is a release archive holding one file.
func testArchive(t *testing.T, name, body string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(body))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

package deploy

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
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/version"
)

// TestReleasedOperator: a released nuv runs the whisk-operator of its release for a project whose
// operator sources hash as the release's (fetched, verified, then from the cache: no Go), and
// not for one whose sources differ or when the nuv was not released; a tampered archive is an
// error.
func TestReleasedOperator(t *testing.T) {
	p := t.TempDir()
	for rel, content := range map[string]string{"go.mod": "module x\n", "operator/cmd/whisk-operator/main.go": "package main\n"} {
		f := filepath.Join(p, rel)
		os.MkdirAll(filepath.Dir(f), 0o755)
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mine, err := sourceHash(Options{Project: p, Getenv: envOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	archive := operatorArchive(t)
	sum := sha256.Sum256(archive)
	key := version.CompanionKey("whisk-operator", runtime.GOOS, runtime.GOARCH)
	name := companion.ReleaseArchives[2].FileName(version.Version, runtime.GOOS, runtime.GOARCH)
	defer func(c, s string) { version.Companions, version.OperatorSources = c, s }(version.Companions, version.OperatorSources)

	for _, tc := range []struct {
		name              string
		companions, srcs  string
		served            []byte
		requests          int64
		released, refused bool
	}{
		{name: "the release's operator", companions: key + "=" + hex.EncodeToString(sum[:]), srcs: mine, served: archive, requests: 1, released: true},
		{name: "a project with its own operator", companions: key + "=" + hex.EncodeToString(sum[:]), srcs: "0123456789abcdef", served: archive},
		{name: "a nuv that was not released", srcs: mine, served: archive},
		{name: "tampered", companions: key + "=" + hex.EncodeToString(sum[:]), srcs: mine, served: append([]byte("x"), archive...), requests: 1, refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			version.Companions, version.OperatorSources = tc.companions, tc.srcs
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
			o := Options{Project: p, Log: cli.Quiet(), Getenv: envOf(map[string]string{"NUV_CACHE_DIR": cache, companion.EnvReleaseMirror: srv.URL})}
			bin, err := releasedOperator(context.Background(), o, mine)
			if requests.Load() != tc.requests {
				t.Errorf("%d requests, want %d", requests.Load(), tc.requests)
			}
			switch {
			case tc.refused:
				if !errors.Is(err, companion.ErrRefused) || bin != "" {
					t.Fatalf("releasedOperator = %q, %v; want a refusal", bin, err)
				}
			case tc.released:
				want := filepath.Join(companion.ReleaseDir(cache, companion.ReleaseArchives[2], version.Version, runtime.GOOS, runtime.GOARCH), "whisk-operator")
				if err != nil || bin != want {
					t.Fatalf("releasedOperator = %q, %v; want %s", bin, err, want)
				}
				// buildBinary takes it (from the cache now) without looking for Go
				if got, err := buildBinary(context.Background(), o); err != nil || got != want || requests.Load() != 1 {
					t.Errorf("buildBinary = %q, %v after %d requests; want %s without another", got, err, requests.Load(), want)
				}
			default:
				if err != nil || bin != "" {
					t.Fatalf("releasedOperator = %q, %v; want nothing", bin, err)
				}
			}
		})
	}
}

func operatorArchive(t *testing.T) []byte {
	t.Helper()
	body := "#!/bin/sh\nexec sleep 1\n"
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: "whisk-operator", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(body))
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

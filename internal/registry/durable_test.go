package registry

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// noRetry makes a push fail at the first 500 (the client's default retries only slow the test).
var noRetry = remote.WithRetryBackoff(remote.Backoff{Steps: 1})

// TestManifestWriteNotDurableIsNotAcknowledged breaks the storage in each way a manifest write can
// fail (the manifest body, the journal) and requires that the push fails and that the registry
// serves neither the new tag nor a failed retag of an existing one.
func TestManifestWriteNotDurableIsNotAcknowledged(t *testing.T) {
	for _, tc := range []struct {
		name    string
		breakIt func(t *testing.T, dir string)
	}{
		{"journal cannot be appended", func(t *testing.T, dir string) {
			j := filepath.Join(dir, "manifests.jsonl")
			if err := os.Remove(j); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(j, 0o755); err != nil { // a directory where the journal file should be
				t.Fatal(err)
			}
		}},
		{"manifest body cannot be written", func(t *testing.T, dir string) {
			m := filepath.Join(dir, "manifests")
			if err := os.RemoveAll(m); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(m, nil, 0o644); err != nil { // a file where the directory should be
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			h, err := NewHandler(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			host := strings.TrimPrefix(srv.URL, "http://")

			kept, _ := random.Image(512, 1)
			keptRef, _ := name.ParseReference(host + "/nuv/durable:kept")
			push := remote.WithAuth(pushAuth(t, dir))
			if err := remote.Write(keptRef, kept, push); err != nil {
				t.Fatalf("push before the fault: %v", err)
			}

			tc.breakIt(t, dir)
			lost, _ := random.Image(512, 1)
			lostRef, _ := name.ParseReference(host + "/nuv/durable:lost")
			err = remote.Write(lostRef, lost, noRetry, push)
			if err == nil {
				t.Fatal("push acknowledged although its manifest could not be stored")
			}
			if !strings.Contains(err.Error(), "500") {
				t.Errorf("push error %v, want the registry's 500", err)
			}
			if _, err := remote.Head(lostRef); err == nil {
				t.Error("the registry serves a tag it could not store")
			}
			// a retag of an existing tag that fails leaves the old manifest served
			if err := remote.Write(keptRef, lost, noRetry, push); err == nil {
				t.Fatal("retag acknowledged although it could not be stored")
			}
			desc, err := remote.Head(keptRef)
			if err != nil {
				t.Fatalf("kept tag after a failed retag: %v", err)
			}
			if want, _ := kept.Digest(); desc.Digest != want {
				t.Errorf("kept tag now %s, want %s (the failed retag must not show)", desc.Digest, want)
			}
		})
	}
}

// TestRestartReplaysAcknowledgedWrites pushes, deletes and retags through one handler and requires
// a second handler on the same directory to serve exactly what was acknowledged.
func TestRestartReplaysAcknowledgedWrites(t *testing.T) {
	dir := t.TempDir()
	h, err := NewHandler(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	host := strings.TrimPrefix(srv.URL, "http://")
	a, _ := random.Image(512, 2)
	b, _ := random.Image(512, 1)
	ref := func(tag string) name.Reference { r, _ := name.ParseReference(host + "/nuv/replay:" + tag); return r }
	push := remote.WithAuth(pushAuth(t, dir))
	if err := remote.Write(ref("one"), a, push); err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref("two"), a, push); err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref("two"), b, push); err != nil {
		t.Fatal(err)
	}
	if err := remote.Delete(ref("one"), push); err != nil {
		t.Fatal(err)
	}
	srv.Close()

	h2, err := NewHandler(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(h2)
	defer srv2.Close()
	host = strings.TrimPrefix(srv2.URL, "http://")
	if _, err := remote.Head(ref("one")); err == nil {
		t.Error("a deleted tag came back after a restart")
	}
	desc, err := remote.Head(ref("two"))
	if err != nil {
		t.Fatalf("retagged tag after restart: %v", err)
	}
	if want, _ := b.Digest(); desc.Digest != want {
		t.Errorf("after restart %s, want the last acknowledged %s", desc.Digest, want)
	}
	img, err := remote.Image(ref("two"))
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			t.Fatalf("blob after restart: %v", err)
		}
		rc.Close()
	}
}

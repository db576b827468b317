package gobuild

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/nuv-dev/nuv/internal/image"
	"github.com/nuv-dev/nuv/internal/image/imagetest"
	"github.com/nuv-dev/nuv/internal/image/tag"
)

func spec(t *testing.T, dir string) image.Spec {
	t.Helper()
	ctx := context.Background()
	g := tag.Git{Dir: dir}
	rev, err := g.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	epoch, err := g.CommitEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := image.ParsePlatforms("linux/amd64,linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	return image.Spec{Dir: dir, Main: "./cmd/hello", Platforms: ps, Version: "0.1.0-dev.26010100",
		Revision: rev, Source: g.Source(ctx), Epoch: epoch, Entrypoint: "hello"}
}

func TestIntegrationBuildIndexContentAndReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles Go for two platforms")
	}
	ctx := context.Background()
	dir := t.TempDir()
	epoch := imagetest.GoModule(t, dir)
	s := spec(t, dir)
	if s.Epoch != epoch {
		t.Fatalf("epoch from the commit = %d, want %d", s.Epoch, epoch)
	}
	idx, err := (&Builder{}).Build(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 2 {
		t.Fatalf("index has %d manifests, want 2", len(m.Manifests))
	}
	for i, want := range []string{"linux/amd64", "linux/arm64"} {
		d := m.Manifests[i]
		if d.Platform == nil || d.Platform.String() != want {
			t.Fatalf("manifest %d platform %v, want %s", i, d.Platform, want)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS+"/"+cf.Architecture != want {
			t.Errorf("config platform %s/%s, want %s", cf.OS, cf.Architecture, want)
		}
		if got := cf.Config.Entrypoint; len(got) != 1 || got[0] != "/usr/local/bin/hello" {
			t.Errorf("entrypoint %v", got)
		}
		if cf.Config.User != "65532:65532" {
			t.Errorf("user %q, want 65532:65532", cf.Config.User)
		}
		for k, v := range map[string]string{
			LabelRevision: s.Revision, LabelSource: "https://github.com/nuv-dev/hello",
			LabelVersion: s.Version, LabelCreated: "2026-01-01T00:00:00Z",
		} {
			if cf.Config.Labels[k] != v {
				t.Errorf("label %s = %q, want %q", k, cf.Config.Labels[k], v)
			}
		}
		if !cf.Created.Time.Equal(time.Unix(epoch, 0)) {
			t.Errorf("created %v, want the commit time", cf.Created)
		}
		checkLayers(t, img, epoch)
	}

	// the same commit, built again from another clone (another path), gives the same digest
	d1, _ := idx.Digest()
	clone := filepath.Join(t.TempDir(), "clone")
	imagetest.Git(t, dir, "clone", "-q", dir, clone)
	idx2, err := (&Builder{}).Build(ctx, spec(t, clone))
	if err != nil {
		t.Fatal(err)
	}
	// the clone's origin is the first checkout: same source label for the comparison
	d2, _ := idx2.Digest()
	s2 := spec(t, clone)
	s2.Source = s.Source
	idx3, err := (&Builder{}).Build(ctx, s2)
	if err != nil {
		t.Fatal(err)
	}
	d3, _ := idx3.Digest()
	if d1 != d3 {
		t.Errorf("same commit built twice: %s then %s", d1, d3)
	}
	if d2 == d1 {
		t.Errorf("a different source label should change the digest")
	}
	t.Logf("index digest %s (reproduced from a second clone)", d1)
}

// checkLayers: the CA bundle, passwd and the binary are there, every entry has the commit time
// and a fixed owner.
func checkLayers(t *testing.T, img v1.Image, epoch int64) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]*tar.Header{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			seen[h.Name] = h
			if h.ModTime.Unix() != epoch {
				t.Errorf("%s mtime %v, want %d", h.Name, h.ModTime, epoch)
			}
			if h.Uname != "" || h.Gname != "" {
				t.Errorf("%s owner names %q/%q, want none", h.Name, h.Uname, h.Gname)
			}
		}
		rc.Close()
	}
	for _, want := range []string{"etc/ssl/certs/ca-certificates.crt", "etc/passwd", "etc/group", "usr/local/bin/hello"} {
		if seen[want] == nil {
			t.Errorf("layer file %s missing", want)
		}
	}
	if h := seen["usr/local/bin/hello"]; h != nil && h.Mode&0o111 == 0 {
		t.Errorf("binary mode %o is not executable", h.Mode)
	}
}

func TestCompileEnv(t *testing.T) {
	base := []string{"PATH=/bin", "GOOS=darwin", "CGO_ENABLED=1", "GOARM=5"}
	for _, tc := range []struct {
		p    v1.Platform
		want []string
	}{
		{v1.Platform{OS: "linux", Architecture: "arm64"}, []string{"PATH=/bin", "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0"}},
		{v1.Platform{OS: "linux", Architecture: "arm", Variant: "v7"}, []string{"PATH=/bin", "GOOS=linux", "GOARCH=arm", "CGO_ENABLED=0", "GOARM=7"}},
	} {
		got := compileEnv(base, tc.p)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %v, want %v", tc.p, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: %v, want %v", tc.p, got, tc.want)
			}
		}
	}
}

func TestParsePlatformsListsValidOnes(t *testing.T) {
	_, err := image.ParsePlatforms("linux/amd64,plan10/z80")
	if err == nil {
		t.Fatal("want an error for plan10/z80")
	}
	for _, want := range []string{"plan10/z80", "linux/arm64", "darwin/arm64", "go tool dist list"} {
		if !contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	ps, err := image.ParsePlatforms("")
	if err != nil || len(ps) != 2 {
		t.Fatalf("default platforms = %v, %v", ps, err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

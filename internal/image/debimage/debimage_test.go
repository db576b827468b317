package debimage

import (
	"archive/tar"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/nodeimage"
	"github.com/nuv-dev/nuv/internal/image/buildcache"
	"github.com/nuv-dev/nuv/internal/runner"
)

var bookworm = nodeimage.Debian{Suite: "bookworm", Mirror: "http://deb.debian.org/debian"}

func TestSpecValidate(t *testing.T) {
	ok := Spec{Repository: "nuv.dev/x", Tag: "v1", Packages: []string{"hello"}, Entrypoint: []string{"hello"}}
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"valid", func(*Spec) {}, ""},
		{"bad tag", func(s *Spec) { s.Tag = "a b" }, `image "nuv.dev/x:a b"`},
		{"no packages", func(s *Spec) { s.Packages = nil }, "no Debian packages"},
		{"relative file", func(s *Spec) { s.Files = []File{{Path: "etc/x"}} }, `file path "etc/x"`},
		{"unclean file", func(s *Spec) { s.Files = []File{{Path: "/etc/../x"}} }, `file path "/etc/../x"`},
		{"nothing to run", func(s *Spec) { s.Entrypoint = nil }, "neither an entrypoint nor a command"},
		{"npm pinned", func(s *Spec) { s.NPM = []string{"pouchdb-server@4.2.0", "@scope/pkg@1.0.0"} }, ""},
		{"npm unpinned", func(s *Spec) { s.NPM = []string{"pouchdb-server"} }, `npm package "pouchdb-server" is not pinned`},
		{"npm scoped unpinned", func(s *Spec) { s.NPM = []string{"@scope/pkg"} }, `npm package "@scope/pkg" is not pinned`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.edit(&s)
			err := s.validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestKeyFollowsEveryInput(t *testing.T) {
	base := Redis()
	k := Key(base, bookworm, "amd64")
	if k != Key(Redis(), bookworm, "amd64") {
		t.Fatal("the key is not stable")
	}
	for name, other := range map[string]string{
		"packages":   Key(func() Spec { s := Redis(); s.Packages = append(s.Packages, "curl"); return s }(), bookworm, "amd64"),
		"entrypoint": Key(func() Spec { s := Redis(); s.Entrypoint = []string{"redis-server"}; return s }(), bookworm, "amd64"),
		"files":      Key(func() Spec { s := Redis(); s.Files = []File{{Path: "/x", Data: "y"}}; return s }(), bookworm, "amd64"),
		"suite":      Key(base, nodeimage.Debian{Suite: "trixie", Mirror: bookworm.Mirror}, "amd64"),
		"mirror":     Key(base, nodeimage.Debian{Suite: "bookworm", Mirror: "http://mirror.example/debian"}, "amd64"),
		"arch":       Key(base, bookworm, "arm64"),
	} {
		if other == k {
			t.Errorf("changing the %s keeps the key %s", name, k)
		}
	}
}

func TestWorkloadSpecsAreValid(t *testing.T) {
	for _, n := range WorkloadNames() {
		s := Workload()[n]
		if (s.Deb == nil) == (s.Go == nil) {
			t.Errorf("%s: want exactly one of a Debian and a Go image", n)
			continue
		}
		if s.Deb != nil {
			if err := s.Deb.validate(); err != nil {
				t.Errorf("%s: %v", n, err)
			}
		}
		if !strings.HasSuffix(s.Ref(), ":"+WorkloadTag) {
			t.Errorf("%s: ref %s is not tagged %s", n, s.Ref(), WorkloadTag)
		}
	}
}

// TestImageFromRoot packs a root file system the way Build does and checks the image
// go-containerregistry wrote: one layer with nuv's files, the configuration of the Spec.
func TestImageFromRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	if err := os.MkdirAll(filepath.Join(root, "usr/share/doc/pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr/share/doc/pkg/README"), []byte("docs"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Static()
	if err := finishRoot(root, s); err != nil {
		t.Fatal(err)
	}
	layer := filepath.Join(t.TempDir(), "layer.tar")
	if err := runner.Run(context.Background(), runner.Cmd{Path: "tar", Args: []string{"--numeric-owner", "-C", root, "-cf", layer, "."}}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "image.tar")
	if err := writeImage(out, layer, s, bookworm, "k123"); err != nil {
		t.Fatal(err)
	}
	img, err := Result{Ref: s.Ref(), Tarball: out}.Image()
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}
	if strings.Join(cf.Config.Entrypoint, " ") != "/usr/local/bin/whisk-static" {
		t.Errorf("entrypoint %v", cf.Config.Entrypoint)
	}
	if len(cf.Config.Env) != 2 || !strings.HasPrefix(cf.Config.Env[0], "PATH=") || cf.Config.Env[1] != "PORT=80" {
		t.Errorf("env %v", cf.Config.Env)
	}
	if _, ok := cf.Config.ExposedPorts["80/tcp"]; !ok {
		t.Errorf("exposed ports %v", cf.Config.ExposedPorts)
	}
	if cf.Config.Labels["dev.nuv.key"] != "k123" || cf.Config.Labels["dev.nuv.debian-packages"] != "nginx-light" {
		t.Errorf("labels %v", cf.Config.Labels)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d, %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(h.Name, "./")] = h
	}
	if h := files["usr/local/bin/whisk-static"]; h == nil || h.Mode&0o111 == 0 {
		t.Errorf("entrypoint missing or not executable: %+v", h)
	}
	for _, f := range []string{"etc/nginx/whisk.conf.in", "var/www/whisk/index.html"} {
		if files[f] == nil {
			t.Errorf("%s missing from the layer", f)
		}
	}
	if files["usr/share/doc/pkg/README"] != nil {
		t.Error("documentation was not removed")
	}
}

// TestBuildCache: a valid entry is used as is; a damaged one is removed and rebuilt, never used
// (here the rebuild fails: the mirror is a closed loopback port).
func TestBuildCache(t *testing.T) {
	cache := t.TempDir()
	getenv := func(k string) string {
		if k == "NUV_CACHE_DIR" {
			return cache
		}
		return ""
	}
	deb := nodeimage.Debian{Suite: "bookworm", Mirror: "http://127.0.0.1:1/debian"}
	s := Static()
	key := Key(s, deb, runtime.GOARCH)
	entry := filepath.Join(CacheDir(getenv), "images", key)
	if err := os.MkdirAll(entry, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(entry, "image.tar"), []byte("an image"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := buildcache.WriteManifest(entry, key, s.Ref(), "image.tar"); err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), s, Options{Getenv: getenv, Debian: &deb})
	if err != nil || !r.Cached || r.Tarball != filepath.Join(entry, "image.tar") || r.Key != key {
		t.Fatalf("Build = %+v, %v; want the cached entry", r, err)
	}
	if err := os.WriteFile(filepath.Join(entry, "image.tar"), []byte("an image, damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = Build(context.Background(), s, Options{Getenv: getenv, Debian: &deb})
	if err == nil || r.Cached {
		t.Fatalf("Build used a damaged entry: %+v", r)
	}
	if !strings.Contains(err.Error(), "debootstrap") {
		t.Errorf("error %v does not name the failed rebuild", err)
	}
	if _, serr := os.Stat(entry); !os.IsNotExist(serr) {
		t.Errorf("the damaged entry is still there (%v)", serr)
	}
}

func TestPruneOlderKeepsTheNewestOfEachRef(t *testing.T) {
	root := t.TempDir()
	mk := func(key, ref string, age time.Duration) {
		dir := filepath.Join(root, key)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "image.tar"), []byte(key), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := buildcache.WriteManifest(dir, key, ref, "image.tar"); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(dir, when, when); err != nil {
			t.Fatal(err)
		}
	}
	mk("new", "nuv.dev/a:v1", 0)
	mk("older", "nuv.dev/a:v1", time.Hour)
	mk("oldest", "nuv.dev/a:v1", 2*time.Hour)
	mk("other", "nuv.dev/b:v1", 3*time.Hour)
	removed := pruneOlder(root, "nuv.dev/a:v1", "new", 2)
	if len(removed) != 1 || filepath.Base(removed[0]) != "oldest" {
		t.Errorf("removed %v, want only oldest", removed)
	}
	for _, k := range []string{"new", "older", "other"} {
		if !buildcache.Valid(filepath.Join(root, k), k) {
			t.Errorf("entry %s is gone or damaged", k)
		}
	}
}

package localkube_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kubebin"
	"github.com/nuv-dev/nuv/internal/cluster/kubebin/kubebintest"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/syncbuf"
)

// envWith is the process environment without the settings the test decides (the companion and
// cache locations, mirrors), plus extra KEY=VALUE pairs.
func envWith(extra ...string) func(string) string {
	m := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	for _, k := range []string{"NUV_KUBE_BIN", "NUV_CACHE_DIR", "XDG_CACHE_HOME", kubebin.EnvKubernetesMirror, kubebin.EnvEtcdMirror, kubebin.EnvKwokMirror, localkube.EnvDownloadCA} {
		delete(m, k)
	}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// TestIntegrationReleaseDownloads serves the binaries this nuv builds (nuv-kube, which runs as the
// component its name says) in the upstream release layouts from a loopback HTTPS mirror, and has
// nuv prepare from it: a fresh cache downloads, resumes a dropped file, verifies, and runs a real
// cluster on the five separate binaries; a tampered file is refused with nothing cached; an
// unreachable mirror falls back to the source build with one line saying so. The builds from
// source the fresh caches come to are ones another nuv finishes meanwhile
// (prepareWhileAnotherBuilds): the builds themselves are those of nuv's cache, made here once.
func TestIntegrationReleaseDownloads(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nuv-kube and runs a local cluster; skipped under -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	// The mirror serves what this nuv builds from its own sources (NUV_KUBE_BIN may be an older
	// build: etcd's upstream flag --config-file is new in nuv-kube).
	built, err := localkube.Companion{Getenv: envWith(), Log: testLogger(t)}.Prepare(ctx, localkube.PrepareOptions{Source: localkube.SourceBuild})
	if err != nil {
		t.Fatal(err)
	}
	m := kubebintest.Start(t)
	bins := map[string]string{}
	for _, c := range kubebin.Components {
		bins[c] = built.Path
	}
	// kwok alone, as nuv builds it when kwok's download cannot be verified: built once into nuv's
	// cache (warm: found there), the build another nuv makes in the subtest below.
	kwokBuild, err := localkube.Companion{Getenv: envWith(), Log: testLogger(t)}.BuildProgram(ctx, companion.ProgramKwok, false)
	if err != nil {
		t.Fatal(err)
	}
	goos, goarch := runtime.GOOS, runtime.GOARCH
	rel, lay := m.FillRelease(t, kubebin.Release{Kubernetes: localkube.KubeVersion, Etcd: "3.6.16", Kwok: "0.8.0"}, goos, goarch, bins)

	t.Run("fresh cache prepares from the mirror, resuming a dropped file, and runs a cluster", func(t *testing.T) {
		cache := t.TempDir()
		var logBuf bytes.Buffer
		apiserver := lay.Binary["kube-apiserver"]
		m.CutNext(apiserver, 50<<20)
		comp := localkube.Companion{Getenv: envWith(append(m.Env(), "NUV_CACHE_DIR="+cache)...), Log: cli.NewLogger(&logBuf, 0), Releases: []kubebin.Release{rel}}
		start := time.Now()
		b, err := comp.Prepare(ctx, localkube.PrepareOptions{})
		took := time.Since(start)
		t.Logf("cold prepare from the loopback mirror: %s\n%s", took.Round(100*time.Millisecond), logBuf.String())
		if err != nil {
			t.Fatal(err)
		}
		if want := kubebin.SetDir(cache, localkube.KubeVersion, goos, goarch); b.Path != want {
			t.Fatalf("binaries in %s, want %s", b.Path, want)
		}
		if !strings.Contains(b.Source, "downloaded from "+m.URL) || !strings.Contains(b.Source, "and nuv's pins") {
			t.Errorf("source %q", b.Source)
		}
		log := logBuf.String()
		for _, want := range []string{"downloading Kubernetes " + localkube.KubeVersion, " MB from " + m.URL, "kube-apiserver: connection lost", "resuming at", "verified (sha256", "downloaded and verified"} {
			if !strings.Contains(log, want) {
				t.Errorf("prepare log lacks %q", want)
			}
		}
		if reqs := m.Requests(apiserver); len(reqs) != 2 || !strings.HasPrefix(reqs[1].Range, "bytes=") {
			t.Errorf("kube-apiserver requests: %+v (want a whole-file request, then a range)", reqs)
		}
		// A real cluster on the downloaded set: each component is its own binary, with upstream flags.
		home, project := t.TempDir(), t.TempDir()
		p := localkube.Clusters{Home: home, Project: project, Log: testLogger(t), Getenv: envWith("NUV_CACHE_DIR=" + cache)}
		info, err := p.Create(ctx, localkube.CreateOptions{Name: "dl", Nodes: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := p.Delete(context.Background(), "dl"); err != nil {
				t.Errorf("clean-up: delete cluster dl: %v", err)
			}
		})
		if info.Status != cluster.Running || info.NodesReady != 1 || info.Binaries != b.Source {
			t.Fatalf("status %s, nodes ready %d, binaries %q", info.Status, info.NodesReady, info.Binaries)
		}
		if name, src, ok := localkube.BinariesOf(home, info.Kubeconfig); !ok || name != "dl" || src != b.Source {
			t.Errorf("BinariesOf: %q %q %v", name, src, ok)
		}
		for _, c := range info.Components {
			exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(c.PID), "exe"))
			if err != nil || exe != filepath.Join(b.Path, c.Name) {
				t.Errorf("%s runs %q (%v), want %s", c.Name, exe, err, filepath.Join(b.Path, c.Name))
			}
		}
	})

	t.Run("kwok without a pin is built from source while the rest downloads", func(t *testing.T) {
		cache := t.TempDir()
		unpinned := rel
		unpinned.Pins = map[string]string{}
		for k, v := range rel.Pins {
			if !strings.HasPrefix(k, "kwok ") {
				unpinned.Pins[k] = v
			}
		}
		var logBuf syncbuf.Buffer
		comp := localkube.Companion{Getenv: envWith(append(m.Env(), "NUV_CACHE_DIR="+cache)...), Log: cli.NewLogger(&logBuf, 0), Releases: []kubebin.Release{unpinned}}
		kwokRequests := len(m.Requests(lay.Binary["kwok"]))
		start := time.Now()
		b, err := prepareWhileAnotherBuilds(t, ctx, comp, localkube.PrepareOptions{Source: localkube.SourceDownload}, cache, kwokBuild, &logBuf)
		t.Logf("prepare with kwok built from source: %s\n%s", time.Since(start).Round(100*time.Millisecond), logBuf.String())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.Source, "kwok built from source by nuv") {
			t.Errorf("source %q does not say kwok was built", b.Source)
		}
		if n := len(m.Requests(lay.Binary["kwok"])) - kwokRequests; n != 0 {
			t.Errorf("kwok downloaded %d times without anything to verify it against", n)
		}
		kwokBin, whole := filepath.Join(b.Path, "kwok"), filepath.Join(b.Path, "kube-apiserver")
		ks, err1 := os.Stat(kwokBin)
		ws, err2 := os.Stat(whole)
		if err1 != nil || err2 != nil || ks.Size() >= ws.Size() {
			t.Errorf("kwok in the set is not the kwok-only build: %v %v", ks, ws)
		}
		home, project := t.TempDir(), t.TempDir()
		p := localkube.Clusters{Home: home, Project: project, Log: testLogger(t), Getenv: envWith("NUV_CACHE_DIR=" + cache)}
		info, err := p.Create(ctx, localkube.CreateOptions{Name: "kwokbuilt", Nodes: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := p.Delete(context.Background(), "kwokbuilt"); err != nil {
				t.Errorf("clean-up: delete cluster kwokbuilt: %v", err)
			}
		})
		if info.Status != cluster.Running || info.NodesReady != 2 {
			t.Fatalf("status %s, nodes ready %d", info.Status, info.NodesReady)
		}
	})

	t.Run("a tampered binary is refused and nothing is cached", func(t *testing.T) {
		cache := t.TempDir()
		evil := filepath.Join(t.TempDir(), "kube-controller-manager")
		data, err := os.ReadFile(built.Path)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/3] ^= 0x01
		if err := os.WriteFile(evil, data, 0o755); err != nil {
			t.Fatal(err)
		}
		m.Serve(lay.Binary["kube-controller-manager"], evil)
		defer m.Serve(lay.Binary["kube-controller-manager"], built.Path)
		comp := localkube.Companion{Getenv: envWith(append(m.Env(), "NUV_CACHE_DIR="+cache)...), Log: testLogger(t), Releases: []kubebin.Release{rel}}
		_, err = comp.Prepare(ctx, localkube.PrepareOptions{Source: localkube.SourceDownload})
		if err == nil || !strings.Contains(err.Error(), "kube-controller-manager") || !strings.Contains(err.Error(), "refused, nothing cached") {
			t.Fatalf("err = %v", err)
		}
		if _, err := os.Stat(kubebin.SetDir(cache, localkube.KubeVersion, goos, goarch)); !os.IsNotExist(err) {
			t.Fatalf("binaries cached after a refusal: %v", err)
		}
		if left, _ := filepath.Glob(filepath.Join(cache, "kubebin", "downloads", "kube-controller-manager*")); len(left) != 0 {
			t.Fatalf("the tampered download stays: %v", left)
		}
	})

	t.Run("an unreachable mirror falls back to the source build with one line", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := "https://" + l.Addr().String()
		l.Close()
		cache := t.TempDir()
		var logBuf syncbuf.Buffer
		comp := localkube.Companion{Getenv: envWith("NUV_CACHE_DIR="+cache, kubebin.EnvKubernetesMirror+"="+dead, kubebin.EnvEtcdMirror+"="+dead, kubebin.EnvKwokMirror+"="+dead),
			Log: cli.NewLogger(&logBuf, 0), Releases: []kubebin.Release{rel}}
		b, err := prepareWhileAnotherBuilds(t, ctx, comp, localkube.PrepareOptions{}, cache, built.Path, &logBuf)
		if err != nil {
			t.Fatalf("%v\n%s", err, logBuf.String())
		}
		if !strings.Contains(b.Source, "built from source") || b.Path != filepath.Join(cache, "nuv-kube", filepath.Base(filepath.Dir(built.Path)), "nuv-kube") {
			t.Fatalf("binaries %+v, want the build in %s", b, cache)
		}
		var fallback []string
		for _, l := range strings.Split(logBuf.String(), "\n") {
			if strings.Contains(l, dead) || strings.Contains(l, "could not download") {
				fallback = append(fallback, l)
			}
		}
		if len(fallback) != 1 || !strings.Contains(fallback[0], "building them from source instead") {
			t.Fatalf("want one fallback line, got %q\n%s", fallback, logBuf.String())
		}
	})
}

// prepareWhileAnotherBuilds runs comp.Prepare with the build it comes to (of the program whose
// cached build in nuv's cache is warm) made meanwhile by another nuv, as a concurrent `nuv
// cluster prepare` sharing the cache would: the test holds the build lock of that program's cache
// key in cache (the key depends on Go, the sources and the modules, not on the cache's place)
// and, once Prepare says it waits for it, puts the build in place and lets go; Prepare then takes
// the finished build instead of linking its own (a kwok or a nuv-kube of hundreds of MB: minutes
// of a loaded 2-core machine and gigabytes of memory; the build itself is what warmed the
// cache). It fails the test if Prepare never came to the build.
func prepareWhileAnotherBuilds(t *testing.T, ctx context.Context, comp localkube.Companion, o localkube.PrepareOptions, cache, warm string, logBuf *syncbuf.Buffer) (localkube.Binaries, error) {
	t.Helper()
	name := filepath.Base(warm)
	keyDir := filepath.Join(cache, name, filepath.Base(filepath.Dir(warm)))
	unlock, err := fsutil.Lock(ctx, filepath.Join(keyDir, "build.lock"), nil)
	if err != nil {
		t.Fatal(err)
	}
	type prepared struct {
		b   localkube.Binaries
		err error
	}
	res := make(chan prepared, 1)
	go func() {
		b, err := comp.Prepare(ctx, o)
		res <- prepared{b, err}
	}()
	waiting := "waiting for another nuv building " + name + " (" + keyDir + ")"
	for {
		select {
		case r := <-res:
			unlock()
			t.Errorf("Prepare did not come to the build of %s (no %q):\n%s", name, waiting, logBuf.String())
			return r.b, r.err
		case <-time.After(100 * time.Millisecond):
			if strings.Contains(logBuf.String(), waiting) {
				if err := copyFile(warm, filepath.Join(keyDir, name)); err != nil {
					unlock()
					t.Fatal(err)
				}
				unlock()
				r := <-res
				return r.b, r.err
			}
		}
	}
}

// copyFile puts the executable src at dst: a hard link where both are on one file system, else a
// copy through a temporary file renamed into place.
func copyFile(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

func testLogger(t *testing.T) cli.Logger { return cli.NewLogger(testWriter{t}, 0) }

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

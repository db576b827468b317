package localkube_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/kubebin"
	"github.com/nuv-dev/nuv/internal/cluster/kubebin/kubebintest"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
)

// BenchmarkColdPrepare measures the first `nuv cluster prepare` of a machine both ways, once each
// (a source build takes minutes: it is not looped): from a loopback HTTPS mirror of the release
// layouts (download and verification of the five binaries, into an empty cache), from that mirror
// with kwok unpinned as shipped (kwok built alone from source with an empty Go build cache while the
// rest downloads), and from source
// with an empty Go build cache (modules already in the module cache, so the proxy downloads a fresh
// machine also makes are not counted). Each is followed by a cluster create on the result, the rest
// of a first `nuv up`'s wait for a cluster. Run:
//
//	go test -run '^$' -bench ColdPrepare -benchtime 1x -timeout 60m ./internal/cluster/local/
//
// NUV_BENCH_SKIP_SOURCE=1 measures the mirror only.
func BenchmarkColdPrepare(b *testing.B) {
	ctx := context.Background()
	log := cli.NewLogger(os.Stderr, 0)
	built, err := localkube.Companion{Getenv: envWith(), Log: log}.Prepare(ctx, localkube.PrepareOptions{Source: localkube.SourceBuild})
	if err != nil {
		b.Fatal(err)
	}
	m := kubebintest.Start(b)
	bins := map[string]string{}
	for _, c := range kubebin.Components {
		bins[c] = built.Path
	}
	rel, _ := m.FillRelease(b, kubebin.Release{Kubernetes: localkube.KubeVersion, Etcd: "3.6.16", Kwok: "0.8.0"}, runtime.GOOS, runtime.GOARCH, bins)

	// What nuv ships today: no pin for kwok, whose releases publish no checksums.
	unpinned := rel
	unpinned.Pins = map[string]string{}
	for k, v := range rel.Pins {
		if k != kubebin.PinKey("kwok", runtime.GOOS, runtime.GOARCH) {
			unpinned.Pins[k] = v
		}
	}
	measure := func(name string, getenv func(string) string, o localkube.PrepareOptions, table ...kubebin.Release) (time.Duration, time.Duration) {
		if table == nil {
			table = []kubebin.Release{rel}
		}
		comp := localkube.Companion{Getenv: getenv, Log: log, Releases: table}
		start := time.Now()
		if _, err := comp.Prepare(ctx, o); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		prep := time.Since(start)
		p := localkube.Clusters{Home: b.TempDir(), Project: b.TempDir(), Log: log, Getenv: getenv}
		start = time.Now()
		if _, err := p.Create(ctx, localkube.CreateOptions{Name: "bench", Nodes: 1}); err != nil {
			b.Fatalf("%s: create: %v", name, err)
		}
		create := time.Since(start)
		if err := p.Delete(ctx, "bench"); err != nil {
			b.Fatalf("%s: delete: %v", name, err)
		}
		return prep, create
	}
	b.ResetTimer()
	mirrorPrep, mirrorCreate := measure("mirror", envWith(append(m.Env(), "NUV_CACHE_DIR="+b.TempDir())...), localkube.PrepareOptions{Source: localkube.SourceDownload})
	b.ReportMetric(mirrorPrep.Seconds(), "mirror-prepare-s")
	fmt.Printf("cold prepare from the loopback mirror (5 binaries, %d MB each, verified): %6.1f s, then cluster create %.1f s\n",
		fileMB(built.Path), mirrorPrep.Seconds(), mirrorCreate.Seconds())
	b.Setenv("GOCACHE", b.TempDir()) // a cold Go build cache: every package compiles
	kwokPrep, kwokCreate := measure("mirror, kwok built", envWith(append(m.Env(), "NUV_CACHE_DIR="+b.TempDir())...), localkube.PrepareOptions{Source: localkube.SourceDownload}, unpinned)
	b.ReportMetric(kwokPrep.Seconds(), "mirror-kwok-built-prepare-s")
	fmt.Printf("cold prepare from the mirror with kwok unpinned (built alone from source, empty build cache): %6.1f s, then cluster create %.1f s\n",
		kwokPrep.Seconds(), kwokCreate.Seconds())
	if os.Getenv("NUV_BENCH_SKIP_SOURCE") != "" {
		return
	}
	b.Setenv("GOCACHE", b.TempDir())
	srcPrep, srcCreate := measure("source", envWith("NUV_CACHE_DIR="+b.TempDir()), localkube.PrepareOptions{Source: localkube.SourceBuild})
	b.ReportMetric(srcPrep.Seconds(), "source-prepare-s")
	b.ReportMetric(srcPrep.Seconds()/mirrorPrep.Seconds(), "source/mirror")
	fmt.Printf("cold prepare from source on %d cores (empty build cache, modules cached): %6.1f s, then cluster create %.1f s\n",
		runtime.NumCPU(), srcPrep.Seconds(), srcCreate.Seconds())
	fmt.Printf("source build / mirror download: %.0fx\n", srcPrep.Seconds()/mirrorPrep.Seconds())
}

func fileMB(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size() / 1e6
}

// Command nodeimage is the benchmark of `nuv cluster node-image build`. It prints:
//
//   - the cold build: the last assembled build recorded in the cache (~/.cache/nuv/nodeimage/
//     builds.json), with each stage's time; with -cold it first makes one, in a fresh node-image
//     cache (the root file system, CoreDNS and the image itself are made again; the Go build cache
//     and the companion's programs are kept, as on a developer's machine: say -cold-go to rebuild
//     those too, which takes tens of minutes on 2 cores);
//   - the warm build: the median of -runs builds with everything cached (a whole nuv process, as a
//     user runs it), and the ratio cold/warm.
//
// Run from the repository root as root (debootstrap): go run ./bench/nodeimage [-runs 5] [-cold].
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/nuv-dev/nuv/bench/internal/benchutil"
	"github.com/nuv-dev/nuv/internal/cluster/nodeimage"
)

func main() {
	runs := flag.Int("runs", 5, "warm builds to time")
	cold := flag.Bool("cold", false, "make a cold build first (fresh node-image cache)")
	flag.Parse()
	benchutil.Exit("bench/nodeimage", run(*runs, *cold))
}

func run(runs int, cold bool) error {
	ws, err := benchutil.NewWorkspace("nuv-bench-nodeimage-")
	if err != nil {
		return err
	}
	defer ws.Close()
	nuv := ws.Nuv
	if cold {
		cache := filepath.Join(os.Getenv("HOME"), ".cache", "nuv")
		if d := os.Getenv("NUV_CACHE_DIR"); d != "" {
			cache = d
		}
		// a fresh node-image cache; the companion programs stay where they are
		moved := filepath.Join(cache, fmt.Sprintf("nodeimage.bench-%d", time.Now().Unix()))
		if err := os.Rename(filepath.Join(cache, "nodeimage"), moved); err != nil && !os.IsNotExist(err) {
			return err
		}
		fmt.Printf("cold build (node-image cache moved to %s) ...\n", moved)
		start := time.Now()
		cmd := exec.Command(nuv, "cluster", "node-image", "build")
		cmd.Stderr = os.Stderr
		if out, err := cmd.Output(); err != nil {
			return fmt.Errorf("cold build: %v\n%s", err, out)
		}
		fmt.Printf("cold build: %.1f s\n", time.Since(start).Seconds())
		if err := os.RemoveAll(moved); err != nil {
			return err
		}
	}
	rs := nodeimage.Records(os.Getenv)
	if len(rs) == 0 {
		return fmt.Errorf("no assembled build recorded yet: run `nuv cluster node-image build` once, or pass -cold")
	}
	last := rs[len(rs)-1]
	fmt.Printf("last cold (assembled) build: %s, %.1f s on %d cores, %s\n", last.When.Format(time.RFC3339), last.Seconds, last.Cores, last.Ref)
	for _, s := range last.Stages {
		how := ""
		if s.Cached {
			how = " (cached)"
		}
		fmt.Printf("  %-70s %7.1f s%s\n", s.Name, s.Duration.Seconds(), how)
	}
	warm, err := benchutil.Repeat(runs, func() (time.Duration, error) {
		d, _, err := benchutil.Nuv{Bin: nuv}.Run("cluster", "node-image", "build")
		if err != nil {
			err = fmt.Errorf("warm build: %w", err)
		}
		return d, err
	})
	if err != nil {
		return err
	}
	med, lo, hi := benchutil.Stats(warm)
	fmt.Printf("warm build (everything cached), median of %d: %.2f s (min %.2f, max %.2f)\n", runs, med.Seconds(), lo.Seconds(), hi.Seconds())
	fmt.Printf("cold / warm: %.0fx\n", last.Seconds/med.Seconds())
	return nil
}

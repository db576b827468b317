// Command state is the benchmark of nuv's state stores, each on loopback in the same run: the
// directory store (the default, $NUV_HOME/state) and the S3 store (s3://BUCKET/PREFIX) on
// SeaweedFS, started here (hack/state-servers.sh builds it; NUV_WEED names another weed). For
// each store it prints the median of RUNS runs of:
//
//	list     `nuv cluster state list`'s read: List of 50 records (what every list, plan and gc reads)
//	save     one record written and read back (Save then Load: what one step of an apply costs)
//	lock     a cluster's lock taken and released (TryLock then unlock: every apply, delete, extend)
//
// and the S3 server's start time and resident memory.
//
// Run from the repository root: go run ./bench/state [-runs 20]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/servertest"
	"github.com/nuv-dev/nuv/internal/cluster/state/stores"
)

// Records is how many records the list reads.
const Records = 50

func main() {
	runs := flag.Int("runs", 20, "runs of each operation (the median is printed)")
	flag.Parse()
	if err := run(*runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench/state:", err)
		os.Exit(1)
	}
}

type result struct {
	store            string
	list, save, lock time.Duration
}

func run(runs int) error {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "nuv-bench-state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	srv, stop, err := servertest.StartS3()
	if err != nil {
		return err
	}
	defer stop()
	if err := servertest.CreateS3Bucket(ctx, "nuv-bench"); err != nil {
		return err
	}
	locations := []string{"dir:" + filepath.Join(tmp, "state"), "s3://nuv-bench/team"}
	var results []result
	for _, loc := range locations {
		s, err := stores.Open(loc, tmp, "")
		if err != nil {
			return err
		}
		r, err := measure(ctx, s, runs)
		if err != nil {
			return fmt.Errorf("%s: %w", loc, err)
		}
		r.store = strings.SplitN(loc, ":", 2)[0]
		results = append(results, r)
	}
	fmt.Printf("state stores on loopback, median of %d runs (%d records listed)\n\n", runs, Records)
	fmt.Printf("%-8s %12s %12s %12s\n", "store", "list", "save+load", "lock+unlock")
	for _, r := range results {
		fmt.Printf("%-8s %12s %12s %12s\n", r.store, ms(r.list), ms(r.save), ms(r.lock))
	}
	fmt.Printf("\nSeaweedFS %s (weed server -s3): answered in %s, RSS %s\n", servertest.SeaweedFSVersion,
		srv.StartTime.Round(time.Millisecond), rss(srv.PID))
	return nil
}

func measure(ctx context.Context, s state.Store, runs int) (result, error) {
	var r result
	if err := s.Check(ctx); err != nil {
		return r, err
	}
	three := 3
	for i := 0; i < Records; i++ {
		name := fmt.Sprintf("c%02d", i)
		rec := &state.Record{Name: name, Provider: "local", Phase: state.Running,
			Spec: &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: name},
				Spec: spec.Spec{Provider: "local", NodeGroups: []spec.NodeGroup{{Name: "w", Count: &three}}}}}
		rec.Set(cluster.Resource{Kind: "control-plane", Name: name, ID: "/x/" + name})
		if err := s.Save(ctx, rec); err != nil {
			return r, err
		}
	}
	var list, save, lock []time.Duration
	for i := 0; i < runs; i++ {
		t := time.Now()
		recs, errs := s.List(ctx)
		list = append(list, time.Since(t))
		if len(recs) != Records || len(errs) > 0 {
			return r, fmt.Errorf("listed %d records, %v", len(recs), errs)
		}
		t = time.Now()
		rec, err := s.Load(ctx, "c00")
		if err != nil {
			return r, err
		}
		rec.Phase = state.Updating
		if err := s.Save(ctx, rec); err != nil {
			return r, err
		}
		if _, err := s.Load(ctx, "c00"); err != nil {
			return r, err
		}
		save = append(save, time.Since(t))
		t = time.Now()
		unlock, _, err := s.TryLock(ctx, "c01", state.Me("bench"))
		if err != nil {
			return r, err
		}
		if err := unlock(); err != nil {
			return r, err
		}
		lock = append(lock, time.Since(t))
	}
	r.list, r.save, r.lock = median(list), median(save), median(lock)
	return r, nil
}

func median(d []time.Duration) time.Duration {
	sort.Slice(d, func(a, b int) bool { return d[a] < d[b] })
	return d[len(d)/2]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64) + " ms"
}

// rss is a process's resident memory (VmRSS).
func rss(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:"))
		}
	}
	return "?"
}

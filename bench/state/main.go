// Command state is the benchmark of nuv's state stores, each on loopback in the same run: the
// directory store (the default, $NUV_HOME/state) and the shared stores: S3 (s3://BUCKET/PREFIX) on
// SeaweedFS, Google Cloud Storage (gs://) on fake-gcs-server, Azure Blob Storage (azblob://) on
// Azurite and MongoDB (mongodb://) on FerretDB, each started here (hack/state-servers.sh builds or
// installs them; NUV_WEED, NUV_TEST_FAKE_GCS, NUV_TEST_AZURITE and NUV_TEST_FERRETDB name other
// programs). For each store it prints the median of RUNS runs of:
//
//	list     `nuv cluster state list`'s read: List of 50 records (what every list, plan and gc reads)
//	save     one record written and read back (Save then Load: what one step of an apply costs)
//	lock     a cluster's lock taken and released (TryLock then unlock: every apply, delete, extend)
//	apply    `nuv cluster apply` of a spec with no change: the lifecycle engine's own path (lock,
//	         load, plan, nothing to do, unlock) over the store, with a provider whose cluster is a
//	         value in memory, so the figure is the store's and the engine's, not a cloud's
//
// and each server's start time and resident memory.
//
// Run from the repository root: go run ./bench/state [-runs 20] [-stores dir,s3,gs,azblob,mongodb]
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
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/mongobucket"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/servertest"
	"github.com/nuv-dev/nuv/internal/cluster/state/stores"
	"github.com/nuv-dev/nuv/internal/testservers"
)

// Records is how many records the list reads.
const Records = 50

// allStores are the stores measured, in the order printed.
const allStores = "dir,s3,gs,azblob,mongodb"

func main() {
	runs := flag.Int("runs", 20, "runs of each operation (the median is printed)")
	which := flag.String("stores", allStores, "the stores measured, comma-separated")
	flag.Parse()
	if err := run(*runs, strings.Split(*which, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "bench/state:", err)
		os.Exit(1)
	}
}

type result struct {
	store            string
	list, save, lock time.Duration
	apply            time.Duration
	server           string // the server's name, start time and memory; "" for the directory
}

// backend starts the server of a store, makes its bucket (container, database) and returns the
// location naming it, the server's line for the report, and how to stop it.
type backend func(ctx context.Context, tmp string) (location, server string, stop func(), err error)

var backends = map[string]backend{
	"dir": func(_ context.Context, tmp string) (string, string, func(), error) {
		return "dir:" + filepath.Join(tmp, "state"), "", func() {}, nil
	},
	"s3": func(ctx context.Context, _ string) (string, string, func(), error) {
		srv, stop, err := servertest.StartS3()
		if err != nil {
			return "", "", nil, err
		}
		if err := servertest.CreateS3Bucket(ctx, "nuv-bench"); err != nil {
			stop()
			return "", "", nil, err
		}
		return "s3://nuv-bench/team", serverLine("SeaweedFS "+servertest.SeaweedFSVersion, srv.StartTime, testservers.ProcessRSS(srv.PID)), stop, nil
	},
	"gs": func(ctx context.Context, _ string) (string, string, func(), error) {
		srv, env, err := testservers.StartFakeGCS()
		if err != nil {
			return "", "", nil, err
		}
		if err := env.Set(); err != nil {
			srv.Stop()
			return "", "", nil, err
		}
		if err := testservers.CreateGCSBucket(ctx, "nuv-bench"); err != nil {
			srv.Stop()
			return "", "", nil, err
		}
		return "gs://nuv-bench/team", serverLine("fake-gcs-server "+testservers.FakeGCSVersion, srv.Startup, srv.RSS()), srv.Stop, nil
	},
	"azblob": func(ctx context.Context, _ string) (string, string, func(), error) {
		srv, env, err := testservers.StartAzurite(testservers.NewAzuriteKey())
		if err != nil {
			return "", "", nil, err
		}
		if err := env.Set(); err != nil {
			srv.Stop()
			return "", "", nil, err
		}
		if err := testservers.CreateAzureContainer(ctx, env.Get("AZURE_STORAGE_CONNECTION_STRING"), "nuv-bench"); err != nil {
			srv.Stop()
			return "", "", nil, err
		}
		return "azblob://nuv-bench/team", serverLine("Azurite "+testservers.AzuriteVersion, srv.Startup, srv.RSS()), srv.Stop, nil
	},
	"mongodb": func(ctx context.Context, _ string) (string, string, func(), error) {
		srv, uri, err := testservers.StartFerretDB()
		if err != nil {
			return "", "", nil, err
		}
		if err := testservers.CreateMongoCollection(ctx, uri+"nuvbench", mongobucket.Collection); err != nil {
			srv.Stop()
			return "", "", nil, err
		}
		return uri + "nuvbench", serverLine("FerretDB "+testservers.FerretDBVersion+" (SQLite)", srv.Startup, srv.RSS()), srv.Stop, nil
	},
}

func run(runs int, which []string) error {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "nuv-bench-state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var results []result
	for _, name := range which {
		start, ok := backends[name]
		if !ok {
			return fmt.Errorf("unknown store %q (valid: %s)", name, allStores)
		}
		r, err := measureStore(ctx, name, start, tmp, runs)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		results = append(results, r)
	}
	fmt.Printf("state stores on loopback, median of %d runs (%d records listed)\n\n", runs, Records)
	fmt.Printf("%-8s %12s %12s %12s %12s\n", "store", "list", "save+load", "lock+unlock", "apply")
	for _, r := range results {
		fmt.Printf("%-8s %12s %12s %12s %12s\n", r.store, ms(r.list), ms(r.save), ms(r.lock), ms(r.apply))
	}
	fmt.Println()
	for _, r := range results {
		if r.server != "" {
			fmt.Printf("%-8s %s\n", r.store, r.server)
		}
	}
	return nil
}

// measureStore starts a store's server, measures the store and stops the server (one server runs
// at a time, so none takes CPU from another's figures).
func measureStore(ctx context.Context, name string, start backend, tmp string, runs int) (result, error) {
	loc, server, stop, err := start(ctx, tmp)
	if err != nil {
		return result{}, err
	}
	defer stop()
	s, err := stores.Open(loc, tmp, "")
	if err != nil {
		return result{}, err
	}
	r, err := measure(ctx, s, runs)
	if err != nil {
		return r, err
	}
	if r.apply, err = measureApply(ctx, s, runs); err != nil {
		return r, fmt.Errorf("apply: %w", err)
	}
	r.store, r.server = name, server
	return r, nil
}

// measureApply creates one cluster of the memory provider through the engine, then times applies
// of the same spec, which change nothing (each must plan no change).
func measureApply(ctx context.Context, s state.Store, runs int) (time.Duration, error) {
	p := &memProvider{made: map[string]cluster.Resource{}}
	e := &engine.Engine{Providers: map[string]cluster.Provider{p.Name(): p}, Store: s, Command: "bench/state"}
	c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "applied"},
		Spec: spec.Spec{Provider: p.Name()}}
	if _, err := e.Apply(ctx, c, engine.ApplyOptions{}); err != nil {
		return 0, fmt.Errorf("creating: %w", err)
	}
	var d []time.Duration
	for i := 0; i < runs; i++ {
		t := time.Now()
		plan, err := e.Apply(ctx, c, engine.ApplyOptions{})
		d = append(d, time.Since(t))
		if err != nil {
			return 0, err
		}
		if !plan.Empty() {
			return 0, fmt.Errorf("an apply with no change planned %d change(s)", len(plan.Changes))
		}
	}
	return median(d), nil
}

// memProvider is the benchmark's provider: a cluster is one resource kept in memory, so an apply
// costs what the engine and the store cost.
type memProvider struct {
	mu   sync.Mutex
	made map[string]cluster.Resource
}

func (*memProvider) Name() string                             { return "bench" }
func (*memProvider) Validate(*spec.Cluster) []spec.FieldError { return nil }

func (*memProvider) Desired(c *spec.Cluster) ([]cluster.Resource, error) {
	return []cluster.Resource{{Kind: "cluster", Name: c.Metadata.Name, Fields: map[string]string{"size": "1"}}}, nil
}

func (p *memProvider) Observe(_ context.Context, c *spec.Cluster, _ []cluster.Resource) ([]cluster.Resource, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.made[c.Metadata.Name]; ok {
		return []cluster.Resource{r}, nil
	}
	return nil, nil
}

func (p *memProvider) Execute(_ context.Context, c *spec.Cluster, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	if ch.Action != cluster.Create {
		return nil, fmt.Errorf("the benchmark's provider only creates (asked to %s %s)", ch.Action, ch.Key)
	}
	r := *ch.Desired
	r.ID = "mem/" + c.Metadata.Name
	if err := save(r); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.made[c.Metadata.Name] = r
	p.mu.Unlock()
	return &r, nil
}

func (p *memProvider) List(context.Context) ([]cluster.Info, error) { return nil, nil }

func (p *memProvider) Status(_ context.Context, c *spec.Cluster) (cluster.Info, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.made[c.Metadata.Name]; !ok {
		return cluster.Info{}, cluster.ErrNotFound
	}
	return cluster.Info{Name: c.Metadata.Name, Provider: p.Name(), Status: cluster.Running}, nil
}

// serverLine is a server's line of the report: its start time and resident memory (KiB).
func serverLine(name string, startup time.Duration, rssKiB int) string {
	return fmt.Sprintf("%s: answered in %s, RSS %.0f MiB", name, startup.Round(time.Millisecond), float64(rssKiB)/1024)
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

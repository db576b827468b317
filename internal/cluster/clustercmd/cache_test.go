package clustercmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/clustercache"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// depot is a cloud nuv cannot run here, as a stateful fake: its clusters are the files of a
// directory, and it counts how often it is asked.
type depot struct {
	dir          string
	lists, stats atomic.Int32
}

func (d *depot) Name() string                                      { return "depot" }
func (d *depot) Validate(*spec.Cluster) []spec.FieldError          { return nil }
func (d *depot) Desired(*spec.Cluster) ([]cluster.Resource, error) { return nil, nil }
func (d *depot) Observe(context.Context, *spec.Cluster, []cluster.Resource) ([]cluster.Resource, error) {
	return nil, nil
}
func (d *depot) Execute(context.Context, *spec.Cluster, cluster.Change, func(cluster.Resource) error) (*cluster.Resource, error) {
	return nil, cluster.ErrUnsupported
}

func (d *depot) List(ctx context.Context) ([]cluster.Info, error) {
	d.lists.Add(1)
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, err
	}
	var out []cluster.Info
	for _, e := range entries {
		out = append(out, d.info(e.Name()))
	}
	return out, nil
}

func (d *depot) Status(_ context.Context, c *spec.Cluster) (cluster.Info, error) {
	d.stats.Add(1)
	if _, err := os.Stat(filepath.Join(d.dir, c.Metadata.Name)); err != nil {
		return cluster.Info{}, fmt.Errorf("%q: %w", c.Metadata.Name, cluster.ErrNotFound)
	}
	return d.info(c.Metadata.Name), nil
}

func (d *depot) info(name string) cluster.Info {
	return cluster.Info{Name: name, Provider: "depot", Status: cluster.Running, APIURL: "https://" + name + ".depot.example", Nodes: 1, NodesReady: 1}
}

// depotCtx is a command context whose only provider is the depot, a cloud (its answers cached).
func depotCtx(t *testing.T, vars map[string]string) (*cmdCtx, *depot, *bytes.Buffer) {
	t.Helper()
	env, _, _ := testEnv(t, vars)
	var warnings bytes.Buffer
	env.Log = cli.NewLogger(&warnings, 0)
	d := &depot{dir: t.TempDir()}
	reg := &cluster.Registry{}
	if err := reg.Register(cluster.Registration{Name: "depot", Short: "a fake cloud", Cloud: true,
		New: func(cluster.Host) (cluster.Provider, error) { return d, nil }}); err != nil {
		t.Fatal(err)
	}
	c := &cmdCtx{env: env, registry: reg, providers: map[string]cluster.Provider{"depot": d}, overrides: map[string]string{}}
	get := env.Getenv
	env.Getenv = func(k string) string { // as newCmdCtx: the overrides first
		if v, ok := c.overrides[k]; ok {
			return v
		}
		return get(k)
	}
	return c, d, &warnings
}

func names(infos []cluster.Info) string {
	var s []string
	for _, i := range infos {
		s = append(s, i.Name)
		if !i.CachedAt.IsZero() {
			s[len(s)-1] += "(cached)"
		}
	}
	return strings.Join(s, ",")
}

// TestListCachesCloudAnswers walks the cache through list and status: a cloud is asked once, its
// answer then shown as cached (and not what changed behind nuv's back) until --refresh, a verb that
// changes clusters, another environment or the time to live says to ask again.
func TestListCachesCloudAnswers(t *testing.T) {
	ctx := context.Background()
	c, d, warnings := depotCtx(t, nil)
	mk := func(name string) {
		if err := os.WriteFile(filepath.Join(d.dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("one")
	mk("two")
	type step struct {
		name      string
		before    func()
		want      string
		wantLists int32
	}
	for _, s := range []step{
		{"first list asks", nil, "one,two", 1},
		{"second list is cached", nil, "one(cached),two(cached)", 1},
		{"a change behind nuv's back is not seen while fresh", func() { mk("three") }, "one(cached),two(cached)", 1},
		{"--refresh asks", func() { c.refresh = true }, "one,three,two", 2},
		{"and caches what it got", func() { c.refresh = false }, "one(cached),three(cached),two(cached)", 2},
		{"a verb that changed clusters drops the cache", func() { os.Remove(filepath.Join(d.dir, "one")); c.invalidateCache() }, "three,two", 3},
		{"another project is another key", func() { c.overrides["NUV_PROJECT"] = t.TempDir() }, "three,two", 4},
		{"a time to live of 0 turns the cache off", func() { c.overrides[clustercache.EnvTTL] = "0" }, "three,two", 5},
		{"nor is it read", nil, "three,two", 6},
	} {
		if s.before != nil {
			s.before()
		}
		infos, err := c.listAll(ctx)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := names(infos); got != s.want || d.lists.Load() != s.wantLists {
			t.Fatalf("%s: list = %s after %d asks, want %s after %d", s.name, got, d.lists.Load(), s.want, s.wantLists)
		}
	}
	if warnings.Len() > 0 {
		t.Errorf("warnings: %s", warnings.String())
	}
}

// TestStatusFromCache: status of a cloud cluster the fresh cache holds does not ask the cloud
// (and says it is cached); one it does not hold, or --refresh, asks; an unknown name is not found.
func TestStatusFromCache(t *testing.T) {
	ctx := context.Background()
	c, d, _ := depotCtx(t, nil)
	for _, n := range []string{"one", "two"} {
		if err := os.WriteFile(filepath.Join(d.dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.listAll(ctx); err != nil {
		t.Fatal(err)
	}
	_, info, err := c.find(ctx, "one")
	if err != nil || info.CachedAt.IsZero() || d.stats.Load() != 0 {
		t.Fatalf("status one from a fresh cache: %+v, %v, %d asks", info, err, d.stats.Load())
	}
	var out bytes.Buffer
	if err := writeStatusAs(&out, &cli.OutputOption{Format: cli.FormatTable}, info, info.CachedAt.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "running (3m ago)") {
		t.Errorf("status table does not show the answer's age:\n%s", out.String())
	}
	if err := os.WriteFile(filepath.Join(d.dir, "late"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, info, err = c.find(ctx, "late"); err != nil || !info.CachedAt.IsZero() || d.stats.Load() != 1 {
		t.Fatalf("status of a cluster the cache does not hold: %+v, %v, %d asks", info, err, d.stats.Load())
	}
	c.refresh = true
	if _, info, err = c.find(ctx, "one"); err != nil || !info.CachedAt.IsZero() || d.stats.Load() != 2 {
		t.Fatalf("status --refresh: %+v, %v, %d asks", info, err, d.stats.Load())
	}
	if _, _, err = c.find(ctx, "nope"); !errors.Is(err, cluster.ErrNotFound) || !strings.Contains(err.Error(), "known: late, one, two") {
		t.Fatalf("status of an unknown cluster: %v", err)
	}
}

// TestCorruptCacheAsksWithWarning: a cache file that does not decode is ignored with a warning
// naming it, the cloud is asked, and the file is rewritten.
func TestCorruptCacheAsksWithWarning(t *testing.T) {
	ctx := context.Background()
	c, d, warnings := depotCtx(t, nil)
	if err := os.WriteFile(filepath.Join(d.dir, "one"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := c.cache()
	if err := os.MkdirAll(cache.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(cache.Dir, "depot.json")
	if err := os.WriteFile(file, []byte(`{"key": "`), 0o600); err != nil {
		t.Fatal(err)
	}
	infos, err := c.listAll(ctx)
	if err != nil || names(infos) != "one" || d.lists.Load() != 1 {
		t.Fatalf("list over a corrupt cache: %s, %v, %d asks", names(infos), err, d.lists.Load())
	}
	if w := warnings.String(); !strings.Contains(w, "warning: ignoring the cached depot clusters in "+file) {
		t.Errorf("warning = %q, want one naming %s", w, file)
	}
	if infos, _ = c.listAll(ctx); names(infos) != "one(cached)" {
		t.Errorf("after the rewrite: %s, want one(cached)", names(infos))
	}
}

// TestVerbsThatChangeClustersDropTheCache: through `nuv cluster VERB` itself, a verb that may
// change clusters drops the cached cloud answers; list and status keep them.
func TestVerbsThatChangeClustersDropTheCache(t *testing.T) {
	for _, tc := range []struct {
		args []string
		kept bool
	}{
		{[]string{"list"}, true},
		{[]string{"status", "nope"}, true},
		{[]string{"delete", "nope"}, false},
		{[]string{"state", "list"}, false},
		{[]string{"stop", "nope"}, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			env, _, _ := testEnv(t, map[string]string{"AWS_PROFILE": "", "AWS_ACCESS_KEY_ID": "", "AWS_ENDPOINT_URL": "", "AZURE_SUBSCRIPTION_ID": "",
				"GOOGLE_APPLICATION_CREDENTIALS": "", "CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER": ""})
			dir := clustercache.Dir(env.Getenv("NUV_HOME"))
			cache := clustercache.Cache{Dir: dir, TTL: time.Hour}
			if err := cache.Save("eks", "k", nil); err != nil {
				t.Fatal(err)
			}
			_ = Run(context.Background(), env, tc.args) // the verb's own outcome is not the point
			_, err := os.Stat(filepath.Join(dir, "eks.json"))
			if kept := err == nil; kept != tc.kept {
				t.Errorf("cache kept = %v, want %v", kept, tc.kept)
			}
		})
	}
}

package clustercmd

import (
	"context"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/state"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/clustercache"
	"github.com/nuv-dev/nuv/internal/cluster/clusterview"
	"github.com/nuv-dev/nuv/internal/paths"
)

func runList(ctx context.Context, c *cmdCtx, args []string) error {
	env := c.env
	fs := flags(env, "list")
	var output cli.OutputOption
	output.AddFlags(fs.FlagSet)
	refresh := refreshFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("nuv cluster list: unexpected arguments %q", fs.Args())
	}
	_ = output.Validate(fs.usage)
	c.refresh = *refresh
	infos, err := c.listAll(ctx)
	if err != nil {
		return fmt.Errorf("list clusters: %w", err)
	}
	if !output.Machine() && len(infos) == 0 {
		fmt.Fprintln(env.Out, "no clusters; create one with `nuv cluster create local`")
		return nil
	}
	return writeList(env.Out, &output, infos, time.Now())
}

// writeList prints clusters in the format of o: the table (wide: with flavor, version, HA and
// kubeconfig columns), or the machine form (jsonInfo: stable field names, a list).
func writeList(w io.Writer, o *cli.OutputOption, infos []cluster.Info, now time.Time) error {
	if done, err := o.Write(w, machineInfos(infos)); done {
		return err
	}
	writeTableOf(w, infos, now, o.Wide())
	return nil
}

// writeTable prints clusters as a table; now makes AGE deterministic in tests.
func writeTable(w io.Writer, infos []cluster.Info, now time.Time) { writeTableOf(w, infos, now, false) }

// writeTableOf is writeTable, with the wide columns (flavor, version, HA, kubeconfig) when wide:
// clusterview's table, which the slim front prints too.
func writeTableOf(w io.Writer, infos []cluster.Info, now time.Time, wide bool) {
	clusterview.Table(w, infos, now, wide)
}

func orDash(s string) string { return clusterview.Dash(s) }

func humanAge(d time.Duration) string { return clusterview.HumanAge(d) }

// machineInfos are clusters in their machine form (-o json|yaml): clusterview's stable field names.
func machineInfos(infos []cluster.Info) []clusterview.Machine { return clusterview.Machines(infos) }

func machineInfo(i cluster.Info) clusterview.Machine { return clusterview.MachineOf(i) }

func runStatus(ctx context.Context, c *cmdCtx, args []string) error {
	env := c.env
	fs := flags(env, "status")
	var output cli.OutputOption
	output.AddFlags(fs.FlagSet)
	refresh := refreshFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	c.refresh = *refresh
	if fs.NArg() != 1 {
		return cli.Usagef("nuv cluster status: name one cluster")
	}
	_ = output.Validate(fs.usage)
	_, info, err := c.find(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	c.addPhases(ctx, []*cluster.Info{&info})
	if err := writeStatusAs(env.Out, &output, info, time.Now()); err != nil {
		return err
	}
	if info.Status != cluster.Running {
		return cli.Exit(exitNotRunning, nil)
	}
	return nil
}

// writeStatusAs prints one cluster in the format of o: the table with its binaries, durability and
// components (wide: with the wide list columns), or its machine form (one jsonInfo).
func writeStatusAs(w io.Writer, o *cli.OutputOption, i cluster.Info, now time.Time) error {
	if done, err := o.Write(w, machineInfo(i)); done {
		return err
	}
	writeStatusOf(w, i, now, o.Wide())
	return nil
}

func writeStatus(w io.Writer, i cluster.Info) { writeStatusOf(w, i, time.Now(), false) }

func writeStatusOf(w io.Writer, i cluster.Info, now time.Time, wide bool) {
	clusterview.Status(w, i, now, wide)
}

// refreshFlag adds --refresh: ask every cloud now instead of showing its cached answer.
func refreshFlag(fs flagSet) *bool {
	return fs.Bool("refresh", false, fmt.Sprintf("ask the clouds now instead of showing answers nuv cached less than $%s (default %s) ago", clustercache.EnvTTL, clustercache.DefaultTTL))
}

// cache is the cache of cloud answers of the command's NUV_HOME (nil when the home or the time to
// live cannot be read: then every cloud is asked).
func (c *cmdCtx) cache() *clustercache.Cache {
	home, err := paths.Home(c.env.Getenv)
	if err != nil {
		return nil
	}
	ttl, err := clustercache.TTLOf(c.env.Getenv)
	if err != nil {
		c.env.Log.Warnf("%v; asking the clouds", err)
		return nil
	}
	return &clustercache.Cache{Dir: clustercache.Dir(home), TTL: ttl, Warn: c.env.Log.Warnf}
}

// cached reports whether provider n's answers are cached (a cloud's, which cost a round trip to
// its API and a credential to ask; local and kind answer from this machine).
func (c *cmdCtx) cached(n string) bool {
	reg, ok := c.registry.Get(n)
	return ok && reg.Cloud
}

// list is provider n's List: for a cloud, its cached answer while fresh (unless --refresh), else
// asked now and cached.
func (c *cmdCtx) list(ctx context.Context, n string) ([]cluster.Info, error) {
	if !c.cached(n) {
		return c.providers[n].List(ctx)
	}
	cache, key := c.cache(), clustercache.Key(n, paths.Project(c.env.Getenv, c.env.Dir), c.env.Getenv)
	if cache != nil && !c.refresh {
		if infos, ok := cache.Load(n, key); ok {
			return infos, nil
		}
	}
	infos, err := c.providers[n].List(ctx)
	if err == nil && cache != nil {
		if err := cache.Save(n, key, infos); err != nil {
			c.env.Log.Warnf("%v", err)
		}
	}
	return infos, err
}

// listAll lists every provider's clusters (in parallel: a cloud may be slow) plus the clusters
// the state store records that no provider sees any more (a failed create, an interrupted delete).
func (c *cmdCtx) listAll(ctx context.Context) ([]cluster.Info, error) {
	names := c.registry.Names()
	results := make([][]cluster.Info, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = c.list(ctx, n)
		}()
	}
	wg.Wait()
	var all []cluster.Info
	seen := map[string]bool{}
	for i := range names {
		if errs[i] != nil {
			all = append(all, cluster.Info{Name: "?", Provider: names[i], Status: cluster.Corrupt, NodesReady: -1, Err: errs[i]})
			continue
		}
		for _, info := range results[i] {
			seen[info.Name] = true
			all = append(all, info)
		}
	}
	ptrs := make([]*cluster.Info, len(all))
	for i := range all {
		ptrs[i] = &all[i]
	}
	recs := c.addPhases(ctx, ptrs)
	for _, r := range recs {
		if !seen[r.Name] {
			all = append(all, cluster.Info{Name: r.Name, Provider: r.Provider, Status: "absent", Phase: string(r.Phase), NodesReady: -1, Created: r.Created, ExpiresAt: r.ExpiresAt, CreatedBy: r.CreatedBy})
		}
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].Name < all[b].Name })
	return all, nil
}

// addPhases sets each cluster's lifecycle phase from the default state store and returns the
// records it read.
func (c *cmdCtx) addPhases(ctx context.Context, infos []*cluster.Info) []*state.Record {
	e, err := c.engineFor(c.env.Getenv("NUV_STATE"), "nuv cluster list")
	if err != nil {
		return nil
	}
	recs, _ := e.Store.List(ctx)
	byName := map[string]*state.Record{}
	for _, r := range recs {
		byName[r.Name] = r
	}
	for _, i := range infos {
		if r, ok := byName[i.Name]; ok && r.Provider == i.Provider {
			i.Phase, i.ExpiresAt, i.CreatedBy = string(r.Phase), r.ExpiresAt, r.CreatedBy
			if i.Created.IsZero() {
				i.Created = r.Created
			}
		}
	}
	return recs
}

// exitNotRunning is `nuv cluster status`'s code for a cluster that exists but is not running.
const exitNotRunning = 3

package clustercmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/nuv-dev/nuv/internal/cluster/state"
	"text/tabwriter"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/clustercache"
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

// writeTableOf is writeTable, with the wide columns (flavor, version, HA, kubeconfig) when wide.
func writeTableOf(w io.Writer, infos []cluster.Info, now time.Time, wide bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// EXPIRES appears when some cluster has a time to live (spec.ttl), as kubectl adds columns
	// that only some objects fill; "-" for the others.
	expires := slices.ContainsFunc(infos, func(i cluster.Info) bool { return i.ExpiresAt != nil })
	head := "NAME\tPROVIDER\tSTATUS\tAPI\tNODES\tAGE"
	if expires {
		head += "\tEXPIRES"
	}
	if wide {
		head += "\tFLAVOR\tVERSION\tHA\tKUBECONFIG"
	}
	fmt.Fprintln(tw, head)
	for _, i := range infos {
		api, nodes, age := i.APIURL, "-", "-"
		if api == "" {
			api = "-"
		}
		if i.NodesReady >= 0 {
			nodes = fmt.Sprintf("%d/%d", i.NodesReady, i.Nodes)
		} else if i.Nodes > 0 {
			nodes = "?/" + strconv.Itoa(i.Nodes)
		}
		if !i.Created.IsZero() {
			age = humanAge(now.Sub(i.Created))
		}
		status := string(i.Status)
		if i.Status == cluster.Degraded {
			var down []string
			for _, c := range i.Components {
				if !c.Running {
					down = append(down, c.Name)
				}
			}
			if len(down) > 0 {
				status += " (down: " + strings.Join(down, ",") + ")"
			}
		}
		if i.Phase != "" && i.Phase != "running" {
			status += " [" + i.Phase + "]"
		}
		if !i.CachedAt.IsZero() {
			status += " (" + clustercache.Age(i.CachedAt, now) + ")"
		}
		if i.Err != nil {
			status += ": " + i.Err.Error()
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", i.Name, i.Provider, status, api, nodes, age)
		if expires {
			row += "\t" + expiresIn(i.ExpiresAt, now)
		}
		if wide {
			row += fmt.Sprintf("\t%s\t%s\t%t\t%s", orDash(i.Flavor), orDash(i.Version), i.HA, orDash(i.Kubeconfig))
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
}

// expiresIn is "in 3h", "expired 20m ago" or "-" (no time to live).
func expiresIn(at *time.Time, now time.Time) string {
	switch {
	case at == nil:
		return "-"
	case at.After(now):
		return "in " + humanAge(at.Sub(now))
	}
	return "expired " + humanAge(now.Sub(*at)) + " ago"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func humanAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

type jsonInfo struct {
	Name       string              `json:"name"`
	Provider   string              `json:"provider"`
	Status     string              `json:"status"`
	Phase      string              `json:"phase,omitempty"`
	Error      string              `json:"error,omitempty"`
	API        string              `json:"api,omitempty"`
	Kubeconfig string              `json:"kubeconfig,omitempty"`
	Flavor     string              `json:"flavor,omitempty"`
	Version    string              `json:"version,omitempty"`
	HA         bool                `json:"ha,omitempty"`
	Nodes      int                 `json:"nodes"`
	NodesReady int                 `json:"nodesReady"`
	Created    *time.Time          `json:"created,omitempty"`
	ExpiresAt  *time.Time          `json:"expiresAt,omitempty"`
	Binaries   string              `json:"binaries,omitempty"`
	Durability string              `json:"durability,omitempty"`
	Components []cluster.Component `json:"components,omitempty"`
	// CachedAt is when the cloud gave this answer, for one from nuv's cache (absent: asked now).
	CachedAt *time.Time `json:"cachedAt,omitempty"`
}

// machineInfos are clusters in their machine form (-o json|yaml): jsonInfo's stable field names.
func machineInfos(infos []cluster.Info) []jsonInfo {
	out := make([]jsonInfo, 0, len(infos))
	for _, i := range infos {
		out = append(out, machineInfo(i))
	}
	return out
}

func machineInfo(i cluster.Info) jsonInfo {
	j := jsonInfo{Name: i.Name, Provider: i.Provider, Status: string(i.Status), Phase: i.Phase, ExpiresAt: i.ExpiresAt, API: i.APIURL, Kubeconfig: i.Kubeconfig,
		Flavor: i.Flavor, Version: i.Version, HA: i.HA, Nodes: i.Nodes, NodesReady: i.NodesReady, Binaries: i.Binaries, Durability: i.Durability, Components: i.Components}
	if i.Err != nil {
		j.Error = i.Err.Error()
	}
	if !i.Created.IsZero() {
		c := i.Created
		j.Created = &c
	}
	if !i.CachedAt.IsZero() {
		c := i.CachedAt.UTC()
		j.CachedAt = &c
	}
	return j
}

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
	writeTableOf(w, []cluster.Info{i}, now, wide)
	if i.Binaries != "" {
		fmt.Fprintf(w, "\nbinaries: %s\n", i.Binaries)
	}
	if i.Durability != "" {
		fmt.Fprintf(w, "durability: %s\n", i.Durability)
	}
	if len(i.Components) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tSTATE\tPID\tPORT")
	for _, c := range i.Components {
		st := "down"
		if c.Running {
			st = "running"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", c.Name, st, c.PID, c.Port)
	}
	tw.Flush()
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
			all = append(all, cluster.Info{Name: r.Name, Provider: r.Provider, Status: "absent", Phase: string(r.Phase), NodesReady: -1, Created: r.Created, ExpiresAt: r.ExpiresAt})
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
			i.Phase, i.ExpiresAt = string(r.Phase), r.ExpiresAt
		}
	}
	return recs
}

// exitNotRunning is `nuv cluster status`'s code for a cluster that exists but is not running.
const exitNotRunning = 3

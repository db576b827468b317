package front

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/clustercache"
	"github.com/nuv-dev/nuv/internal/cluster/clusterview"
	"github.com/nuv-dev/nuv/internal/cluster/quickread"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/spf13/pflag"
)

// `nuv cluster list` and `nuv cluster status NAME` are answered here, in the front's own process,
// when every answer is on this machine: the directory state store, the local clusters (record, pid
// files, a REST count of Ready nodes), no kind cluster marked as nuv's, and each cloud's answer
// fresh in nuv's cache ($NUV_HOME/cache/clusters). Anything else is a miss, and the command goes
// to the full program as before: a state store that is not a directory, a cache that is stale,
// missing or unreadable, a kind cluster, a local record in an older form, a cluster only a provider
// can find, --refresh, -h, --json or any flag or argument beyond -o. The output is the full
// program's, byte for byte (the same renderer, package clusterview; TestClusterVerbsSameAsFull).

// providers are nuv's cluster providers in name order, and whether each is a cloud whose answers
// are cached (the registry of package providers; TestProvidersAsRegistry holds this to it).
var providers = []struct {
	name  string
	cloud bool
}{{"aks", true}, {"aws", true}, {"eks", true}, {"gke", true}, {"kind", false}, {"local", false}}

// exitNotRunning is `nuv cluster status`'s code for a cluster that exists but is not running.
const exitNotRunning = 3

// clusterQuery is what the cluster verbs read, in one command's environment.
type clusterQuery struct {
	getenv  func(string) string
	home    string
	project string
	store   string // the directory state store
	cache   *clustercache.Cache
}

// newClusterQuery checks the environment for what the full program would do otherwise (a state
// store that is not a directory, settings it would refuse or warn about, no NUV_HOME yet, the
// cache off) and returns nil then.
func newClusterQuery(env *cli.Env) *clusterQuery {
	getenv := env.Getenv
	home, err := paths.Home(getenv)
	if err != nil {
		return nil
	}
	if st, err := os.Stat(home); err != nil || !st.IsDir() {
		return nil // the full program makes it
	}
	store, ok := quickread.StoreDir(getenv("NUV_STATE"), home)
	if !ok {
		return nil
	}
	if v := getenv("NUV_LOCK_WAIT"); v != "" {
		if _, err := time.ParseDuration(v); err != nil {
			return nil
		}
	}
	if v := getenv("NUV_REGISTRY_PORT"); v != "" {
		if p, err := strconv.Atoi(v); err != nil || p < 0 || p > 65535 {
			return nil
		}
	}
	for _, k := range []string{"NUV_FAILPOINT_KILL_AFTER_STEP", "NUV_FAILPOINT_KILL_BEFORE_RECORD"} {
		if getenv(k) != "" {
			return nil
		}
	}
	ttl, err := clustercache.TTLOf(getenv)
	if err != nil || ttl <= 0 {
		return nil
	}
	return &clusterQuery{getenv: getenv, home: home, project: paths.Project(getenv, env.Dir), store: store,
		cache: &clustercache.Cache{Dir: clustercache.Dir(home), TTL: ttl}}
}

// cached is cloud provider n's fresh cached answer; ok false on any miss (one the full program
// would warn about included).
func (q *clusterQuery) cached(n string) (infos []cluster.Info, ok bool) {
	warned := false
	c := *q.cache
	c.Warn = func(string, ...any) { warned = true }
	infos, ok = c.Load(n, clustercache.Key(n, q.project, q.getenv))
	return infos, ok && !warned
}

// list is every provider's clusters plus the records no provider sees, as `nuv cluster list`
// shows them; ok false on a miss (found before any local cluster is probed).
func (q *clusterQuery) list(ctx context.Context) (all []cluster.Info, ok bool) {
	if quickread.KindMarked(q.home) {
		return nil, false
	}
	clouds := map[string][]cluster.Info{}
	for _, p := range providers {
		if p.cloud {
			infos, ok := q.cached(p.name)
			if !ok {
				return nil, false
			}
			clouds[p.name] = infos
		}
	}
	names, err := quickread.LocalNames(q.home)
	if err != nil {
		return nil, false
	}
	local := make([]cluster.Info, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() { // each probe bounded by quickread.ProbeTimeout
			defer wg.Done()
			local[i], _, errs[i] = quickread.Local(ctx, q.home, n)
		}()
	}
	wg.Wait()
	if errors.Join(errs...) != nil {
		return nil, false
	}
	seen := map[string]bool{}
	for _, p := range providers { // in name order, as the full program lists them
		infos := clouds[p.name]
		if p.name == "local" {
			infos = local
		}
		for _, i := range infos {
			seen[i.Name] = true
			all = append(all, i)
		}
	}
	for _, r := range q.addPhases(all) {
		if !seen[r.Name] {
			all = append(all, cluster.Info{Name: r.Name, Provider: r.Provider, Status: "absent", Phase: r.Phase, NodesReady: -1, Created: r.Created, ExpiresAt: r.ExpiresAt, CreatedBy: r.CreatedBy})
		}
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].Name < all[b].Name })
	return all, true
}

// addPhases sets each cluster's lifecycle phase, expiry and creator from its record (and its
// creation time where the provider gave none, as the full program does) and returns the
// records.
func (q *clusterQuery) addPhases(infos []cluster.Info) []*quickread.Record {
	recs := quickread.Records(q.store)
	byName := map[string]*quickread.Record{}
	for _, r := range recs {
		byName[r.Name] = r
	}
	for i := range infos {
		if r, ok := byName[infos[i].Name]; ok && r.Provider == infos[i].Provider {
			infos[i].Phase, infos[i].ExpiresAt, infos[i].CreatedBy = r.Phase, r.ExpiresAt, r.CreatedBy
			if infos[i].Created.IsZero() {
				infos[i].Created = r.Created
			}
		}
	}
	return recs
}

// status is cluster name as `nuv cluster status` finds it: through the provider its record names
// (a local cluster, or a cloud's fresh cached answer); ok false on a miss, among them every
// cluster without a record (the full program then asks every provider).
func (q *clusterQuery) status(ctx context.Context, name string) (info cluster.Info, ok bool) {
	rec := quickread.LoadRecord(q.store, name)
	if rec == nil {
		return cluster.Info{}, false
	}
	ref := name
	if rec.Spec != nil {
		ref = rec.Spec.Metadata.Name
	}
	switch rec.Provider {
	case "local":
		info, found, err := quickread.Local(ctx, q.home, ref)
		if !found || err != nil {
			return cluster.Info{}, false
		}
		return q.withPhase(info), true
	case "kind":
		return cluster.Info{}, false
	}
	for _, p := range providers {
		if p.name != rec.Provider || !p.cloud {
			continue
		}
		infos, ok := q.cached(p.name)
		if !ok {
			return cluster.Info{}, false
		}
		for _, i := range infos {
			if i.Name == ref {
				return q.withPhase(i), true
			}
		}
	}
	return cluster.Info{}, false
}

// withPhase is info with the phase and expiry of its record.
func (q *clusterQuery) withPhase(info cluster.Info) cluster.Info {
	one := []cluster.Info{info}
	q.addPhases(one)
	return one[0]
}

// answer is what the front prints for a command it answers, and the command's error (nil, or
// exit 3 for a cluster that is not running).
type answer struct {
	out []byte
	err error
}

// answerCluster answers `nuv cluster VERB ARGS` when it can; ok false: hand the command to the
// full program, nothing printed.
func answerCluster(ctx context.Context, env *cli.Env, verb string, args []string) (a answer, ok bool) {
	fs := pflag.NewFlagSet("nuv cluster "+verb, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var output cli.OutputOption
	output.AddFlags(fs)
	if fs.Parse(args) != nil || fs.Changed("json") {
		return answer{}, false
	}
	q := newClusterQuery(env)
	if q == nil {
		return answer{}, false
	}
	var b bytes.Buffer
	switch {
	case verb == "list" && fs.NArg() == 0:
		infos, ok := q.list(ctx)
		if !ok {
			return answer{}, false
		}
		if !output.Machine() && len(infos) == 0 {
			b.WriteString("no clusters; create one with `nuv cluster create local`\n")
			return answer{out: b.Bytes()}, true
		}
		if done, err := output.Write(&b, clusterview.Machines(infos)); done {
			return answer{out: b.Bytes()}, err == nil
		}
		clusterview.Table(&b, infos, time.Now(), output.Wide())
		return answer{out: b.Bytes()}, true
	case verb == "status" && fs.NArg() == 1:
		info, ok := q.status(ctx, fs.Arg(0))
		if !ok {
			return answer{}, false
		}
		if done, err := output.Write(&b, clusterview.MachineOf(info)); !done {
			clusterview.Status(&b, info, time.Now(), output.Wide())
		} else if err != nil {
			return answer{}, false
		}
		if info.Status != cluster.Running {
			return answer{out: b.Bytes(), err: cli.Exit(exitNotRunning, nil)}, true
		}
		return answer{out: b.Bytes()}, true
	}
	return answer{}, false
}

// Package clustercmd implements `nuv cluster`: every verb goes through the provider registry
// (package providers) and, for what changes clusters, the lifecycle engine (package engine):
// create, plan, apply and delete; list, status, stop, start, logs and kubeconfig; state (records and
// locks of the state store); and the verbs providers register (local's prepare, kind's
// node-image).
package clustercmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/addons"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/clustercache"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/history"
	"github.com/nuv-dev/nuv/internal/cluster/providers"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/state/stores"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/spf13/pflag"
)

// NewCommand returns the `nuv cluster` command.
func NewCommand() cli.Command {
	return cli.GroupCommand("cluster", group())
}

// ctx is what a subcommand gets: the environment and the providers.
type cmdCtx struct {
	env *cli.Env
	// registry lists the providers; providers are they, built over env.
	registry  *cluster.Registry
	providers map[string]cluster.Provider
	// overrides are environment settings a flag gave explicitly (--wait-timeout is
	// NUV_CLUSTER_WAIT_TIMEOUT): env.Getenv, which the providers read, answers them first.
	overrides map[string]string
	// refresh is --refresh of list and status: ask the clouds now, not their cached answers.
	refresh bool
}

// newCmdCtx is a subcommand's context: env, whose Getenv answers the command's flag overrides
// first, and the providers, built over that env.
func newCmdCtx(env *cli.Env) (*cmdCtx, error) {
	c := &cmdCtx{overrides: map[string]string{}}
	derived := *env
	derived.Getenv = func(k string) string {
		if v, ok := c.overrides[k]; ok {
			return v
		}
		return env.Getenv(k)
	}
	c.env = &derived
	c.registry = providers.Registry()
	ps, err := providers.Build(c.registry, c.env)
	if err != nil {
		return nil, err
	}
	c.providers = ps
	return c, nil
}

type sub struct {
	name, usage, short string
	run                func(ctx context.Context, c *cmdCtx, args []string) error
}

func subcommands() []sub {
	return []sub{
		{"create", "create PROVIDER [NAME] [--nodes K] [--version V] [--flavor TYPE] [--ha] [--ttl D] [--dry-run] | create -f FILE", "create a cluster (a shorthand for a one-group spec) and write clusters/NAME.kubeconfig", runCreate},
		{"plan", "plan -f FILE [--only NAME] [--detailed-exitcode] [-o text|json|yaml] [-out PLANFILE] [--terraform DIR]", "show what apply would change, resource by resource (reads only)", runPlan},
		{"apply", "apply -f FILE [--only NAME] [--yes] | apply PLANFILE", "converge clusters to their specs: create what is missing, update what differs; asks before deleting or replacing", runApply},
		{"delete", "delete NAME...|--all [--dry-run] [--yes]", "delete clusters with everything nuv made for them, state and kubeconfig included; --all and cloud clusters ask first", runDelete},
		{"list", "list [--refresh] [-o table|wide|json|yaml]", "list every provider's clusters: name, provider, status (a cloud's cached answer with its age), API URL, nodes ready, age", runList},
		{"status", "status NAME [--refresh] [-o table|wide|json|yaml]", "show a cluster and its components", runStatus},
		{"stop", "stop NAME...|--all", "stop a cluster's processes, keep its state (local clusters)", runStop},
		{"start", "start NAME...|--all", "start a stopped cluster or repair a degraded one (local clusters)", runStart},
		{"logs", "logs NAME [COMPONENT] [--tail N]", "print a cluster's component logs", runLogs},
		{"kubeconfig", "kubeconfig NAME", "print the path of a cluster's kubeconfig", runKubeconfig},
		{"gc", "gc [--dry-run] [--provider P] [-o json]", "delete the clusters whose time to live (spec.ttl, extend) has passed, and the cloud clusters found by tag whose record was lost; --dry-run lists them", runGC},
		{"extend", "extend NAME DURATION", "move a cluster's expiry DURATION (4h, 2d) later", runExtend},
		{"state", "state list|show NAME|unlock NAME [--force]|rm NAME|migrate --to LOCATION [-o table|wide|json|yaml]", "inspect the state store: records, phases, locks; move every record to another store", runState},
	}
}

// Run executes `nuv cluster ARGS`.
func Run(ctx context.Context, env *cli.Env, args []string) error { return group().Run(ctx, env, args) }

// group is `nuv cluster` on nuv's one group plumbing (cli.Group).
func group() *cli.Group {
	g := &cli.Group{Name: "nuv cluster", Short: "create, plan, apply and manage test clusters (local, through providers)",
		Long: `Providers: local (etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok as
processes on loopback), kind (real nodes: containers of docker, nerdctl or podman), and the
clouds through their SDKs: eks, aks, gke (the real services, or nuv's emulators after
` + "`eval \"$(nuv emulator env)\"`" + `). Specs: YAML ` + "`kind: Cluster`" + ` documents, by convention in clusters/specs/.
State: records and locks in $NUV_HOME/state, or a shared store: NUV_STATE=kube:NAMESPACE@KUBECONFIG,
s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], azblob://CONTAINER[/PREFIX] or mongodb://HOST[:PORT]/DB
(endpoints and credentials from each SDK's own settings; docs/state.md).`,
		Examples: "nuv cluster create local\nnuv cluster plan -f clusters/specs/dev.yaml\nnuv cluster list -o json"}
	for _, s := range subcommands() {
		s := s
		v := cli.Verb{Name: s.name, Short: s.short, Run: func(ctx context.Context, env *cli.Env, args []string) error {
			c, err := newCmdCtx(env)
			if err != nil {
				return err
			}
			if changesClusters(s.name) {
				// A list after this verb shows the clusters as they now are, not as a cloud
				// answered before it (the cache is dropped after the verb, which may fail half-way).
				defer c.invalidateCache()
			}
			return s.run(ctx, c, args)
		}}
		switch s.name {
		case "create":
			v.Args = []string{cli.ValProvider}
		case "stop", "start", "delete":
			v.Args, v.Variadic = []string{cli.ValCluster}, true
		case "status", "logs", "kubeconfig", "extend":
			v.Args = []string{cli.ValCluster}
		}
		g.Verbs = append(g.Verbs, v)
	}
	// The providers' own verbs (local's prepare, kind's node-image) change no cluster.
	for _, pv := range providers.Registry().Verbs() {
		pv := pv
		g.Verbs = append(g.Verbs, cli.Verb{Name: pv.Name, Short: pv.Short, Run: func(ctx context.Context, env *cli.Env, args []string) error {
			c, err := newCmdCtx(env)
			if err != nil {
				return err
			}
			return pv.Run(ctx, pv, c.env, args)
		}})
	}
	return g
}

// changesClusters reports whether verb may create, change or delete clusters (and so makes the
// cached cloud answers out of date).
func changesClusters(verb string) bool {
	switch verb {
	case "list", "status", "logs", "kubeconfig", "plan":
		return false
	}
	return true
}

// invalidateCache drops the cached cloud answers; failing to is a warning (the cache then shows
// the clusters as they were until its time to live passes, with their age).
func (c *cmdCtx) invalidateCache() {
	if cache := c.cache(); cache != nil {
		if err := cache.Invalidate(); err != nil {
			c.env.Log.Warnf("%v", err)
		}
	}
}

// flagSet is a subcommand's flags with the env it prints help to (cli.Parse).
type flagSet struct {
	*pflag.FlagSet
	env   *cli.Env
	usage cli.Usage
}

// flags returns a fresh FlagSet for one subcommand; parse handles -h.
func flags(env *cli.Env, s string) flagSet {
	u := cli.Usage{Line: "nuv cluster " + s}
	for _, c := range subcommands() {
		if c.name == s {
			u = cli.Usage{Line: "nuv cluster " + c.usage, Short: c.short}
		}
	}
	return flagSet{FlagSet: cli.NewFlagSet("nuv cluster " + s), env: env, usage: u}
}

// parse parses args the one way nuv's commands do (cli.Parse): -h prints the help to stdout and
// returns errHelp (a clean exit); a bad flag is a usage error quoting the usage line.
func parse(fs flagSet, args []string) error {
	done, err := cli.Parse(fs.env, fs.FlagSet, fs.usage, args)
	if done {
		return errHelp
	}
	return err
}

var errHelp = cli.Exit(cli.ExitOK, nil)

// stateFlag adds --state (default $NUV_STATE: the directory store under NUV_HOME).
func stateFlag(fs flagSet, c *cmdCtx) *string {
	return fs.String("state", c.env.Getenv("NUV_STATE"), "state store: dir:PATH, kube:NAMESPACE@KUBECONFIG, s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], azblob://CONTAINER[/PREFIX] or mongodb://HOST[:PORT]/DB (default $NUV_STATE, else $NUV_HOME/state)")
}

// waitFlag adds --wait-timeout: the bound of every wait for a cloud operation or a resource to
// settle, the flag form of NUV_CLUSTER_WAIT_TIMEOUT (which it overrides for this command).
func waitFlag(fs flagSet, c *cmdCtx) {
	fs.Var(&waitTimeout{c: c}, "wait-timeout", fmt.Sprintf("give up waiting for one cloud operation after this long, naming it (default $%s, else %s)", cluster.EnvWaitTimeout, cluster.DefaultWaitTimeout))
}

// waitTimeout is --wait-timeout's value: a positive duration, kept in the command's overrides.
type waitTimeout struct {
	c *cmdCtx
	d time.Duration
}

func (w *waitTimeout) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("want a positive duration such as 20m")
	}
	w.d = d
	w.c.overrides[cluster.EnvWaitTimeout] = d.String()
	return nil
}

func (w *waitTimeout) String() string {
	if w.d == 0 {
		return ""
	}
	return w.d.String()
}

func (w *waitTimeout) Type() string { return "duration" }

// engineFor opens the state store and returns the engine over it.
func (c *cmdCtx) engineFor(location, command string) (*engine.Engine, error) {
	home, err := paths.EnsureHome(c.env.Getenv)
	if err != nil {
		return nil, err
	}
	store, err := stores.Open(location, home, "")
	var le *state.LocationError
	if errors.As(err, &le) {
		return nil, cli.Usagef("%v", err)
	}
	if err != nil {
		return nil, err
	}
	wait := 2 * time.Minute
	if v := c.env.Getenv("NUV_LOCK_WAIT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, cli.Usagef("NUV_LOCK_WAIT=%q is not a duration (e.g. 30s)", v)
		}
		wait = d
	}
	hist, err := history.ForState(store)
	if err != nil {
		return nil, err
	}
	prices, err := providers.Prices(c.env.Getenv, home)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	ready, err := cluster.WaitTimeout(c.env.Getenv) // --wait-timeout, NUV_CLUSTER_WAIT_TIMEOUT
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	e := &engine.Engine{Providers: c.providers, Store: store, Out: c.env.Out, Log: c.env.Log, LockWait: wait, Command: command,
		Addons: addons.ClusterStep{Project: paths.Project(c.env.Getenv, c.env.Dir)}, History: hist, Prices: prices, WaitTimeout: ready}
	if err := e.SetFailpoints(c.env.Getenv); err != nil { // kill tests' failpoints
		return nil, cli.Usagef("%v", err)
	}
	return e, nil
}

// knownNames lists every cluster any provider or the default store knows, sorted. The providers
// are asked all at once; with cached, a cloud's fresh cached answer serves (for the names an error
// message suggests; --all asks every cloud now).
func (c *cmdCtx) knownNames(ctx context.Context, cached bool) []string {
	seen := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for n, p := range c.providers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var infos []cluster.Info
			if cached {
				infos, _ = c.list(ctx, n)
			} else {
				infos, _ = p.List(ctx)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, i := range infos {
				seen[i.Name] = true
			}
		}()
	}
	wg.Wait()
	if e, err := c.engineFor(c.env.Getenv("NUV_STATE"), "nuv cluster"); err == nil {
		recs, _ := e.Store.List(ctx)
		for _, r := range recs {
			seen[r.Name] = true
		}
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// names resolves NAME...|--all.
func (c *cmdCtx) names(ctx context.Context, args []string, all bool, verb string) ([]string, error) {
	if all {
		if len(args) > 0 {
			return nil, cli.Usagef("nuv cluster %s: give cluster names or --all, not both", verb)
		}
		return c.knownNames(ctx, false), nil
	}
	if len(args) == 0 {
		return nil, cli.Usagef("nuv cluster %s: name a cluster (or --all); `nuv cluster list` shows them", verb)
	}
	return args, nil
}

// notFound turns ErrNotFound into a clear message naming the known clusters.
func (c *cmdCtx) notFound(ctx context.Context, err error) error {
	if !errors.Is(err, cluster.ErrNotFound) {
		return err
	}
	known := c.knownNames(ctx, true)
	if len(known) == 0 {
		return fmt.Errorf("%w (no clusters exist)", err)
	}
	return fmt.Errorf("%w (known: %s)", err, strings.Join(known, ", "))
}

// find returns the provider that knows cluster name, with its status. The provider the default
// state store records the cluster under is asked first, with the recorded spec (so it looks in the
// cluster's region and account; a cloud's fresh cached answer serves unless --refresh); when it
// does not know the cluster, or there is no record, every other provider is asked with the name
// alone, all at once (one slow cloud does not hold up the others), and the first in name order that
// knows it answers.
func (c *cmdCtx) find(ctx context.Context, name string) (cluster.Provider, cluster.Info, error) {
	var names []string
	for n := range c.providers {
		names = append(names, n)
	}
	sort.Strings(names)
	var rec *state.Record
	if e, err := c.engineFor(c.env.Getenv("NUV_STATE"), "nuv cluster"); err == nil {
		rec, _ = e.Store.Load(ctx, name)
	}
	if rec != nil && c.providers[rec.Provider] != nil {
		ref := cluster.Named(name)
		if rec.Spec != nil {
			ref = rec.Spec
		}
		info, err := c.status(ctx, rec.Provider, ref)
		if err == nil {
			return c.providers[rec.Provider], info, nil
		}
		if !errors.Is(err, cluster.ErrNotFound) {
			return nil, cluster.Info{}, err
		}
		names = slices.DeleteFunc(names, func(n string) bool { return n == rec.Provider })
	}
	infos := make([]cluster.Info, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			infos[i], errs[i] = c.status(ctx, n, cluster.Named(name))
		}()
	}
	wg.Wait()
	for i, n := range names {
		if errs[i] == nil {
			return c.providers[n], infos[i], nil
		}
		if !errors.Is(errs[i], cluster.ErrNotFound) {
			return nil, cluster.Info{}, errs[i]
		}
	}
	return nil, cluster.Info{}, c.notFound(ctx, fmt.Errorf("%q: %w", name, cluster.ErrNotFound))
}

// status is provider n's Status of the cluster ref names: for a cloud, the cluster as its fresh
// cached list holds it (unless --refresh), else asked now.
func (c *cmdCtx) status(ctx context.Context, n string, ref *spec.Cluster) (cluster.Info, error) {
	if c.cached(n) && !c.refresh {
		if cache := c.cache(); cache != nil {
			key := clustercache.Key(n, paths.Project(c.env.Getenv, c.env.Dir), c.env.Getenv)
			if info, ok := cache.Find(n, key, ref.Metadata.Name); ok {
				return info, nil
			}
		}
	}
	return c.providers[n].Status(ctx, ref)
}

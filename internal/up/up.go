// Package up is `nuv up`, the README's first command. It sits above the verbs it composes: the
// lifecycle engine (its cluster is made, started and recorded as `nuv cluster apply` would), the project's selection, the
// operator and instance verbs (internal/deploy) and the deployment test (internal/testverbs), all
// called in-process.
package up

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/addons"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/providers"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/state/stores"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/deploy"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/testverbs"
)

// DefaultCluster is the local cluster `nuv up` creates or reuses.
const DefaultCluster = "dev"

// Options configure Up.
type Options struct {
	deploy.Options
	// Cluster is the local cluster to create or reuse; "" means DefaultCluster.
	Cluster string
	// SkipDtest leaves out the deployment test (it runs by default).
	SkipDtest bool
}

// Up creates (or reuses) the local cluster, selects it, deploys the operator, applies the instance,
// waits until it is Ready and runs the deployment test (keeping the deployment). Run again it
// reuses everything and changes nothing. env gives the deployment test its streams and environment.
func Up(ctx context.Context, env *cli.Env, u Options) error {
	start := time.Now()
	o := u.Options
	if o.Getenv == nil {
		o.Getenv = env.Getenv
	}
	if o.Out == nil {
		o.Out = env.Out
	}
	if o.Log == nil {
		o.Log = env.Log
	}
	if o.Timeout <= 0 {
		o.Timeout = deploy.DefaultTimeout
	}
	if o.Home == "" {
		h, err := paths.EnsureHome(o.Getenv)
		if err != nil {
			return err
		}
		o.Home = h
	}
	name := u.Cluster
	if name == "" {
		name = DefaultCluster
	}
	step := func(format string, a ...any) {
		fmt.Fprintf(o.Out, "==> "+format+" (%.1fs)\n", append(a, time.Since(start).Seconds())...)
	}
	step("local cluster %s", name)
	created, err := Cluster(ctx, o, name)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(o.Out, "created local cluster %s\n", name)
	} else {
		fmt.Fprintf(o.Out, "reusing local cluster %s\n", name)
	}

	cs, err := kube.ListEnv(o.Project, o.Getenv)
	if err != nil {
		return err
	}
	c, err := kube.Find(cs, name)
	if err != nil {
		return fmt.Errorf("local cluster %s has no kubeconfig in %s: %w", name, paths.Clusters(o.Project), err)
	}
	if cur, err := kube.ReadSelection(o.Project); err != nil || cur.Name != c.Name {
		if err := kube.Select(o.Project, c, kube.TypeLocal); err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "selected %s for this project (%s)\n", name, kube.CurrentPath(o.Project))
	}
	if v := o.Getenv(kube.EnvCluster); v != "" && v != name {
		o.Log.Warnf("%s=%s in this shell selects another cluster for your tasks; unset it to use %s", kube.EnvCluster, v, name)
	}
	o.Kubeconfig, o.KubeType = c.Path, kube.TypeLocal

	step("operator")
	if err := deploy.Operator(ctx, o); err != nil {
		return err
	}
	step("instance")
	if err := deploy.Instance(ctx, o); err != nil {
		return err
	}
	if !u.SkipDtest {
		step("deployment test")
		denv := *env
		denv.Out, denv.Log, denv.Getenv = o.Out, o.Log, o.Getenv
		// Keep: up leaves the deployment running (dtest would otherwise destroy it).
		if err := testverbs.DeploymentTest(ctx, &denv, testverbs.DtestOptions{Kubeconfig: c.Path, Type: kube.TypeLocal,
			Timeout: o.Timeout, Keep: true}); err != nil {
			return fmt.Errorf("deployment test: %w", err)
		}
	}
	fmt.Fprintf(o.Out, "\nup in %.1fs: cluster %s selected, operator running, instance Ready.\n", time.Since(start).Seconds(), name)
	fmt.Fprintln(o.Out, "Next:")
	fmt.Fprintln(o.Out, "  nuv status            what runs and its conditions")
	fmt.Fprintln(o.Out, "  nuv instance          re-apply tests/<type>/whisk.yaml after editing it")
	fmt.Fprintln(o.Out, "  nuv run               run the operator from source in the foreground")
	fmt.Fprintln(o.Out, "  nuv destroy           remove the instance and the operator")
	fmt.Fprintf(o.Out, "  nuv cluster delete %s  remove the cluster\n", name)
	return nil
}

// Cluster creates or reuses the local cluster name through the lifecycle engine, so it has a state
// record that `nuv cluster plan|apply|state` see. Its spec is the one recorded (a cluster the user
// reshaped keeps its shape), else the one an existing cluster without a record shows, else the
// default (`nuv cluster create local NAME`'s: one node, the default version). A stopped cluster is
// started. A cluster that would have to be deleted or replaced is refused, never reshaped; a
// running cluster that matches its record is left as it is (nothing is written). created tells
// whether the cluster was made now.
func Cluster(ctx context.Context, o deploy.Options, name string) (created bool, err error) {
	p := providers.Local(o.Home, o.Project, o.Log, o.Getenv)
	store, err := stores.Open(o.Getenv("NUV_STATE"), o.Home, "")
	if err != nil {
		return false, fmt.Errorf("state store: %w", err)
	}
	e := &engine.Engine{Providers: map[string]cluster.Provider{p.Name(): p}, Store: store, Out: o.Out, Log: o.Log,
		Command: "nuv up", Addons: addons.ClusterStep{Project: o.Project}}
	s, err := clusterSpec(ctx, p, store, name)
	if err != nil {
		return false, err
	}
	plan, err := e.Apply(ctx, s, engine.ApplyOptions{Check: func(_ context.Context, _ *state.Record, plan *cluster.Plan) error {
		var goes []string
		for _, ch := range plan.Changes {
			if ch.Action == cluster.Delete || ch.Action == cluster.Replace {
				goes = append(goes, string(ch.Action)+" "+ch.Key)
			}
		}
		if len(goes) > 0 {
			return fmt.Errorf("local cluster %s: nuv up would have to %s; up never destroys a cluster: see `nuv cluster plan`, or `nuv cluster delete %s` and up again", name, strings.Join(goes, ", "), name)
		}
		return nil
	}})
	if err != nil {
		return false, fmt.Errorf("local cluster %s: %w", name, err)
	}
	for _, ch := range plan.Changes {
		if ch.Action == cluster.Create && ch.Key == "control-plane/"+name {
			created = true
		}
	}
	return created, nil
}

// clusterSpec is the spec up applies to cluster name (see Cluster).
func clusterSpec(ctx context.Context, p cluster.Provider, store state.Store, name string) (*spec.Cluster, error) {
	rec, err := store.Load(ctx, name)
	if err != nil && !errors.Is(err, state.ErrNoRecord) {
		return nil, err
	}
	if rec != nil && rec.Provider != p.Name() {
		return nil, fmt.Errorf("cluster %s is a %s cluster (state in %s); nuv up makes a local cluster of that name: delete it first, or give up another name", name, rec.Provider, store.Where())
	}
	if rec != nil && rec.Spec != nil {
		return rec.Spec, nil
	}
	if a, ok := p.(cluster.Adopter); ok {
		if s, err := a.Adopt(ctx, name); err == nil {
			return s, nil
		} else if !errors.Is(err, cluster.ErrNotFound) {
			return nil, err
		}
	}
	nodes := 1
	return &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: name}, Source: "nuv up",
		Spec: spec.Spec{Provider: p.Name(), KubernetesVersion: companion.KubeVersion,
			NodeGroups: []spec.NodeGroup{{Name: spec.DefaultNodeGroup, Count: &nodes}}}}, nil
}

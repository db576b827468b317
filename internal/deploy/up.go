package deploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/paths"
)

// DefaultUpCluster is the local cluster `nuv up` creates or reuses.
const DefaultUpCluster = "dev"

// UpOptions configure Up.
type UpOptions struct {
	Options
	// Cluster is the local cluster to create or reuse; "" means DefaultUpCluster.
	Cluster string
	// Dtest runs the deployment test against the selected cluster; nil when nuv has none.
	Dtest func(ctx context.Context) error
}

// Up is the README's first command: create (or reuse) the local cluster, select it, deploy the
// operator, apply the instance, wait until it is Ready and run the deployment test. Run again it
// reuses everything and changes nothing.
func Up(ctx context.Context, u UpOptions) error {
	start := time.Now()
	o := u.Options.withDefaults()
	if o.Home == "" {
		h, err := paths.EnsureHome(o.Getenv)
		if err != nil {
			return err
		}
		o.Home = h
	}
	name := u.Cluster
	if name == "" {
		name = DefaultUpCluster
	}
	p := local.Provider{Home: o.Home, Project: o.Project, Log: o.Log, Getenv: o.Getenv}
	step := func(format string, a ...any) {
		fmt.Fprintf(o.Out, "==> "+format+" (%.1fs)\n", append(a, time.Since(start).Seconds())...)
	}
	step("local cluster %s", name)
	if _, err := p.Create(ctx, local.CreateOptions{Name: name}); errors.Is(err, cluster.ErrExists) {
		if err := p.Start(ctx, name); err != nil {
			return fmt.Errorf("reuse local cluster %s: %w", name, err)
		}
		fmt.Fprintf(o.Out, "reusing local cluster %s\n", name)
	} else if err != nil {
		return fmt.Errorf("create local cluster %s: %w", name, err)
	} else {
		fmt.Fprintf(o.Out, "created local cluster %s\n", name)
	}

	cs, err := kube.ListEnv(o.Project, o.Getenv)
	if err != nil {
		return err
	}
	c, err := kube.Find(cs, name)
	if err != nil {
		return fmt.Errorf("local cluster %s has no kubeconfig in %s: %w", name, paths.Clusters(o.Project), err)
	}
	if cur, err := kube.Selected(o.Project, func(string) string { return "" }); err != nil || cur.Path != c.Path {
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
	if err := Operator(ctx, o); err != nil {
		return err
	}
	step("instance")
	if err := Instance(ctx, o); err != nil {
		return err
	}
	if u.Dtest != nil {
		step("deployment test")
		if err := u.Dtest(ctx); err != nil {
			return fmt.Errorf("deployment test: %w", err)
		}
	} else {
		fmt.Fprintln(o.Out, "(no deployment test in this nuv: skipped)")
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

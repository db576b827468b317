package app

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/kube/kubecmd"
	"github.com/nuv-dev/nuv/internal/kube/watch"
	"github.com/nuv-dev/nuv/internal/paths"
)

// kubeCommands: `nuv kube ...` (the clusters/ inventory, selection, detection, watch).
func kubeCommands() []cli.Command { return []cli.Command{kubecmd.NewCommand(KubeWatch)} }

// KubeWatch is `nuv kube watch`'s view (package watch), injected into kubecmd so the slim front,
// which runs the other kube verbs, does not link client-go's informers.
func KubeWatch(ctx context.Context, cfg *rest.Config, o kubecmd.WatchOptions) error {
	return watch.Run(ctx, cfg, watch.Options{Namespace: o.Namespace, Out: o.Out, Live: o.Live, Title: o.Title})
}

// kubeTaskEnv is the environment every task nuv runs gets for the selected cluster
// (KUBECONFIG=<selected kubeconfig>, KUBE=<detected type>); nil when nothing is selected. A
// selection that cannot be used is reported and points KUBECONFIG nowhere (see kube.SelectionEnv).
func kubeTaskEnv(env *cli.Env) []string {
	vars, err := kube.SelectionEnv(paths.Project(env.Getenv, env.Dir), env.Getenv)
	if err != nil && env.Log != nil {
		env.Log.Warnf("cluster selection: %v", err)
	}
	return vars
}

package app

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kube/kubecmd"
	"github.com/nuv-dev/nuv/internal/kube/watch"
	"github.com/nuv-dev/nuv/internal/taskprog"
)

// kubeCommands: `nuv kube ...` (the clusters/ inventory, selection, detection, watch).
func kubeCommands() []cli.Command { return []cli.Command{kubecmd.NewCommand(KubeWatch)} }

// KubeWatch is `nuv kube watch`'s view (package watch), injected into kubecmd so the slim front,
// which runs the other kube verbs, does not link client-go's informers.
func KubeWatch(ctx context.Context, cfg *rest.Config, o kubecmd.WatchOptions) error {
	return watch.Run(ctx, cfg, watch.Options{Namespace: o.Namespace, Out: o.Out, Live: o.Live, Title: o.Title})
}

// kubeTaskEnv is the selected cluster's environment for tasks (taskprog.KubeEnv).
func kubeTaskEnv(env *cli.Env) []string { return taskprog.KubeEnv(env) }

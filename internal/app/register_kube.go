package app

import (
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/kube/kubecmd"
	"github.com/nuv-dev/nuv/internal/paths"
)

// kubeCommands: `nuv kube ...` (the clusters/ inventory, selection, detection, watch).
func kubeCommands() []cli.Command { return []cli.Command{kubecmd.NewCommand()} }

// kubeTaskEnv is the environment every task nuv runs gets for the selected cluster
// (KUBECONFIG=<selected kubeconfig>, KUBE=<detected type>); nil when nothing is selected.
func kubeTaskEnv(env *cli.Env) []string {
	return kube.TaskEnv(paths.Project(env.Getenv, env.Dir), env.Getenv)
}

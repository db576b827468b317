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
// (KUBECONFIG=<selected kubeconfig>, KUBE=<detected type>); nil when nothing is selected. A
// selection that cannot be used is reported and points KUBECONFIG nowhere (see kube.SelectionEnv).
func kubeTaskEnv(env *cli.Env) []string {
	vars, err := kube.SelectionEnv(paths.Project(env.Getenv, env.Dir), env.Getenv)
	if err != nil && env.Log != nil {
		env.Log.Warnf("cluster selection: %v", err)
	}
	return vars
}

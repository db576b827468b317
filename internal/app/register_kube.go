package app

import "github.com/nuv-dev/nuv/internal/cli"

// kubeCommands: `nuv kube ...` (the clusters/ inventory, selection, detection, watch).
func kubeCommands() []cli.Command { return nil }

// kubeTaskEnv is the environment every task nuv runs gets for the selected cluster
// (KUBECONFIG=<selected kubeconfig>, KUBE=<detected type>); nil when nothing is selected.
func kubeTaskEnv(env *cli.Env) []string { return nil }

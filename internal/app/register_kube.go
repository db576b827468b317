package app

import "github.com/nuv-dev/nuv/internal/cli"

// kubeCommands: `nuv kube ...` (the clusters/ inventory, selection, detection, watch).
func kubeCommands() []cli.Command { return nil }

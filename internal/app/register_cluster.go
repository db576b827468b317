package app

import (
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/clustercmd"
)

// clusterCommands: `nuv cluster ...` (local clusters and providers).
func clusterCommands() []cli.Command { return []cli.Command{clustercmd.NewCommand()} }

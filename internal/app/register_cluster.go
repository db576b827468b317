package app

import "github.com/nuv-dev/nuv/internal/cli"

// clusterCommands: `nuv cluster ...` (local clusters and providers).
func clusterCommands() []cli.Command { return nil }

package app

import "github.com/nuv-dev/nuv/internal/cli"

// imageCommands: `nuv image ...` and `nuv registry ...`.
func imageCommands() []cli.Command { return nil }

// imageTools: release-engineering tools callable as -name (none yet).
func imageTools() []cli.Command { return nil }

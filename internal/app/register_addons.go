package app

import (
	"github.com/nuv-dev/nuv/internal/addons/addonscmd"
	"github.com/nuv-dev/nuv/internal/cli"
)

// addonsCommands: `nuv addons list|plan|apply|remove|status` (internal/addons).
func addonsCommands() []cli.Command { return []cli.Command{addonscmd.NewCommand()} }

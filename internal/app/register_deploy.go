package app

import (
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/deploy/deploycmd"
)

// deployCommands: the operator verbs (operator, instance, destroy, clean, defin, run, status) and
// up, which composes them with a local cluster and the deployment test.
func deployCommands() []cli.Command { return deploycmd.NewCommands() }

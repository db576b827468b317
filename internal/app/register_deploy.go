package app

import (
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/deploy"
)

// deployCommands: the operator verbs (operator, instance, destroy, clean, defin, run, status, up).
// `up` runs `nuv dtest` after the instance is Ready when nuv has that command.
func deployCommands() []cli.Command {
	return deploy.Commands(func() bool { return BuiltinNames()["dtest"] })
}

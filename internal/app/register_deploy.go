package app

import "github.com/nuv-dev/nuv/internal/cli"

// deployCommands: the operator verbs (operator, instance, destroy, clean, defin, run, status, up).
func deployCommands() []cli.Command { return nil }

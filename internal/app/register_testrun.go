package app

import "github.com/nuv-dev/nuv/internal/cli"

// testCommands: utest, itest, dtest, test and all-kubes.
func testCommands() []cli.Command { return nil }

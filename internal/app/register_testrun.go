package app

import (
	"github.com/nuv-dev/nuv/internal/allkubes/allkubescmd"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/report/reportcmd"
	"github.com/nuv-dev/nuv/internal/testverbs"
)

// testCommands: utest, itest, dtest, test, all-kubes and report.
func testCommands() []cli.Command {
	return append(testverbs.NewCommands(),
		allkubescmd.NewCommand(func(name string) bool { return BuiltinNames()[name] }),
		reportcmd.NewCommand(Version))
}

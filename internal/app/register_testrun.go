package app

import (
	"github.com/nuv-dev/nuv/internal/allkubes"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/report/reportcmd"
	"github.com/nuv-dev/nuv/internal/testverbs"
)

// testCommands: utest, itest, dtest, test, all-kubes and report.
func testCommands() []cli.Command {
	return []cli.Command{
		testverbs.UtestCommand(),
		testverbs.ItestCommand(),
		testverbs.DtestCommand(),
		testverbs.TestCommand(),
		allkubes.Command(func(name string) bool { return BuiltinNames()[name] }),
		reportcmd.Command(Version),
	}
}

package app

import (
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/emulator/emulatorcmd"
)

// emulatorCommands: `nuv emulator ...`, the loopback AWS emulator EKS clusters are tested against.
func emulatorCommands() []cli.Command { return []cli.Command{emulatorcmd.NewCommand()} }

// emulatorTools: -eks-token, the exec credential plugin of EKS kubeconfigs.
func emulatorTools() []cli.Command { return []cli.Command{emulatorcmd.NewTokenTool()} }

package app

import (
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/providers"
	"github.com/nuv-dev/nuv/internal/emulator/emulatorcmd"
)

// emulatorCommands: `nuv emulator ...`, the loopback AWS, Azure and GKE emulators the cloud providers are tested against.
func emulatorCommands() []cli.Command { return []cli.Command{emulatorcmd.NewCommand()} }

// emulatorTools: -eks-token and -gke-token, the exec credential plugins of EKS and GKE kubeconfigs.
func emulatorTools() []cli.Command {
	return append([]cli.Command{emulatorcmd.NewTokenTool()}, providers.Tools()...)
}

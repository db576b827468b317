// Command nuv-emulator is nuv's emulators' program: `nuv emulator ...` (the loopback AWS, Azure
// and GKE emulators: up, down, status, env, faults) runs here (package
// internal/emulator/emulatorcmd). Users do not run it by name: the slim `nuv`, and nuv's full
// program when it is run by name, hand `nuv emulator` command lines to it unchanged, so that the
// program users run every day links none of the emulators.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/nuv-dev/nuv/internal/emulator/emulatorcmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := emulatorcmd.Main(ctx, os.Args)
	stop()
	os.Exit(code)
}

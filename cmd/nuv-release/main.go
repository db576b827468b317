// Command nuv-release builds nuv's release (internal/release): per platform one archive with the
// slim nuv and the programs it hands work to, an SBOM each, checksums.txt, and with -registry (or
// $REGISTRY) nuv's multi-arch image. `task release` runs it with `go run`. It is a tool of nuv's
// own repository, not a verb of nuv: users' projects have no use for building nuv, and no shipped
// program links it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/nuv-dev/nuv/internal/release"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := release.Main(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// Command nuv is the task interpreter for Kubernetes operator developers. It stays thin: everything
// lives in internal/app so the CLI can be driven from tests.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/nuv-dev/nuv/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, os.Args)
	stop()
	os.Exit(code)
}

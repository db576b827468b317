// Command nuv is the task interpreter for Kubernetes operator developers. This is its slim front
// (internal/front): it answers the daily verbs itself and hands everything else to nuv's full
// program (cmd/nuv-full), which it builds once and caches.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/nuv-dev/nuv/internal/front"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := front.Main(ctx, os.Args)
	stop()
	os.Exit(code)
}

// Command nuv-full is nuv's full program: every built-in command, the task interpreter, the
// providers, emulators and tools. Users do not run it by name: the slim `nuv` binary (package
// internal/front) answers the daily verbs itself and hands every other command line to this
// program, which it builds from its embedded sources once and caches. It stays thin: everything
// lives in internal/app.
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

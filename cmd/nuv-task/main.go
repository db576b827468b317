// Command nuv-task is nuv's task program: `task` and `nuv -task` run Taskfiles here (package
// internal/taskprog). Users do not run it by name: the slim `nuv` (and its `task` link) hands
// Taskfile runs to it, as it hands every other command beyond the daily verbs to nuv-full.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/nuv-dev/nuv/internal/taskprog"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := taskprog.Main(ctx, os.Args)
	stop()
	os.Exit(code)
}

// Command whisk-controller is the Whisk's API front door: nuv's Go controller serving a subset of
// Apache OpenWhisk's REST API (package whiskapi), with actions kept in CouchDB and per-namespace
// throttling in Redis. It is not Apache OpenWhisk's controller and invokes nothing. Configured by
// the environment (WHISK_AUTH, WHISK_COUCHDB_URL, WHISK_REDIS_ADDR, ...: see whiskapi.ConfigFromEnv),
// which the operator sets; it listens on $PORT (8080).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nuv-dev/nuv/operator/whiskapi"
)

// version is stamped at build time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(log); err != nil {
		fmt.Fprintln(os.Stderr, "whisk-controller:", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	cfg, err := whiskapi.ConfigFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: fmt.Sprintf(":%d", cfg.Port), Handler: whiskapi.New(cfg, log), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Info("whisk-controller started", "version", version, "config", cfg.String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("stopping")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

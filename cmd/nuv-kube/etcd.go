//go:build !nuvkube_kwok

package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// runEtcd starts one embedded etcd member from an etcd YAML configuration file (the format of
// `etcd --config-file`) and serves until SIGTERM/SIGINT.
func runEtcd(args []string) int {
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	config := fs.String("config", "", "etcd configuration file (YAML, as etcd --config-file)")
	// --config-file is upstream etcd's name for it: a copy of nuv-kube named etcd runs with the flags
	// nuv gives a separate upstream etcd binary.
	fs.StringVar(config, "config-file", "", "the same as --config (upstream etcd's name)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *config == "" {
		fmt.Fprintln(os.Stderr, "nuv-kube etcd: --config (or --config-file) is required")
		return 2
	}
	cfg, err := embed.ConfigFromFile(*config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nuv-kube etcd: %v\n", err)
		return 1
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nuv-kube etcd: start: %v\n", err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-e.Server.ReadyNotify():
		fmt.Fprintln(os.Stderr, "nuv-kube etcd: ready")
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "nuv-kube etcd: %v\n", err)
		return 1
	case <-sig:
		closeQuickly(e)
		return 0
	}
	select {
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "nuv-kube etcd: %v\n", err)
		e.Close()
		return 1
	case <-sig:
		closeQuickly(e)
		return 0
	}
}

// closeQuickly closes etcd gracefully but gives up after two seconds: long-lived watch streams from
// the apiservers would otherwise hold a graceful stop for many seconds. Nothing is lost by exiting:
// committed data is in the page cache (and on disk once the kernel writes it).
func closeQuickly(e *embed.Etcd) {
	done := make(chan struct{})
	go func() { e.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		fmt.Fprintln(os.Stderr, "nuv-kube etcd: graceful stop timed out, exiting")
	}
}

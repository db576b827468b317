// Package cluster is nuv's provider-neutral view of the clusters it creates for tests: the Provider
// interface every provider implements (local first; kind and cloud providers later), the options of
// `nuv cluster create`, the status a provider reports, and the node flavors that make a local cluster
// look like a given distribution.
package cluster

import (
	"context"
	"errors"
	"time"
)

// Provider creates and manages clusters of one kind. Implementations keep their own state; names are
// unique per provider.
type Provider interface {
	// Name is the provider's name on the command line ("local").
	Name() string
	// Create makes a cluster, waits until its nodes are Ready and writes its kubeconfig.
	// It fails with ErrExists, leaving the existing cluster untouched, if the name is taken.
	Create(ctx context.Context, opts CreateOptions) (Info, error)
	// Delete stops a cluster and removes its state and kubeconfig; ErrNotFound if unknown.
	Delete(ctx context.Context, name string) error
	// List reports every cluster the provider knows, including broken ones (Info.Err set).
	List(ctx context.Context) ([]Info, error)
	// Start starts a stopped cluster or repairs a degraded one.
	Start(ctx context.Context, name string) error
	// Stop stops a cluster's processes and keeps its state.
	Stop(ctx context.Context, name string) error
	// Status reports one cluster.
	Status(ctx context.Context, name string) (Info, error)
}

// CreateOptions are the options of `nuv cluster create`.
type CreateOptions struct {
	Name    string
	Nodes   int
	Version string
	Flavor  string
	HA      bool
}

// Status is a cluster's overall state.
type Status string

// Cluster states reported by providers.
const (
	Creating Status = "creating" // being created (by this or another nuv)
	Running  Status = "running"  // every component up
	Degraded Status = "degraded" // some components down: `nuv cluster start` repairs it
	Stopped  Status = "stopped"  // no component running
	Corrupt  Status = "corrupt"  // state unreadable
)

// Info describes one cluster.
type Info struct {
	Name       string
	Provider   string
	Status     Status
	APIURL     string
	Kubeconfig string
	Flavor     string
	Version    string
	HA         bool
	Nodes      int // nodes requested
	NodesReady int // nodes Ready (-1: unknown, API unreachable)
	Created    time.Time
	// Binaries says how the cluster got its component binaries (provider-specific text).
	Binaries string
	// Components lists each component and whether it runs (provider-specific names).
	Components []Component
	// Err explains a Corrupt cluster.
	Err error
}

// Component is one process of a cluster.
type Component struct {
	Name    string
	PID     int
	Running bool
	Port    int
}

// Errors providers return; test with errors.Is.
var (
	ErrNotFound = errors.New("no such cluster")
	ErrExists   = errors.New("cluster already exists")
)

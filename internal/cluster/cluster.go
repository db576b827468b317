// Package cluster is nuv's provider-neutral view of the clusters it creates for tests: the Provider
// interface every provider implements (local first; kind and cloud providers later), the options of
// `nuv cluster create`, the status a provider reports, and the node flavors that make a local cluster
// look like a given distribution.
package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Provider makes and manages clusters of one kind through the lifecycle engine (package engine):
// it says which resources a spec asks for (Desired), finds what exists (Observe) and carries out one
// change at a time (Execute). The engine computes plans from these, so a plan and an apply can never
// disagree, and records each resource in the state store as soon as it exists.
//
// Optional capabilities are separate interfaces (Starter, LogSource, Adopter, Preflighter); a verb whose
// capability a provider lacks fails with ErrUnsupported naming the provider.
type Provider interface {
	// Name is the provider's name in specs and on the command line ("local", "eks").
	Name() string
	// Validate checks the provider's own rules of a spec (versions it offers, instance types,
	// zones, its section) and returns every problem with its field path.
	Validate(c *spec.Cluster) []spec.FieldError
	// Desired returns the resources the spec asks for, dependencies first.
	Desired(c *spec.Cluster) ([]Resource, error)
	// Observe returns what exists of the cluster c names. recorded are the resources the state
	// record lists (with their IDs); a provider finds resources by those IDs and by the tags it
	// puts on them, and marks as Foreign what exists under the same name but is not nuv's.
	Observe(ctx context.Context, c *spec.Cluster, recorded []Resource) ([]Resource, error)
	// Execute carries out one change of a plan and returns the resource as it now is (nil after a
	// delete). save records a resource the moment it exists (before waiting for it to be ready),
	// so an interrupted apply resumes without creating it twice.
	Execute(ctx context.Context, c *spec.Cluster, ch Change, save func(Resource) error) (*Resource, error)
	// List reports every cluster of this provider that it can see (broken ones with Info.Err set).
	List(ctx context.Context) ([]Info, error)
	// Status reports one cluster; ErrNotFound if unknown. c is the spec the cluster's state record
	// holds (its name, region and provider section: where to look), or, for a cluster nuv keeps no
	// record of, only its name (Named); a provider then looks where its environment points.
	Status(ctx context.Context, c *spec.Cluster) (Info, error)
}

// Named is the spec Status gets for a cluster nuv keeps no record of: its name alone.
func Named(name string) *spec.Cluster {
	return &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: name}}
}

// Preflighter is a provider that checks, before an apply changes anything, that it can carry out
// a plan on this machine (an image the runtime must already hold, say). The engine calls it on
// every plan it computes: a plan it refuses is an error of plan and apply alike, with nothing
// written anywhere.
type Preflighter interface {
	Preflight(ctx context.Context, c *spec.Cluster, p *Plan) error
}

// Readier is a provider that says when an applied cluster is ready for its users. After an apply
// that changed the cluster (or resumed one that had not got there), the engine asks it again and
// again, showing each answer as progress, until it answers nil or the wait bound (WaitTimeout)
// passes; only then is the cluster recorded running and the apply done. So `apply` returns, for
// every provider that says, with every node of the spec Ready and the API answering.
type Readier interface {
	// Ready checks c once: nil when every node of the spec is Ready and the API answers where its
	// users reach it (the load balancer of a self-managed cluster); else what is not so yet.
	// ErrUnsupported says the provider does not say for c (the engine then does not wait).
	Ready(ctx context.Context, c *spec.Cluster) error
}

// Starter is a provider whose clusters can be stopped and started again (their state kept).
type Starter interface {
	Stop(ctx context.Context, name string) error
	Start(ctx context.Context, name string) error
}

// LogSource is a provider that keeps component logs of its clusters, one file per component.
type LogSource interface {
	LogFiles(ctx context.Context, name string) (map[string]string, error)
}

// Adopter is a provider that can describe, as a spec, a cluster made before nuv kept state records
// (or by the shorthand create), so the engine can plan and delete it like any other.
type Adopter interface {
	Adopt(ctx context.Context, name string) (*spec.Cluster, error)
}

// Expirer is a cloud provider whose clusters carry nuv's marks (spec.Marks: nuv.dev/expires-at and
// nuv.dev/owner, or their label spellings) beside nuv.dev/cluster, so `nuv cluster gc` can find an
// expired cluster whose state record was lost. The provider writes c.Marks on what it makes; an
// Expirer is also an Adopter, so the engine can delete what it finds.
type Expirer interface {
	// Tagged lists every cluster carrying nuv's cluster tag where the provider's environment
	// points (account and region, subscription, project), with the marks its main resource
	// carries; a cluster whose marks cannot be read has Err set.
	Tagged(ctx context.Context) ([]Tagged, error)
	// Mark writes c.Marks on the cluster's existing resources (the provider's documentation says
	// which), replacing the marks they carry: after `nuv cluster extend` or a changed spec.ttl.
	Mark(ctx context.Context, c *spec.Cluster) error
}

// Tagged is a cluster an Expirer found by nuv's tag.
type Tagged struct {
	Name string
	spec.Marks
	// Where says where it was found ("us-east-1", "resource group shop-rg", "project p/us-central1").
	Where string
	// Err says why its marks could not be read.
	Err error
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
	// Phase is the lifecycle phase of the state record, if the engine keeps one for the cluster.
	Phase string
	// ExpiresAt is when the cluster's time to live ends (from its state record; nil: never).
	ExpiresAt  *time.Time
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
	// CreatedBy is who made the cluster (user@host, from its state record; "" if unknown).
	CreatedBy string
	// Binaries says how the cluster got its component binaries (provider-specific text).
	Binaries string
	// Durability says whether the cluster's store survives a host crash (provider-specific text;
	// "" when the provider does not say).
	Durability string
	// Components lists each component and whether it runs (provider-specific names).
	Components []Component
	// Err explains a Corrupt cluster.
	Err error
	// CachedAt is when a cloud answered what this Info says, when it comes from nuv's cache of
	// cloud answers (package clustercache); zero when the provider was asked now.
	CachedAt time.Time
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
	// ErrUnsupported is a verb the cluster's provider cannot do (stop on a cloud cluster).
	ErrUnsupported = errors.New("not supported by this provider")
)

// TerraformWriter is a provider that can write what Desired asks for as a Terraform module (kOps'
// terraform target): a team that applies infrastructure with Terraform gets the resources an apply
// would create, from the same Desired list, so the two cannot disagree.
type TerraformWriter interface {
	// Terraform returns the module's files, by file name ("main.tf", "variables.tf"), for a valid
	// spec and the resources Desired returned for it.
	Terraform(c *spec.Cluster, desired []Resource) (map[string][]byte, error)
}

package deploy

import (
	"io"
	"os"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
)

// DefaultTimeout bounds every wait when Options.Timeout is zero.
const DefaultTimeout = 3 * time.Minute

// FieldManager is the server-side apply field manager of everything nuv applies.
const FieldManager = "nuv"

// Options configure one deploy verb.
type Options struct {
	// Project is the project root (holds operator/, tests/, clusters/ and .nuv/).
	Project string
	// Kubeconfig is the cluster's kubeconfig file; empty means the project's selected cluster.
	Kubeconfig string
	// KubeType is the detected cluster type ("local", "kind", "eks", ..., "generic"); empty
	// means detect it.
	KubeType string
	// Timeout bounds each wait; zero means DefaultTimeout.
	Timeout time.Duration
	// DryRun asks the API server for a dry run and prints a diff; nothing changes.
	DryRun bool
	// Out receives the progress and results a user reads; nil means os.Stdout.
	Out io.Writer
	// Log receives diagnostics; nil means quiet.
	Log cli.Logger
	// Getenv reads the environment (MY_OPERATOR_IMAGE, TAG, WHISK, ...); nil means os.Getenv.
	Getenv func(string) string
	// Source is the module the operator is built from and its manifests read from (a checkout of
	// an older version, for an upgrade test); empty means Project. The instance file, the cluster
	// and nuv's project state are always Project's.
	Source string
	// Home is nuv's state directory (paths.Home); used for the host-run operator on local clusters.
	Home string
}

// source is the module the operator is built from: Source, else Project.
func (o Options) source() string {
	if o.Source != "" {
		return o.Source
	}
	return o.Project
}

func (o Options) withDefaults() Options {
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Log == nil {
		o.Log = cli.Quiet()
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

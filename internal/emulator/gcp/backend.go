package gcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// Backend runs the control planes and nodes behind GKE clusters (LocalClusters: nuv local
// clusters). Names are the emulator's local names (LocalName).
type Backend interface {
	// Ensure makes the control plane exist and run (creating it, or starting it when stopped)
	// and returns where it answers. webhook is the token webhook its API server calls.
	Ensure(ctx context.Context, name, webhook string) (Endpoint, error)
	// SetNodeGroups makes the cluster's nodes those of groups.
	SetNodeGroups(ctx context.Context, name string, groups []NodeGroup) error
	// Delete stops and removes the control plane; a missing one is no error.
	Delete(ctx context.Context, name string) error
}

// Endpoint is where a control plane answers: its HTTPS URL and CA certificate (PEM).
type Endpoint = emucore.Endpoint

// NodeGroup is the nodes of one node pool in one zone.
type NodeGroup = emucore.NodeGroup

// LocalClusters runs each GKE cluster on the emulators' control-plane backend
// (emucore.ControlPlanes: a nuv local cluster of flavor gke under the emulator's directory,
// <dir>/clusters/<name>).
type LocalClusters struct {
	*emucore.ControlPlanes
}

// NewLocalClusters keeps the control planes under dir.
func NewLocalClusters(dir string, log cli.Logger) *LocalClusters {
	return &LocalClusters{emucore.NewControlPlanes(dir, "gke", log)}
}

// Ensure creates the local cluster (or starts it) and returns its API URL and CA. A new cluster
// has one node until the emulator sets its node pools, which it does before the create operation
// is DONE.
func (l *LocalClusters) Ensure(ctx context.Context, name, webhook string) (Endpoint, error) {
	return l.ControlPlanes.Ensure(ctx, name, webhook, nil)
}

// LocalName is the local cluster name of GKE cluster name in location: the name and a short hash
// of the location (two locations may hold clusters of the same name).
func LocalName(location, name string) string {
	if len(name) > 33 {
		name = name[:33]
	}
	sum := sha256.Sum256([]byte(location + "/" + name))
	return name + "-" + hex.EncodeToString(sum[:])[:6]
}

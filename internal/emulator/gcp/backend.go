package gcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/local"
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
type Endpoint struct {
	URL string
	CA  []byte
}

// NodeGroup is the nodes of one node pool in one zone.
type NodeGroup struct {
	Name       string
	Count      int
	Labels     map[string]string
	Taints     []corev1.Taint
	ProviderID string // prefix: a node's providerID is this plus its name
	Machine    string
	Spot       bool
}

// LocalClusters runs each GKE cluster as a nuv local cluster (flavor gke) whose state lives under
// the emulator's directory (<dir>/clusters/<name>). The control plane runs the local provider's
// Kubernetes version whatever GKE version the cluster reports.
type LocalClusters struct {
	Provider local.Provider
}

// NewLocalClusters keeps the control planes under dir.
func NewLocalClusters(dir string, log cli.Logger) *LocalClusters {
	return &LocalClusters{Provider: local.Provider{Home: dir, Project: dir, Log: log, Getenv: os.Getenv}}
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

// Ensure creates the local cluster (or starts it) and returns its API URL and CA.
func (l *LocalClusters) Ensure(ctx context.Context, name, webhook string) (Endpoint, error) {
	// A new cluster has one node (the local provider's minimum) until the emulator sets its node
	// pools, which it does before the create operation is DONE.
	info, err := l.Provider.Ensure(ctx, local.CreateOptions{Name: name, Nodes: 1, Flavor: "gke", TokenWebhook: webhook, Durability: local.Safe})
	if err != nil {
		return Endpoint{}, err
	}
	ca, err := os.ReadFile(filepath.Join(local.StateDir(l.Provider.Home, name), "pki", "ca.crt"))
	if err != nil {
		return Endpoint{}, fmt.Errorf("CA of local cluster %s: %w", name, err)
	}
	return Endpoint{URL: info.APIURL, CA: ca}, nil
}

// SetNodeGroups sets the local cluster's node groups.
func (l *LocalClusters) SetNodeGroups(ctx context.Context, name string, groups []NodeGroup) error {
	var out []local.NodeGroup
	for _, g := range groups {
		out = append(out, local.NodeGroup{Name: g.Name, Count: g.Count, Labels: g.Labels, Taints: g.Taints,
			ProviderIDPrefix: g.ProviderID, InstanceType: g.Machine, Spot: g.Spot})
	}
	return l.Provider.SetNodeGroups(ctx, name, out)
}

// Delete deletes the local cluster.
func (l *LocalClusters) Delete(ctx context.Context, name string) error {
	err := l.Provider.Delete(ctx, name)
	if errors.Is(err, cluster.ErrNotFound) {
		return nil
	}
	return err
}

// Package controlplane is the imperative API of nuv's local control planes, for the parts of nuv
// that run one without planning it: the cloud emulators (the control plane behind each EKS, AKS
// and GKE cluster), `nuv up`'s cluster and the operator run on the host (processes stopped with
// the cluster). It starts a control plane with options (or finds it running and repairs it),
// stops, starts and deletes it, reports its status, sets its node groups and says where its
// kubeconfig, CA and processes are.
//
// The machinery is that of local clusters (package localkube: processes, ports, certificates,
// kwok nodes, their record); the lifecycle engine plans and applies local clusters through the
// local provider, which runs on the same machinery, so a control plane made here and one made by
// `nuv cluster apply` are the same thing on disk.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"github.com/nuv-dev/nuv/internal/paths"
)

// Options are what a new control plane is made with (name, nodes or node groups, flavor,
// version, HA, networks, TokenReview webhook, durability); only the name counts for one that
// exists.
type Options = localkube.CreateOptions

// NodeGroup is a group of identical nodes of a control plane.
type NodeGroup = localkube.NodeGroup

// ValidName reports whether name can name a control plane (a DNS label of at most 40 characters).
func ValidName(name string) error { return localkube.ValidName(name) }

// Durabilities of a control plane's etcd (Options.Durability).
const (
	Fast = localkube.Fast
	Safe = localkube.Safe
)

// Manager runs the local control planes of one home: the user's (paths.Home) or an emulator's
// (paths.Locator.EmulatorControlPlanes). The zero Log is quiet; a nil Getenv is os.Getenv.
type Manager struct {
	// Home holds the control planes, one directory each (paths.Locator.ControlPlane).
	Home string
	// Project receives each control plane's kubeconfig (paths.Kubeconfig); "" is Home.
	Project string
	Log     cli.Logger
	Getenv  func(string) string
}

// Endpoint is where a running control plane answers.
type Endpoint struct {
	// URL is the API server's HTTPS URL.
	URL string
	// CA is the cluster CA certificate (PEM).
	CA []byte
	// Kubeconfig is the path of its admin kubeconfig.
	Kubeconfig string
	// Info is its status as `nuv cluster status` shows it.
	Info cluster.Info
}

func (m Manager) clusters() localkube.Clusters {
	project := m.Project
	if project == "" {
		project = m.Home
	}
	getenv := m.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return localkube.Clusters{Home: m.Home, Project: project, Log: m.Log, Getenv: getenv}
}

// Ensure returns the control plane o.Name running: made if it does not exist, started or repaired
// if it is stopped or degraded.
func (m Manager) Ensure(ctx context.Context, o Options) (Endpoint, error) {
	info, err := m.clusters().Ensure(ctx, o)
	if err != nil {
		return Endpoint{}, err
	}
	ca, err := m.CA(info.Name)
	if err != nil {
		return Endpoint{}, err
	}
	return Endpoint{URL: info.APIURL, CA: ca, Kubeconfig: info.Kubeconfig, Info: info}, nil
}

// Start starts a stopped control plane or repairs a degraded one.
func (m Manager) Start(ctx context.Context, name string) error { return m.clusters().Start(ctx, name) }

// Stop stops every process of a control plane (and those registered with it), keeping its state.
func (m Manager) Stop(ctx context.Context, name string) error { return m.clusters().Stop(ctx, name) }

// Delete stops a control plane and removes it and its kubeconfig; a missing one is no error.
func (m Manager) Delete(ctx context.Context, name string) error {
	err := m.clusters().Delete(ctx, name)
	if errors.Is(err, cluster.ErrNotFound) {
		return nil
	}
	return err
}

// Status reports a control plane; cluster.ErrNotFound if there is none of that name.
func (m Manager) Status(ctx context.Context, name string) (cluster.Info, error) {
	return m.clusters().Status(ctx, name)
}

// Names lists the control planes of Home, sorted.
func (m Manager) Names() ([]string, error) { return m.clusters().Names() }

// SetNodeGroups makes the control plane's nodes those of groups (added, removed, relabelled,
// then Ready).
func (m Manager) SetNodeGroups(ctx context.Context, name string, groups []NodeGroup) error {
	return m.clusters().SetNodeGroups(ctx, name, groups)
}

// Dir is the directory of the control plane name.
func (m Manager) Dir(name string) string { return paths.Locator{Home: m.Home}.ControlPlane(name) }

// Kubeconfig is where the control plane's kubeconfig is written.
func (m Manager) Kubeconfig(name string) string { return paths.Kubeconfig(m.clusters().Project, name) }

// CA returns the control plane's cluster CA certificate (PEM).
func (m Manager) CA(name string) ([]byte, error) {
	ca, err := os.ReadFile(filepath.Join(m.Dir(name), "pki", "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("CA of control plane %s: %w", name, err)
	}
	return ca, nil
}

// Register records a process started for the control plane cluster (the operator run on the
// host) under name, so Stop and Delete stop it with the cluster.
func (m Manager) Register(cluster, name string, pid int) error {
	return localkube.RegisterProcess(m.Home, cluster, name, pid)
}

// ProcessFile is where the process registered under name for the control plane cluster is
// recorded ("PID STARTTIME").
func (m Manager) ProcessFile(cluster, name string) string {
	return filepath.Join(localkube.PIDDir(m.Home, cluster), name+".pid")
}

// Find returns the manager of the control plane called name of home: home's own, else that of
// the emulator whose cluster it backs (paths.Locator.FindControlPlane); ok is false (and the
// manager home's) when there is none.
func Find(home, name string) (m Manager, ok bool) {
	h, ok := paths.Locator{Home: home}.FindControlPlane(name)
	return Manager{Home: h}, ok
}

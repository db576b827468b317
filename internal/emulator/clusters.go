package emulator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/local"
)

// LocalClusters runs each EKS cluster's control plane as a nuv local cluster (flavor eks) whose
// state lives under the emulator's directory (<dir>/clusters/<name>), apart from the user's own
// local clusters. The control plane runs the local provider's Kubernetes version whatever EKS
// version the cluster reports.
type LocalClusters struct {
	Provider local.Provider
}

// NewLocalClusters keeps the control planes under dir.
func NewLocalClusters(dir string, log cli.Logger) *LocalClusters {
	return &LocalClusters{Provider: local.Provider{Home: dir, Project: dir, Log: log, Getenv: os.Getenv}}
}

// LocalName is the local cluster name of EKS cluster name (EKS allows upper case, '_' and 100
// characters; local names are DNS labels of at most 40).
func LocalName(name string) string {
	n := strings.Trim(strings.ReplaceAll(strings.ToLower(name), "_", "-"), "-")
	if local.ValidName(n) == nil {
		return n
	}
	if len(n) > 30 {
		n = strings.Trim(n[:30], "-")
	}
	return n + "-" + stableHex(name, 8)
}

// Ensure creates the local cluster (or starts it) and returns its API URL and CA.
func (l *LocalClusters) Ensure(ctx context.Context, cp ControlPlane) (Endpoint, error) {
	name := LocalName(cp.Name)
	// A new cluster has one node (the local provider's minimum) until the emulator sets its node
	// groups, which it does before the EKS cluster is ACTIVE.
	info, err := l.Provider.Ensure(ctx, local.CreateOptions{Name: name, Nodes: 1, Flavor: "eks", TokenWebhook: cp.TokenWebhook, Durability: local.Safe})
	if err != nil {
		return Endpoint{}, err
	}
	ca, err := os.ReadFile(filepath.Join(local.StateDir(l.Provider.Home, name), "pki", "ca.crt"))
	if err != nil {
		return Endpoint{}, fmt.Errorf("CA of local cluster %s: %w", name, err)
	}
	return Endpoint{URL: info.APIURL, CA: ca}, nil
}

// Delete deletes the local cluster.
func (l *LocalClusters) Delete(ctx context.Context, name string) error {
	err := l.Provider.Delete(ctx, LocalName(name))
	if errors.Is(err, cluster.ErrNotFound) {
		return nil
	}
	return err
}

// SetNodeGroups makes the local cluster's nodes those of groups (local.Provider.SetNodeGroups:
// nodes added, removed, relabelled, then Ready). Node i of group g is <cluster>-<g>-<i+1>, with
// providerID aws:///<zone>/i-<its name>.
func (l *LocalClusters) SetNodeGroups(ctx context.Context, name string, groups []NodeGroup) error {
	var out []local.NodeGroup
	for _, g := range groups {
		var taints []corev1.Taint
		for _, t := range g.Taints {
			taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
		}
		labels := map[string]string{}
		for k, v := range g.Labels {
			labels[k] = v
		}
		out = append(out, local.NodeGroup{Name: LocalName(g.Name), Count: g.Count, Labels: labels, Taints: taints,
			ProviderIDPrefix: "aws:///" + g.Zone + "/i-", InstanceType: g.Labels["node.kubernetes.io/instance-type"],
			Spot: g.Labels["eks.amazonaws.com/capacityType"] == "SPOT"})
	}
	return l.Provider.SetNodeGroups(ctx, LocalName(name), out)
}

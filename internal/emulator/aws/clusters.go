package aws

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// LocalClusters runs each EKS cluster's control plane on the emulators' control-plane backend
// (emucore.ControlPlanes: a nuv local cluster of flavor eks under the emulator's directory,
// <dir>/clusters/<name>), with EKS's names, labels and providerIDs.
type LocalClusters struct {
	*emucore.ControlPlanes
}

// NewLocalClusters keeps the control planes under dir.
func NewLocalClusters(dir string, log cli.Logger) *LocalClusters {
	return &LocalClusters{emucore.NewControlPlanes(dir, "eks", log)}
}

// LocalName is the local cluster name of EKS cluster name (EKS allows upper case, '_' and 100
// characters; local names are DNS labels of at most 40).
func LocalName(name string) string {
	n := strings.Trim(strings.ReplaceAll(strings.ToLower(name), "_", "-"), "-")
	if emucore.ValidName(n) == nil {
		return n
	}
	if len(n) > 30 {
		n = strings.Trim(n[:30], "-")
	}
	return n + "-" + stableHex(name, 8)
}

// Ensure creates the local cluster (or starts it) and returns its API URL and CA. A new cluster
// has one node until the emulator sets its node groups, which it does before the EKS cluster is
// ACTIVE.
func (l *LocalClusters) Ensure(ctx context.Context, cp ControlPlane) (Endpoint, error) {
	return l.ControlPlanes.Ensure(ctx, LocalName(cp.Name), cp.TokenWebhook, nil)
}

// Delete deletes the local cluster.
func (l *LocalClusters) Delete(ctx context.Context, name string) error {
	return l.ControlPlanes.Delete(ctx, LocalName(name))
}

// SetNodeGroups makes the local cluster's nodes those of groups. Node i of group g is
// <cluster>-<g>-<i+1>, with providerID aws:///<zone>/i-<its name>.
func (l *LocalClusters) SetNodeGroups(ctx context.Context, name string, groups []NodeGroup) error {
	var out []emucore.NodeGroup
	for _, g := range groups {
		var taints []corev1.Taint
		for _, t := range g.Taints {
			taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
		}
		labels := map[string]string{}
		for k, v := range g.Labels {
			labels[k] = v
		}
		out = append(out, emucore.NodeGroup{Name: LocalName(g.Name), Count: g.Count, Labels: labels, Taints: taints,
			ProviderIDPrefix: "aws:///" + g.Zone + "/i-", InstanceType: g.Labels["node.kubernetes.io/instance-type"],
			Spot: g.Labels["eks.amazonaws.com/capacityType"] == "SPOT"})
	}
	return l.ControlPlanes.SetNodeGroups(ctx, LocalName(name), out)
}

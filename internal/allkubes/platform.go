package allkubes

import (
	"context"
	"fmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/lazy"
	"github.com/nuv-dev/nuv/internal/report"
)

// providerKubeconfig is the provider of a cluster nuv did not make: it came as a kubeconfig.
const providerKubeconfig = "kubeconfig"

// markerEvidence is how each distribution is recognised on a node: its providerID scheme and its
// label key prefixes (the markers internal/kube uses to detect the type).
var markerEvidence = lazy.Value[map[string]nodeEvidence]{New: func() map[string]nodeEvidence {
	return map[string]nodeEvidence{
		kube.TypeEKS:  {"aws://", []string{"eks.amazonaws.com/"}},
		kube.TypeAKS:  {"azure://", []string{"kubernetes.azure.com/"}},
		kube.TypeGKE:  {"gce://", []string{"cloud.google.com/gke-"}},
		kube.TypeK3s:  {"k3s://", []string{"k3s.io/", "node.kubernetes.io/instance-type"}},
		kube.TypeM8s:  {"", []string{"microk8s.io/"}},
		kube.TypeOSH:  {"", []string{"node.openshift.io/"}},
		kube.TypeKind: {"kind://", []string{"node-role.kubernetes.io/control-plane"}},
		kube.TypeLKS:  {"linode://", []string{"lke.linode.com/"}},
		// a self-managed cluster's marker is a label value (nuv.dev/bootstrap=kubeadm), not a key
		// prefix; a cloud controller manager may give its nodes the cloud's providerIDs
		kube.TypeKubeadm: {"", []string{kube.LabelBootstrap}},
	}
}}

// nodeEvidence is what marks a node as one distribution's: its providerID scheme and label key prefixes.
type nodeEvidence struct {
	scheme string
	labels []string
}

// describePlatform says truthfully what the nodes are: who made the cluster (the nuv.dev/provider
// node label of nuv's own clusters, else "kubeconfig"; for a cluster a nuv cloud emulator made, the
// cloud's provider, eks, aks or gke, and the emulator; for a self-managed cluster nuv made on
// machines, its bootstrap, nuv.dev/bootstrap, and the emulator whose machines they are, if any),
// its flavor, how many nodes and how many of
// them kwok simulates, its type (override when given, else detected from the nodes) and the
// evidence the type rests on.
func describePlatform(nodes []corev1.Node, override, overrideSource string) (string, *report.Platform) {
	p := &report.Platform{Provider: providerKubeconfig, Nodes: len(nodes)}
	for i := range nodes {
		n := &nodes[i]
		if kube.Simulated(n) {
			p.Simulated++
		}
		if v := n.Labels[kube.LabelProvider]; v != "" && p.Provider == providerKubeconfig {
			p.Provider = v
			p.Flavor = n.Labels[kube.LabelFlavor]
			p.Bootstrap = n.Labels[kube.LabelBootstrap]
		}
	}
	if p.Emulated = kube.Emulated(nodes); p.Emulated != "" && p.Provider == "local" && p.Flavor != "" {
		// A cloud emulator's cluster: its nodes are a local cluster's (nuv.dev/provider=local, which
		// is what makes the deploy verbs run the operator on the host for it), but to the user it is
		// the cloud cluster they created: "eks emulated by aws", not "local/eks".
		p.Provider, p.Flavor = p.Flavor, ""
	}
	if override != "" {
		p.DetectedBy, p.Evidence = "override", overrideSource
		return override, p
	}
	typ := kube.DetectNodes(nodes)
	p.DetectedBy, p.Evidence = evidence(typ, nodes)
	return typ, p
}

// evidence finds the marker on the nodes that made DetectNodes answer typ.
func evidence(typ string, nodes []corev1.Node) (by, what string) {
	switch typ {
	case kube.TypeLocal:
		return "label", kube.LabelProvider + "=local"
	case kube.TypeGeneric:
		for i := range nodes {
			if nodes[i].Labels[kube.LabelFlavor] == kube.TypeGeneric {
				return "label", kube.LabelFlavor + "=generic"
			}
		}
		return "none", "no distribution marker on the nodes"
	}
	m, ok := markerEvidence.Get()[typ]
	if !ok {
		return "none", ""
	}
	for i := range nodes {
		if m.scheme != "" && strings.HasPrefix(nodes[i].Spec.ProviderID, m.scheme) {
			return "providerID", m.scheme
		}
	}
	var keys []string
	for i := range nodes {
		for k := range nodes[i].Labels {
			for _, pre := range m.labels {
				if strings.HasPrefix(k, pre) {
					keys = append(keys, k)
				}
			}
		}
	}
	if len(keys) > 0 {
		sort.Strings(keys)
		return "label", keys[0]
	}
	if typ == kube.TypeKind {
		return "node name", "<cluster>-control-plane"
	}
	return "none", fmt.Sprintf("no %s marker found", typ)
}

// ListNodes lists a cluster's nodes (bounded by ctx).
func ListNodes(ctx context.Context, cfg *rest.Config) ([]corev1.Node, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return list.Items, nil
}

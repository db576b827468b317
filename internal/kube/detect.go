package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Node labels nuv's local clusters put on every node.
const (
	LabelCluster  = "nuv.dev/cluster"
	LabelProvider = "nuv.dev/provider"
	LabelFlavor   = "nuv.dev/flavor"
	// LabelEmulated marks the nodes of a cluster a nuv cloud emulator made (an emulated GKE
	// cluster's nodes carry nuv.dev/emulated=gcp): its value names the emulator. Type detection
	// ignores it (an emulated cluster detects by the distribution's own markers, as a real one
	// does); reports use it to say which cells ran on an emulated cloud cluster.
	LabelEmulated = "nuv.dev/emulated"
	// LabelBootstrap names what bootstrapped the nodes of a self-managed cluster nuv made on
	// machines (nuv.dev/bootstrap=kubeadm, set at join time beside nuv.dev/provider=aws): the
	// marker of type kubeadm. It comes before the clouds' markers, since such a cluster may run a
	// cloud's controller manager (aws:// providerIDs) and is still no EKS.
	LabelBootstrap = "nuv.dev/bootstrap"
)

// AnnotationKwokNode marks the nodes kwok manages (no kubelet, no containers): simulated nodes,
// such as a local cluster's.
const AnnotationKwokNode = "kwok.x-k8s.io/node"

// Simulated reports whether n is a simulated node (kwok's): pods bound to it never run.
func Simulated(n *corev1.Node) bool {
	_, ok := n.Annotations[AnnotationKwokNode]
	return ok
}

// Emulated returns the emulator that made the cluster of nodes (the LabelEmulated value of its
// first node that has one), "" for a real cluster.
func Emulated(nodes []corev1.Node) string {
	for i := range nodes {
		if v := nodes[i].Labels[LabelEmulated]; v != "" {
			return v
		}
	}
	return ""
}

// marker recognises one distribution from a node.
type marker struct {
	kubeType       string
	labelPrefixes  []string // any label key with one of these prefixes
	labels         map[string]string
	providerPrefix []string // spec.providerID prefixes
}

// markers are checked in this order; the first distribution any node matches wins.
var markers = []marker{
	{kubeType: TypeKubeadm, labels: map[string]string{LabelBootstrap: "kubeadm"}},
	{kubeType: TypeEKS, labelPrefixes: []string{"eks.amazonaws.com/"}, providerPrefix: []string{"aws://"}},
	{kubeType: TypeAKS, labelPrefixes: []string{"kubernetes.azure.com/"}, providerPrefix: []string{"azure://"}},
	{kubeType: TypeGKE, labelPrefixes: []string{"cloud.google.com/gke-"}, providerPrefix: []string{"gce://"}},
	{kubeType: TypeK3s, labelPrefixes: []string{"k3s.io/"}, labels: map[string]string{"node.kubernetes.io/instance-type": "k3s"}, providerPrefix: []string{"k3s://"}},
	{kubeType: TypeM8s, labelPrefixes: []string{"microk8s.io/"}},
	{kubeType: TypeOSH, labelPrefixes: []string{"node.openshift.io/"}},
	{kubeType: TypeKind, providerPrefix: []string{"kind://"}},
	{kubeType: TypeLKS, labelPrefixes: []string{"lke.linode.com/"}, providerPrefix: []string{"linode://"}},
}

func (m marker) matches(n *corev1.Node) bool {
	for k, v := range n.Labels {
		for _, p := range m.labelPrefixes {
			if strings.HasPrefix(k, p) {
				return true
			}
		}
		if want, ok := m.labels[k]; ok && want == v {
			return true
		}
	}
	for _, p := range m.providerPrefix {
		if strings.HasPrefix(n.Spec.ProviderID, p) {
			return true
		}
	}
	return false
}

// DetectNodes returns the cluster type the nodes reveal: the first distribution whose markers
// (labels, spec.providerID prefix) any node carries, in Types order; else local when a node has
// nuv.dev/provider=local (generic when it was created with --flavor generic); else generic. A kind cluster without providerIDs (older kind) is
// recognised by its "<name>-control-plane" node with the control-plane role and no nuv label.
func DetectNodes(nodes []corev1.Node) string {
	for _, m := range markers {
		for i := range nodes {
			if m.matches(&nodes[i]) {
				return m.kubeType
			}
		}
	}
	for i := range nodes {
		n := &nodes[i]
		if n.Labels[LabelProvider] == "local" {
			if n.Labels[LabelFlavor] == TypeGeneric {
				return TypeGeneric
			}
			return TypeLocal
		}
	}
	for i := range nodes {
		n := &nodes[i]
		_, cp := n.Labels["node-role.kubernetes.io/control-plane"]
		if cp && strings.HasSuffix(n.Name, "-control-plane") && n.Labels[LabelProvider] == "" {
			return TypeKind
		}
	}
	return TypeGeneric
}

// Detect lists the cluster's nodes and returns DetectNodes of them. The caller bounds it with ctx.
func Detect(ctx context.Context, cfg *rest.Config) (string, error) {
	nodes, err := listNodes(ctx, cfg)
	if err != nil {
		return "", err
	}
	return DetectNodes(nodes), nil
}

// DetectCluster returns the type of c: its override when there is one, else Detect on its API
// server, which is then remembered (so tasks get KUBE without a network call).
func DetectCluster(ctx context.Context, project string, c Cluster, getenv func(string) string) (string, error) {
	if c.Err != nil {
		return "", fmt.Errorf("%s: %w", c.Name, c.Err)
	}
	if t, err := Override(project, c.Name, getenv); err != nil || t != "" {
		return t, err
	}
	cfg, err := RESTConfig(c.Path)
	if err != nil {
		return "", err
	}
	t, err := Detect(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("detect the type of %s: %w", c.Name, err)
	}
	_ = Remember(project, c.Name, c.Path, t)
	return t, nil
}

// listNodes lists the cluster's nodes with a plain GET through client-go's transport (its
// credentials, exec plugins, TLS and timeout), not a typed clientset: package kube stays free of
// the clientset and its scheme, which the slim front would otherwise link and initialise.
func listNodes(ctx context.Context, cfg *rest.Config) ([]corev1.Node, error) {
	code, body, err := Get(ctx, cfg, "/api/v1/nodes", nil)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	if code != http.StatusOK {
		var st metav1.Status
		if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
			return nil, fmt.Errorf("list nodes: %w", &apierrors.StatusError{ErrStatus: st})
		}
		return nil, fmt.Errorf("list nodes: %w", apierrors.NewGenericServerResponse(code, http.MethodGet,
			schema.GroupResource{Resource: "nodes"}, "", strings.TrimSpace(string(body)), 0, false))
	}
	var list corev1.NodeList
	if err := json.Unmarshal(body, &list); err != nil {
		host := cfg.Host
		if base, _, err := rest.DefaultServerUrlFor(cfg); err == nil {
			host = base.Host
		}
		return nil, fmt.Errorf("list nodes: decode the answer of %s: %w", host, err)
	}
	return list.Items, nil
}

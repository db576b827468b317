package emulator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cli"
	clusterpkg "github.com/nuv-dev/nuv/internal/cluster"
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
	info, err := l.Provider.Ensure(ctx, local.CreateOptions{Name: name, Nodes: 1, Flavor: "eks", TokenWebhook: cp.TokenWebhook})
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
	if errors.Is(err, clusterpkg.ErrNotFound) {
		return nil
	}
	return err
}

// nodeGroupLabel is the label EKS puts on the nodes of a managed node group.
const nodeGroupLabel = "eks.amazonaws.com/nodegroup"

// SetNodeGroups creates and deletes nodes (kwok-managed, so they become Ready) so that each group
// has Count nodes named <group>-<n>, labelled and tainted as the group says, and no other node remains.
func (l *LocalClusters) SetNodeGroups(ctx context.Context, name string, groups []NodeGroup) error {
	ln := LocalName(name)
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(l.Provider.Project, "clusters", ln+".kubeconfig"))
	if err != nil {
		return fmt.Errorf("kubeconfig of local cluster %s: %w", ln, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes of %s: %w", ln, err)
	}
	want := map[string]*corev1.Node{}
	for _, g := range groups {
		for i := 0; i < g.Count; i++ {
			n := nodeOf(ln, g, i)
			want[n.Name] = n
		}
	}
	have := map[string]bool{}
	for _, n := range nodes.Items {
		if w, ok := want[n.Name]; ok {
			have[n.Name] = true
			if !sameLabels(n.Labels, w.Labels) || !sameTaints(n.Spec.Taints, w.Spec.Taints) {
				n.Labels, n.Spec.Taints = w.Labels, w.Spec.Taints
				if _, err := cs.CoreV1().Nodes().Update(ctx, &n, metav1.UpdateOptions{}); err != nil {
					return fmt.Errorf("update node %s: %w", n.Name, err)
				}
			}
			continue
		}
		if err := cs.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete node %s: %w", n.Name, err)
		}
	}
	for nm, n := range want {
		if have[nm] {
			continue
		}
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", nm, err)
		}
	}
	return nil
}

// nodeOf is node i of group g: the name and providerID are stable so a resync changes nothing.
func nodeOf(cluster string, g NodeGroup, i int) *corev1.Node {
	h := stableHex(fmt.Sprintf("%s/%s/%d", cluster, g.Name, i), 4)
	a, _ := strconv.ParseUint(h[:2], 16, 8)
	b, _ := strconv.ParseUint(h[2:], 16, 8)
	name := fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", a, b)
	// The labels of a node of an eks-flavored local cluster, then the group's.
	labels := map[string]string{
		clusterpkg.LabelCluster: cluster, clusterpkg.LabelProvider: "local", clusterpkg.LabelFlavor: "eks",
		"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok", "eks.amazonaws.com/compute-type": "ec2",
	}
	for k, v := range g.Labels {
		labels[k] = v
	}
	labels["kubernetes.io/hostname"] = name
	var taints []corev1.Taint
	for _, t := range g.Taints {
		taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}},
		Spec:       corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///%s/i-0%s", g.Zone, stableHex(fmt.Sprintf("%s/%s/%d", cluster, g.Name, i), 16)), Taints: taints},
		Status:     corev1.NodeStatus{Capacity: res, Allocatable: res},
	}
}

func sameLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func sameTaints(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Value != b[i].Value || a[i].Effect != b[i].Effect {
			return false
		}
	}
	return true
}

package kit

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// SpecNodes is how many nodes the node groups of c ask for: what NodesReady wants registered.
func SpecNodes(c *spec.Cluster) int {
	n := 0
	for _, g := range c.Spec.NodeGroups {
		n += g.Size()
	}
	return n
}

// NodesReady checks once, through the kubeconfig at path (the one `apply` writes for its users, so
// its server is where they reach the API: the load balancer of a self-managed cluster), that the
// API answers /readyz, that at least want nodes are registered and that every registered node is
// Ready. The error says what is not so yet ("3 of 4 nodes Ready (bsm-workers-0 NotReady)"): it is
// the status a wait shows.
func NodesReady(ctx context.Context, path string, want int) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if _, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
		return fmt.Errorf("the API at %s does not answer /readyz: %w", cfg.Host, err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list the nodes at %s: %w", cfg.Host, err)
	}
	return readyCount(nodes.Items, want)
}

// readyCount is NodesReady's verdict on the listed nodes.
func readyCount(nodes []corev1.Node, want int) error {
	var notReady []string
	ready := 0
	for _, n := range nodes {
		if nodeReady(n) {
			ready++
		} else {
			notReady = append(notReady, n.Name+" NotReady")
		}
	}
	sort.Strings(notReady)
	if len(notReady) == 0 && ready >= want {
		return nil
	}
	msg := fmt.Sprintf("%d of %d nodes Ready", ready, max(want, len(nodes)))
	if len(notReady) > 0 {
		msg += " (" + strings.Join(notReady, ", ") + ")"
	}
	if missing := want - len(nodes); missing > 0 {
		msg += fmt.Sprintf(", %d not registered yet", missing)
	}
	return fmt.Errorf("%s", msg)
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ReadyCount counts the Ready nodes through the kubeconfig at path (its exec credential
// included); -1 when the API does not answer within a few seconds.
func ReadyCount(ctx context.Context, path string) int {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return -1
	}
	cfg.Timeout = 5 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return -1
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return -1
	}
	n := 0
	for _, node := range nodes.Items {
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

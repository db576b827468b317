// Package kubeclient holds the inventory's helpers that need client-go's typed clientset. They
// live apart from package kube so that the slim front binary, which links kube for `nuv kube`,
// does not link the clientset and initialise its scheme.
package kubeclient

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/kube"
)

// LocalClusterName returns the name of the nuv local cluster cs talks to, or "" when no node
// carries nuv.dev/provider=local. A flavored local cluster detects as eks, kind, ... but still fakes
// its pods and pulls nothing, so the deploy and image verbs treat it as local whatever its type.
func LocalClusterName(ctx context.Context, cs kubernetes.Interface) (string, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: kube.LabelProvider + "=local", Limit: 1})
	if err != nil {
		return "", fmt.Errorf("list nodes: %w", err)
	}
	if len(nodes.Items) == 0 {
		return "", nil
	}
	name := nodes.Items[0].Labels[kube.LabelCluster]
	if name == "" {
		name = kube.TypeLocal
	}
	return name, nil
}

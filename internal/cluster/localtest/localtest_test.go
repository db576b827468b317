package localtest_test

import (
	"context"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func TestIntegrationStart(t *testing.T) {
	c := localtest.Start(t, localtest.Options{Nodes: 2})
	cs := kubernetes.NewForConfigOrDie(c.Config)
	nodes, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 2 {
		t.Fatalf("nodes = %d, want 2", len(nodes.Items))
	}
}

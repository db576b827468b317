//go:build kind

package publish

import (
	"context"
	"os"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
)

// TestIntegrationKindLoad loads a single-platform image into a real kind cluster. No kindest/node
// image can be had on nuv's CI machines, so the test is built only with the "kind" build tag (it is
// not part of ./... and never reports a skip there):
//
//	NUV_TEST_KIND_CLUSTER=kind go test -tags kind -run KindLoad ./internal/image/publish
func TestIntegrationKindLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a kind cluster")
	}
	name_ := os.Getenv("NUV_TEST_KIND_CLUSTER")
	if name_ == "" {
		t.Fatal("set NUV_TEST_KIND_CLUSTER to the name of a running kind cluster")
	}
	idx := twoPlatformIndex(t)
	ref := name.MustParseReference("example.com/nuv/kind-load:test")
	if _, err := (&Kind{Cluster: name_}).Publish(context.Background(), idx, ref); err != nil {
		t.Fatal(err)
	}
	opt, err := cluster.DetectNodeProvider()
	if err != nil {
		t.Fatal(err)
	}
	ns, err := cluster.NewProvider(opt).ListInternalNodes(name_)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if id, err := nodeutils.ImageID(n, ref.String()); err != nil || id == "" {
			t.Errorf("node %s lacks %s: %v", n, ref, err)
		}
	}
}

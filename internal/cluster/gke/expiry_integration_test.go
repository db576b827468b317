package gke_test

import (
	"context"
	"maps"
	"strconv"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// gkeGC is the GKE emulator as clustertest.GCByTag drives it: the marks are the cluster's resource
// labels (nuv-expires-at in Unix seconds, nuv-owner).
type gkeGC struct{ w *world }

func (g gkeGC) Provider() string { return "gke" }
func (g gkeGC) Spec(t *testing.T, name, ttl string) string {
	return g.w.spec(name, `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: `+name+`}
spec:
  provider: gke
  ttl: `+ttl+`
  nodeGroups:
  - {name: pool, count: 1, instanceType: e2-standard-4}
  gke: {project: `+g.w.gcpProject+`, location: us-central1-a}
`)
}
func (g gkeGC) Nuv(t *testing.T, home string, args ...string) (string, string, int) {
	return clustertest.Output(t, clustertest.Command(asNuv, []string{"NUV_HOME=" + home}, args...))
}
func (g gkeGC) path(name string) string {
	return "projects/" + g.w.gcpProject + "/locations/us-central1-a/clusters/" + name
}
func (g gkeGC) get(name string) (*containerpb.Cluster, bool) {
	gc, err := g.w.conn.Client.GetCluster(context.Background(), &containerpb.GetClusterRequest{Name: g.path(name)})
	return gc, err == nil
}
func (g gkeGC) Marks(t *testing.T, name string) (spec.Marks, bool) {
	gc, ok := g.get(name)
	if !ok {
		return spec.Marks{}, false
	}
	m, err := kit.MarksOf(gc.ResourceLabels)
	if err != nil {
		t.Fatal(err)
	}
	return m, true
}

// setLabels changes the cluster's labels through SetLabels and waits for its operation.
func (g gkeGC) setLabels(t *testing.T, name string, edit func(map[string]string)) {
	gc, _ := g.get(name)
	l := maps.Clone(gc.ResourceLabels)
	edit(l)
	if _, err := g.w.conn.Client.SetLabels(context.Background(), &containerpb.SetLabelsRequest{Name: g.path(name), ResourceLabels: l, LabelFingerprint: gc.LabelFingerprint}); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if gc, ok := g.get(name); ok && gc.Status == containerpb.Cluster_RUNNING {
			return
		}
		if i == 300 {
			t.Fatalf("cluster %s still busy after SetLabels", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
func (g gkeGC) Expire(t *testing.T, name string, at time.Time) {
	g.setLabels(t, name, func(l map[string]string) { l[kit.LabelExpiresAt] = strconv.FormatInt(at.Unix(), 10) })
}
func (g gkeGC) Tag(t *testing.T, name string, on bool) {
	g.setLabels(t, name, func(l map[string]string) {
		if on {
			l[kit.LabelCluster] = name
		} else {
			delete(l, kit.LabelCluster)
		}
	})
}

// TestIntegrationGKEGCByTag: clusters that expire, in the GKE emulator (clustertest.GCByTag): the
// expiry (Unix seconds) and owner as the cluster's resource labels, moved by extend; a cluster
// whose record was lost found by its labels and deleted once its expiry passed, by one of two
// concurrent gcs; another store's cluster, and one without nuv's label, left alone.
func TestIntegrationGKEGCByTag(t *testing.T) {
	if testing.Short() {
		t.Skip("makes two emulated GKE clusters (local control planes); skipped under -short")
	}
	clustertest.GCByTag(t, gkeGC{newWorld(t)})
}

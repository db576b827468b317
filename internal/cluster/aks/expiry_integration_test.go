package aks_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	acs "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// aksGC is the Azure emulator as clustertest.GCByTag drives it: the marks are the managed
// cluster's tags (its resource group carries them too).
type aksGC struct {
	env      map[string]string
	project  string
	clusters *acs.ManagedClustersClient
}

func (g aksGC) Provider() string { return "aks" }
func (g aksGC) Spec(t *testing.T, name, ttl string) string {
	f := filepath.Join(g.project, name+".yaml")
	body := `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: ` + name + `}
spec:
  provider: aks
  region: eastus
  ttl: ` + ttl + `
  kubernetesVersion: "1.36"
  nodeGroups:
  - {name: system, count: 1, instanceType: Standard_D2s_v3}
`
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}
func (g aksGC) Nuv(t *testing.T, home string, args ...string) (string, string, int) {
	vars := []string{"NUV_HOME=" + home, "NUV_PROJECT=" + g.project}
	for k, v := range g.env {
		vars = append(vars, k+"="+v)
	}
	return clustertest.Output(t, clustertest.Command(asNuv, vars, args...))
}
func (g aksGC) get(name string) (*acs.ManagedCluster, bool) {
	r, err := g.clusters.Get(context.Background(), name+"-rg", name, nil)
	if err != nil {
		return nil, false
	}
	return &r.ManagedCluster, true
}
func (g aksGC) Marks(t *testing.T, name string) (spec.Marks, bool) {
	mc, ok := g.get(name)
	if !ok {
		return spec.Marks{}, false
	}
	tags := map[string]string{}
	for k, v := range mc.Tags {
		tags[k] = *v
	}
	m, err := kit.MarksOf(tags)
	if err != nil {
		t.Fatal(err)
	}
	return m, true
}
func (g aksGC) setTags(t *testing.T, name string, edit func(map[string]*string)) {
	mc, _ := g.get(name)
	tags := map[string]*string{}
	for k, v := range mc.Tags {
		tags[k] = v
	}
	edit(tags)
	p, err := g.clusters.BeginUpdateTags(context.Background(), name+"-rg", name, acs.TagsObject{Tags: tags}, nil)
	if err == nil {
		_, err = p.PollUntilDone(context.Background(), nil)
	}
	if err != nil {
		t.Fatal(err)
	}
}
func (g aksGC) Expire(t *testing.T, name string, at time.Time) {
	g.setTags(t, name, func(m map[string]*string) { m[kit.TagExpiresAt] = to.Ptr(at.Format(time.RFC3339)) })
}
func (g aksGC) Tag(t *testing.T, name string, on bool) {
	g.setTags(t, name, func(m map[string]*string) {
		if on {
			m[kit.TagCluster] = to.Ptr(name)
		} else {
			delete(m, kit.TagCluster)
		}
	})
}

// TestIntegrationAKSGCByTag: clusters that expire, in the Azure emulator (clustertest.GCByTag):
// the expiry and owner as tags of the managed cluster, moved by extend; a cluster whose record
// was lost found by tag and deleted once its expiry passed, by one of two concurrent gcs; another
// store's cluster, and one without nuv's tag, left alone.
func TestIntegrationAKSGCByTag(t *testing.T) {
	env, _, _ := azureEnv(t)
	clustertest.GCByTag(t, aksGC{env: env, project: t.TempDir(), clusters: clustersClient(t, env)})
}

package allkubes

import (
	"context"
	"os"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kind"
	"github.com/nuv-dev/nuv/internal/cluster/kind/kindtest"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/report"
)

// TestIntegrationAllKubesKindAndLocal runs one all-kubes matrix over a kind cluster (real nodes:
// containers of the project's dockerd, the offline node image) and a local cluster (kwok nodes):
// one report in which the kind cell is typed kind, made by the kind provider and marked real
// nodes, and the local cell simulated; each cell counts the one node its cluster has (a cluster
// without nodes would be marked empty, not real).
func TestIntegrationAllKubesKindAndLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	ctx := context.Background()
	if _, err := kind.DetectRuntime(ctx, os.Getenv); err != nil {
		t.Fatalf("%v\n(hack/test.sh starts nuv's own dockerd: `eval \"$(hack/dockerd.sh env)\"`)", err)
	}
	exe := buildNuv(t)
	project := testProject(t, suites)
	home := t.TempDir()
	localtest.Start(t, localtest.Options{Name: "local1", Project: project, Home: home})

	const name = "nuv-kind-ak"
	p := kindtest.Provider(t, home, project, localtest.Logger(t))
	c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: name},
		Spec: spec.Spec{Provider: "kind", KubernetesVersion: "1.36"}}
	d, err := p.Desired(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := p.Execute(context.Background(), c, cluster.Change{Action: cluster.Delete, Key: d[0].Key(), Actual: &d[0]}, nil); err != nil {
			t.Errorf("delete %s: %v", name, err)
		}
	})
	if _, err := p.Execute(ctx, c, cluster.Change{Action: cluster.Create, Key: d[0].Key(), Desired: &d[0]}, func(cluster.Resource) error { return nil }); err != nil {
		t.Fatal(err)
	}

	r := allKubes(t, exe, project, home, nil, "--", "itest", "T=isolation")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	rep := checkReport(t, r.dir, []string{"local1", name})
	res := byCluster(rep)
	k, l := res[name], res["local1"]
	if k.Status != report.Passed || k.Type != "kind" || k.Platform == nil || k.Platform.Provider != "kind" || k.Platform.NodeKind() != report.NodesReal || k.Platform.Nodes != 1 || k.Platform.Simulated != 0 {
		t.Errorf("kind cell: %s type=%s platform=%+v: %s", k.Status, k.Type, k.Platform, k.Message)
	}
	if l.Status != report.Passed || l.Type != "local" || l.Platform == nil || l.Platform.NodeKind() != report.NodesSimulated || l.Platform.Nodes != 1 || l.Platform.Simulated != 1 {
		t.Errorf("local cell: %s type=%s platform=%+v: %s", l.Status, l.Type, l.Platform, l.Message)
	}
	html, err := os.ReadFile(r.dir + "/" + report.HTMLFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report %s (%d bytes of HTML)", r.dir, len(html))
}

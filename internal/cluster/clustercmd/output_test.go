package clustercmd

import (
	"bytes"
	"context"
	"errors"
	"github.com/nuv-dev/nuv/internal/golden"
	"path/filepath"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// goldenForm compares got with testdata/NAME (go test -update rewrites it).
func goldenForm(t *testing.T, name, got string) {
	t.Helper()
	if !golden.Check(t, filepath.Join("testdata", "output", name), got, *update) {
		t.FailNow()
	}
}

// TestOutputForms pins every -o form of the verbs that list or show clusters and state records
// (list, status, state list, state show) with a golden file each: table and wide for people,
// json and yaml with stable field names for machines.
func TestOutputForms(t *testing.T) {
	// Times print in the local zone in tables; pin it.
	loc := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = loc })
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	infos := []cluster.Info{
		{Name: "dev", Provider: "local", Status: cluster.Running, APIURL: "https://127.0.0.1:40001", Kubeconfig: "/home/dev/.nuv/clusters/dev/kubeconfig",
			Flavor: "generic", Version: "1.36.3", Nodes: 3, NodesReady: 3, Created: now.Add(-90 * time.Second), Phase: "running",
			Binaries: "downloaded from https://dl.k8s.io on 2026-11-30, SHA-256 verified", Durability: "safe (etcd fsyncs every write)",
			Components: []cluster.Component{{Name: "etcd", PID: 10, Running: true, Port: 40000}, {Name: "kube-apiserver", PID: 11, Running: true, Port: 40001}}},
		{Name: "ha", Provider: "local", Status: cluster.Degraded, APIURL: "https://127.0.0.1:40100", Nodes: 1, NodesReady: 1, HA: true, Created: now.Add(-3 * time.Hour),
			Components: []cluster.Component{{Name: "etcd-0", Running: true}, {Name: "etcd-1"}}},
		{Name: "broken", Provider: "local", Status: cluster.Corrupt, NodesReady: -1, Err: errors.New("cluster state is corrupt")},
		// A cloud's answer from nuv's cache, two minutes old: STATUS shows its age, -o json|yaml cachedAt.
		{Name: "prod", Provider: "eks", Status: cluster.Running, APIURL: "https://ABC.gr7.eu-west-1.eks.amazonaws.com", Flavor: "eks", Version: "1.31", HA: true,
			Nodes: 2, NodesReady: 2, Created: now.Add(-50 * time.Hour), CachedAt: now.Add(-2 * time.Minute),
			Components: []cluster.Component{{Name: "control-plane (ACTIVE)", Running: true}}},
	}
	created := time.Date(2026, 11, 29, 8, 30, 0, 0, time.UTC)
	rec := &state.Record{Name: "dev", Provider: "eks", Phase: "running", Created: created, Updated: created.Add(time.Hour), Generation: 4,
		Resources: []cluster.Resource{
			{Kind: "cluster", Name: "dev", ID: "arn:aws:eks:eu-west-1:123456789012:cluster/dev", Fields: map[string]string{"version": "1.31", "region": "eu-west-1"}},
			{Kind: "node-group", Name: "default", Fields: map[string]string{"count": "2", "instanceType": "m5.large"}},
		}}
	lock := &state.Holder{Host: "build-7", PID: 4242, Command: "nuv cluster apply -f clusters/specs/eks.yaml", Since: created.Add(2 * time.Hour)}
	broken := &state.Record{Name: "half", Provider: "kind", Phase: "failed", Error: "create node-group/default:\nimage pull failed", Created: created, Updated: created}
	entries := []stateEntry{entryOf(rec, lock), entryOf(broken, nil)}

	for _, format := range cli.ListFormats {
		o := &cli.OutputOption{Format: format}
		var list, status, stList, stShow bytes.Buffer
		if err := writeList(&list, o, infos, now); err != nil {
			t.Fatal(err)
		}
		if err := writeStatusAs(&status, o, infos[0], now); err != nil {
			t.Fatal(err)
		}
		if err := writeStateList(&stList, o, "dir:/home/dev/.nuv/state", entries); err != nil {
			t.Fatal(err)
		}
		if err := writeStateShow(&stShow, o, rec, lock); err != nil {
			t.Fatal(err)
		}
		goldenForm(t, "list."+format, list.String())
		goldenForm(t, "status."+format, status.String())
		goldenForm(t, "state-list."+format, stList.String())
		goldenForm(t, "state-show."+format, stShow.String())
	}
}

// TestPlanOutputForms: plan's machine forms go through the one output helper; -o json prints the
// very bytes engine.WritePlansJSON did before, and -o yaml the same fields.
func TestPlanOutputForms(t *testing.T) {
	env, out, _ := testEnv(t, nil)
	f := writeSpec(t, env.Dir, `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: alpha}
spec:
  provider: local
  nodeGroups:
  - {name: web, count: 2}
`)
	if err := Run(context.Background(), env, []string{"plan", "-f", f, "-o", "json"}); err != nil {
		t.Fatal(err)
	}
	c, err := newCmdCtx(env)
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.engineFor("", "test")
	if err != nil {
		t.Fatal(err)
	}
	specs, err := readSpecs("plan", f, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Plan(context.Background(), specs[0])
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := engine.WritePlansJSON(&want, []*cluster.Plan{p}); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Fatalf("plan -o json:\n%s\nwant (engine.WritePlansJSON):\n%s", out, want.String())
	}
	out.Reset()
	if err := Run(context.Background(), env, []string{"plan", "-f", f, "-o", "yaml"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"- changes:\n", "  - action: create\n", "    resource: node-group/web\n", "  cluster: alpha\n", "  provider: local\n"} {
		if !bytes.Contains(out.Bytes(), []byte(s)) {
			t.Errorf("plan -o yaml lacks %q:\n%s", s, out)
		}
	}
}

// TestListExpiresColumn: when a cluster has a time to live, list shows EXPIRES (in N, expired N
// ago, - for the others) in the table and wide forms, and expiresAt in the machine forms.
func TestListExpiresColumn(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	soon, past := now.Add(3*time.Hour+10*time.Minute), now.Add(-20*time.Minute)
	infos := []cluster.Info{
		{Name: "ci-1", Provider: "local", Status: cluster.Running, APIURL: "https://127.0.0.1:40001", Nodes: 1, NodesReady: 1, Created: now.Add(-time.Hour), ExpiresAt: &soon},
		{Name: "ci-2", Provider: "kind", Status: cluster.Running, Nodes: 2, NodesReady: 2, Created: now.Add(-5 * time.Hour), ExpiresAt: &past},
		{Name: "dev", Provider: "local", Status: cluster.Stopped, Nodes: 1, NodesReady: -1, Created: now.Add(-72 * time.Hour)},
	}
	for _, format := range cli.ListFormats {
		var b bytes.Buffer
		if err := writeList(&b, &cli.OutputOption{Format: format}, infos, now); err != nil {
			t.Fatal(err)
		}
		goldenForm(t, "list-expires."+format, b.String())
	}
}

package aks_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/aks"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// BenchmarkPlan is `nuv cluster plan` of a 2-pool AKS spec against the emulator (credentials,
// the resource group, the cluster, the service's regions, versions and VM sizes), cluster absent.
func BenchmarkPlan(b *testing.B) {
	env, _, _ := azureEnv(b)
	p := &aks.Provider{Project: b.TempDir(), Getenv: func(k string) string { return env[k] }}
	e := &engine.Engine{Providers: map[string]cluster.Provider{"aks": p}, Store: state.Dir{Path: filepath.Join(b.TempDir(), "state")}}
	c := decode(b, aksSpec(2, "1.35", "Standard_D4s_v3"))
	ctx := context.Background()
	if _, err := e.Plan(ctx, c); err != nil { // credentials and clients, once
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Plan(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/plan")
}

// BenchmarkEmulatedCreate is an apply of a 2-pool AKS spec against the emulator (ARM's long-running
// operations over a local control plane) to a written kubeconfig with every node Ready, then a
// delete; its peer in the same run is the local provider creating the same node groups.
func BenchmarkEmulatedCreate(b *testing.B) {
	env, srv, _ := azureEnv(b)
	_ = srv
	p := &aks.Provider{Project: b.TempDir(), Getenv: func(k string) string { return env[k] }, Poll: 100 * time.Millisecond}
	e := &engine.Engine{Providers: map[string]cluster.Provider{"aks": p}, Store: state.Dir{Path: filepath.Join(b.TempDir(), "state")}}
	lp := local.Provider{Home: b.TempDir(), Project: b.TempDir()}
	le := &engine.Engine{Providers: map[string]cluster.Provider{"local": lp}, Store: state.Dir{Path: filepath.Join(b.TempDir(), "state")}}
	c := decode(b, aksSpec(2, "1.36", "Standard_D4s_v3"))
	lc := decode(b, `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: bl}
spec:
  provider: local
  nodeGroups:
  - {name: system, count: 1}
  - {name: user, count: 2, labels: {tier: app}, taints: ["dedicated=app:NoSchedule"]}
`)
	ctx := context.Background()
	var create, del, lcreate time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		create += timed(b, func() error { _, err := e.Apply(ctx, c, engine.ApplyOptions{}); return err })
		del += timed(b, func() error { _, err := e.Delete(ctx, "az1"); return err })
		lcreate += timed(b, func() error { _, err := le.Apply(ctx, lc, engine.ApplyOptions{}); return err })
		timed(b, func() error { _, err := le.Delete(ctx, "bl"); return err })
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(create.Seconds()/n, "s/aks-create")
	b.ReportMetric(del.Seconds()/n, "s/aks-delete")
	b.ReportMetric(lcreate.Seconds()/n, "s/local-create")
	b.ReportMetric(create.Seconds()/lcreate.Seconds(), "aks/local")
}

func timed(b *testing.B, f func() error) time.Duration {
	start := time.Now()
	if err := f(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

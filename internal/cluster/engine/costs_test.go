package engine

import (
	"bytes"
	"context"
	"flag"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/history"
	"github.com/nuv-dev/nuv/internal/cluster/pricing"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	awsemu "github.com/nuv-dev/nuv/internal/emulator/aws"
	"github.com/nuv-dev/nuv/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files")

// pricedMem is the in-memory provider whose node groups run machines of their spec's instance
// type in AWS's us-east-1.
type pricedMem struct{ *memProvider }

func (pricedMem) Machines(c *spec.Cluster, r cluster.Resource) []cluster.Machines {
	if r.Kind != "group" {
		return nil
	}
	n, _ := strconv.Atoi(r.Fields["count"])
	for _, g := range c.Spec.NodeGroups {
		if g.Name == r.Name {
			return []cluster.Machines{{Cloud: "aws", Region: "us-east-1", Type: g.InstanceType, Count: n}}
		}
	}
	return nil
}

// TestPlanCosts: a plan's cost estimate, beside its expected apply time, prices each node group
// through the Price List API (the AWS emulator's, with the SDK), says "no price" with the reason
// for a type the list lacks, and totals what it priced; a provider that runs nothing priced
// (local, kind) prints no estimate.
func TestPlanCosts(t *testing.T) {
	ctx := context.Background()
	a, err := awsemu.New(awsemu.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- awsemu.Serve(sctx, ln, a) }()
	t.Cleanup(func() { stop(); <-done })
	addr := ln.Addr().String()
	key, secret, _, _ := a.Credentials()
	t.Setenv("AWS_ACCESS_KEY_ID", key)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))

	m := newMem()
	e, _ := newEngine(t, m)
	e.Providers["mem"] = pricedMem{m}
	e.History = history.Dir{Path: filepath.Join(t.TempDir(), "history")}
	e.Prices = &pricing.Book{Sources: map[string]pricing.Source{"aws": &pricing.AWS{Endpoint: "http://" + addr}}}

	c := specOf("demo", 3, 1, 2)
	c.Spec.NodeGroups[0].InstanceType = "m5.large"
	c.Spec.NodeGroups[1].InstanceType = "m5.huge"
	c.Spec.NodeGroups[2].InstanceType = "t3.medium"
	p, err := e.Plan(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	est, total, err := e.Estimates(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WriteEstimates(&b, p, est, total)
	WriteCosts(&b, p, e.Costs(ctx, c, p), time.Now())
	golden.Check(t, filepath.Join("testdata", "plan-costs.golden"), b.String(), *update)

	// The same plan of a provider that is not priced: the apply time only.
	e.Providers["mem"] = m
	b.Reset()
	WriteCosts(&b, p, e.Costs(ctx, c, p), time.Now())
	if b.Len() != 0 {
		t.Fatalf("an estimate for a provider that runs nothing priced:\n%s", b.String())
	}
}

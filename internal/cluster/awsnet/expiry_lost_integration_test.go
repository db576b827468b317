package awsnet_test

import (
	"context"
	"errors"
	"github.com/nuv-dev/nuv/internal/cluster/awsmachines"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awstest"
	"github.com/nuv-dev/nuv/internal/cluster/eks"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// TestIntegrationGCLostEarly: applies that died early (the CI job killed) leave a VPC and
// little else, and their records are lost with the CI machine. gc finds them by their VPC's tags
// all the same, each under the provider that made it (an EKS cluster whose EKS cluster was never
// made, a self-managed one killed before its machines: told apart by the machines' security
// group; its machine image is looked up on Docker), and deletes everything tagged for them; an unexpired one is left alone.
func TestIntegrationGCLostEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("the self-managed provider looks up its machine image on the Docker daemon; skipped under -short")
	}
	emu := awstest.StartEmulator(t, 50*time.Millisecond)
	log := cli.NewLogger(testWriter{t: t}, 0)
	managed := eks.New(t.TempDir(), "nuv", emu.Getenv, log)
	machines := awsmachines.New(t.TempDir(), "nuv", emu.Getenv, log)
	machines.Home = t.TempDir()
	store := state.Dir{Path: t.TempDir()}
	eng := &engine.Engine{Providers: map[string]cluster.Provider{eks.Name: managed, awsmachines.Name: machines}, Store: store, Out: testWriter{t: t}}
	ctx := context.Background()

	// dies applies c and stops it (as a killed CI job would) once the change whose key is last
	// is done; then its record is lost.
	dies := func(doc, last string) {
		t.Helper()
		c := awstest.Parse(t, doc)
		actx, stop := context.WithCancel(ctx)
		defer stop()
		eng.AfterStep = func(_ int, ch cluster.Change) {
			if ch.Key == last {
				stop()
			}
		}
		_, err := eng.Apply(actx, c, engine.ApplyOptions{})
		eng.AfterStep = nil
		if err == nil || !strings.Contains(err.Error(), "context canceled") {
			t.Fatalf("apply of %s: %v, want it stopped after %s", c.Metadata.Name, err, last)
		}
		if err := store.Remove(ctx, c.Metadata.Name); err != nil {
			t.Fatal(err)
		}
	}
	dies(`apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: early-eks}
spec:
  provider: eks
  ttl: 1h
  kubernetesVersion: "1.35"
  networking: {vpcCIDR: 10.81.0.0/16}
  nodeGroups:
  - {name: web, count: 1, instanceType: m6i.large}
`, "vpc/early-eks")
	dies(`apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: early-sm}
spec:
  provider: aws
  ttl: 1h
  zones: [us-east-1a]
  networking: {vpcCIDR: 10.82.0.0/16}
  nodeGroups:
  - {name: workers, count: 1, instanceType: m6i.large}
  aws:
    nat: none
`, "key-pair/nuv-early-sm")
	dies(`apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: young-sm}
spec:
  provider: aws
  ttl: 5h
  zones: [us-east-1a]
  networking: {vpcCIDR: 10.83.0.0/16}
  nodeGroups:
  - {name: workers, count: 1, instanceType: m6i.large}
  aws:
    nat: none
`, "key-pair/nuv-young-sm")

	later := time.Now().Add(2 * time.Hour)
	lost, errs := eng.Lost(ctx, later, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, l := range lost {
		got = append(got, l.Provider+" "+l.Name+" "+strings.Fields(l.Skip + " -")[0])
	}
	// young-sm is this store's but has not expired: listed, with the reason it stays
	want := []string{"aws early-sm -", "aws young-sm record", "eks early-eks -"}
	if !slices.Equal(got, want) {
		t.Fatalf("lost clusters %q, want %q", got, want)
	}
	for _, l := range lost {
		if l.Skip != "" {
			continue
		}
		if _, err := eng.DeleteLost(ctx, l.Provider, l.Name, later); err != nil {
			t.Fatalf("gc of %s %s: %v", l.Provider, l.Name, err)
		}
		if left := taggedEC2(t, emu, l.Name); len(left) > 0 {
			t.Errorf("after gc of %s, still tagged for it: %v", l.Name, left)
		}
	}
	if _, err := eng.DeleteLost(ctx, awsmachines.Name, "young-sm", later); !errors.Is(err, engine.ErrNotReapable) {
		t.Errorf("gc of the unexpired young-sm: %v, want it left alone", err)
	}
	if left := taggedEC2(t, emu, "young-sm"); !slices.Contains(left, "key-pair") || !slices.Contains(left, "vpc") {
		t.Errorf("young-sm lost what it had: %v", left)
	}
}

// taggedEC2 lists the types of the EC2 resources tagged nuv.dev/cluster=name.
func taggedEC2(t *testing.T, emu *awstest.Emulator, name string) []string {
	t.Helper()
	s, err := (&awsnet.Sessions{}).Open(context.Background(), emu.Getenv, 0, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.EC2.DescribeTags(context.Background(), &ec2.DescribeTagsInput{Filters: []ec2types.Filter{
		{Name: aws.String("key"), Values: []string{awsnet.TagCluster}}, {Name: aws.String("value"), Values: []string{name}}}})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, tg := range out.Tags {
		types = append(types, string(tg.ResourceType))
	}
	return types
}

// testWriter writes what the engine and the providers say to the test's log, line by line.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

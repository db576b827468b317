package deploy

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/localtest"
)

// A local cluster flavoured as EKS detects as eks (so tests/eks/whisk.yaml applies) but still
// simulates pods: the operator must run on the host there too.
func TestIntegrationFlavouredLocalClusterRunsTheHostOperator(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	c := localtest.Start(t, localtest.Options{Project: testProject(t), Flavor: "eks"})
	ctx := context.Background()
	var out bytes.Buffer
	o := Options{Project: c.Project, Kubeconfig: c.Kubeconfig, Home: c.Home, Timeout: 90 * time.Second, Out: &out, Log: localtest.Logger(t),
		Getenv: testGetenv}
	for _, step := range []struct {
		name string
		f    func(context.Context, Options) error
	}{{"operator", Operator}, {"instance", Instance}, {"destroy", Destroy}} {
		out.Reset()
		err := step.f(ctx, o)
		t.Logf("%s:\n%s", step.name, out.String())
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		switch step.name {
		case "operator":
			if !strings.Contains(out.String(), "(eks)") || !strings.Contains(out.String(), "operator running on the host as system:serviceaccount:nuv-system:whisk-operator") {
				t.Error("eks-flavoured local cluster: type not eks or no host operator")
			}
		case "instance":
			if !strings.Contains(out.String(), "/tests/eks/whisk.yaml") || !strings.Contains(out.String(), "whisk default/whisk Ready") {
				t.Error("the eks instance file was not applied and Ready")
			}
		}
	}
}

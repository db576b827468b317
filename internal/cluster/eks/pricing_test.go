package eks

import (
	"reflect"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// TestMachines: a managed node group runs its desired count of its first instance type, in the
// spec's region (else AWS_REGION) at the section's endpoint; other resources run nothing.
func TestMachines(t *testing.T) {
	env := map[string]string{"AWS_REGION": "eu-west-1"}
	p := New("", "", func(k string) string { return env[k] }, nil)
	inRegion := &spec.Cluster{Spec: spec.Spec{Provider: "eks", Region: "us-east-2"}}
	noRegion := &spec.Cluster{Spec: spec.Spec{Provider: "eks"}}
	tests := []struct {
		name string
		c    *spec.Cluster
		r    cluster.Resource
		want []cluster.Machines
	}{
		{"node group", inRegion, cluster.Resource{Kind: kindNodeGroup, Fields: map[string]string{"instanceTypes": "m5.large,m5a.large", "desired": "3"}},
			[]cluster.Machines{{Cloud: "aws", Region: "us-east-2", Type: "m5.large", Count: 3}}},
		{"region from the environment", noRegion, cluster.Resource{Kind: kindNodeGroup, Fields: map[string]string{"instanceTypes": "t3.medium", "desired": "1"}},
			[]cluster.Machines{{Cloud: "aws", Region: "eu-west-1", Type: "t3.medium", Count: 1}}},
		{"empty group", inRegion, cluster.Resource{Kind: kindNodeGroup, Fields: map[string]string{"instanceTypes": "m5.large", "desired": "0"}}, nil},
		{"vpc", inRegion, cluster.Resource{Kind: awsnet.KindVPC, Fields: map[string]string{"cidr": "10.0.0.0/16"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.Machines(tc.c, tc.r); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

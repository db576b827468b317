package awsmachines

import (
	"reflect"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// TestMachines: a self-managed machine runs one of its type, in the spec's region (else
// AWS_REGION); other resources run nothing.
func TestMachines(t *testing.T) {
	env := map[string]string{"AWS_REGION": "eu-west-1"}
	p := New("", "", func(k string) string { return env[k] }, nil)
	inRegion := &spec.Cluster{Spec: spec.Spec{Provider: Name, Region: "us-east-2"}}
	noRegion := &spec.Cluster{Spec: spec.Spec{Provider: Name}}
	tests := []struct {
		name string
		c    *spec.Cluster
		r    cluster.Resource
		want []cluster.Machines
	}{
		{"machine", inRegion, cluster.Resource{Kind: kindInstance, Fields: map[string]string{"instanceType": "c5.xlarge", "role": "etcd"}},
			[]cluster.Machines{{Cloud: "aws", Region: "us-east-2", Type: "c5.xlarge", Count: 1}}},
		{"region from the environment", noRegion, cluster.Resource{Kind: kindInstance, Fields: map[string]string{"instanceType": "t3.medium", "role": "worker"}},
			[]cluster.Machines{{Cloud: "aws", Region: "eu-west-1", Type: "t3.medium", Count: 1}}},
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

package aks_test

import (
	"reflect"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/aks"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// TestMachines: the system pool (on the managed cluster) and each agent pool run their count, or
// the autoscaler's minimum, of their VM size in the spec's region; other resources run nothing.
func TestMachines(t *testing.T) {
	c := &spec.Cluster{Spec: spec.Spec{Provider: "aks", Region: "West Europe"}}
	tests := []struct {
		name string
		r    cluster.Resource
		want []cluster.Machines
	}{
		{"system pool", cluster.Resource{Kind: "managed-cluster", Fields: map[string]string{"systemPool.vmSize": "Standard_D2s_v3", "systemPool.count": "3"}},
			[]cluster.Machines{{Cloud: "azure", Region: "westeurope", Type: "Standard_D2s_v3", Count: 3}}},
		{"autoscaled pool", cluster.Resource{Kind: "agent-pool", Fields: map[string]string{"vmSize": "Standard_D4s_v5", "autoscale": "2-5"}},
			[]cluster.Machines{{Cloud: "azure", Region: "westeurope", Type: "Standard_D4s_v5", Count: 2}}},
		{"pool scaled to zero", cluster.Resource{Kind: "agent-pool", Fields: map[string]string{"vmSize": "Standard_D4s_v5", "count": "0"}}, nil},
		{"resource group", cluster.Resource{Kind: "resource-group", Fields: map[string]string{"location": "westeurope"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := (&aks.Provider{}).Machines(c, tc.r); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

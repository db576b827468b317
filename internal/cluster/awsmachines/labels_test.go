package awsmachines

import (
	"maps"
	"testing"

	"github.com/nuv-dev/nuv/internal/bootstrap"
)

// The nodes of a self-managed cluster say they are nuv's, made by provider aws and bootstrapped by
// kubeadm; only an emulator's machines (their mark names one) add the emulator.
func TestMachineNodeLabels(t *testing.T) {
	base := map[string]string{"nuv.dev/cluster": "sm", "nuv.dev/provider": "aws", "nuv.dev/bootstrap": "kubeadm"}
	with := func(k, v string) map[string]string { m := maps.Clone(base); m[k] = v; return m }
	for _, tc := range []struct {
		name string
		host bootstrap.Host
		want map[string]string
	}{
		{"real EC2 instance", bootstrap.Host{}, base},
		{"emulator's machine", bootstrap.Host{Containerized: true, Emulator: "aws"}, with("nuv.dev/emulated", "aws")},
		{"a container that is no emulator's", bootstrap.Host{Containerized: true}, base},
		{"a mark that is no name", bootstrap.Host{Emulator: "aws,x=y"}, base},
	} {
		if got := machineNodeLabels("sm", tc.host); !maps.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

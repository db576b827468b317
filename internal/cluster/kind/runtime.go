package kind

import (
	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

// runtimeOption returns the kind library's provider option for r.
func runtimeOption(r containerrt.Runtime) kindcluster.ProviderOption {
	switch r.Name {
	case "podman":
		return kindcluster.ProviderWithPodman()
	case "nerdctl":
		return kindcluster.ProviderWithNerdctl(r.Path)
	}
	return kindcluster.ProviderWithDocker()
}

package kind

import (
	"context"
	"fmt"
	"strings"

	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

// clusterNetwork is the network the cluster's control-plane node is on (kind's network, "kind"
// unless KIND_EXPERIMENTAL_DOCKER_NETWORK named another).
func clusterNetwork(ctx context.Context, rt containerrt.Runtime, cluster string) (string, error) {
	out, err := rt.Output(ctx, "inspect", "--type", "container", "--format",
		`{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}`, cluster+"-control-plane")
	if err != nil {
		return "", fmt.Errorf("network of kind cluster %s: %w", cluster, err)
	}
	nets := strings.Fields(out)
	if len(nets) == 0 {
		return "", fmt.Errorf("kind cluster %s's control-plane container is on no network", cluster)
	}
	for _, n := range nets {
		if n == "kind" {
			return n, nil
		}
	}
	return nets[0], nil
}

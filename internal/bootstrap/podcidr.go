package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// PodCIDRs waits up to timeout until node has its pod ranges (spec.podCIDRs, which the
// controller manager's node IPAM gives each Node when it registers) and returns them. A provider
// whose network routes pods through the nodes (a VPC's route tables) routes each range to its
// node's machine.
func (b *Bootstrap) PodCIDRs(ctx context.Context, node string, timeout time.Duration) ([]string, error) {
	secs := int(timeout.Seconds())
	if secs < 1 {
		return nil, errors.New("pod ranges of node " + node + ": no time given")
	}
	script := fmt.Sprintf(`kc='kubectl --kubeconfig %s'
end=$(( $(date +%%s) + %d ))
while :; do
  c=$($kc get node %s -o 'jsonpath={.spec.podCIDRs[*]}' 2>/dev/null || true)
  [ -n "$c" ] && { echo "$c"; exit 0; }
  [ $(date +%%s) -lt $end ] || { echo "node %s has no pod range (spec.podCIDRs) after %d s" >&2; exit 1; }
  sleep 1
done
`, AdminConf, secs, shq(node), node, secs)
	out, err := b.run(ctx, "pod ranges of node "+node, b.Cluster.ControlPlanes[0], script, nil)
	if err != nil {
		return nil, err
	}
	return parsePodCIDRs(node, string(out))
}

// parsePodCIDRs checks the pod ranges kubectl printed (separated by spaces).
func parsePodCIDRs(node, out string) ([]string, error) {
	cidrs := strings.Fields(out)
	if len(cidrs) == 0 {
		return nil, fmt.Errorf("node %s has no pod range (spec.podCIDRs)", node)
	}
	for _, c := range cidrs {
		if p, err := netip.ParsePrefix(c); err != nil || p.Masked() != p {
			return nil, fmt.Errorf("node %s: pod range %q is not a CIDR", node, c)
		}
	}
	return cidrs, nil
}

package podnet

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
)

// MasqueradeTable is the nftables table (family inet) in which nuv-podnet masquerades the traffic
// of pods that leaves the cluster's pod network (to the nodes' network and beyond), so that
// answers find their way back without routes to the pods; pod-to-pod traffic is not translated.
const MasqueradeTable = "nuv-podnet"

// MasqueradeRules returns the nft script that (re)creates MasqueradeTable for the cluster's pod
// ranges clusterCIDRs (kind's networking.podSubnet: one range per IP family, comma-separated).
// Applying it again replaces the table, so it is idempotent.
func MasqueradeRules(clusterCIDRs string) (string, error) {
	var rules []string
	seen := map[string]bool{}
	for _, c := range strings.Split(clusterCIDRs, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		ip, n, err := net.ParseCIDR(c)
		if err != nil {
			return "", fmt.Errorf("pod subnet %q: %w", c, err)
		}
		fam := "ip6"
		if ip.To4() != nil {
			fam = "ip"
		}
		if seen[fam] {
			return "", fmt.Errorf("pod subnet %q: two ranges of one IP family", clusterCIDRs)
		}
		seen[fam] = true
		rules = append(rules, fmt.Sprintf("\t\t%s saddr %s %s daddr != %s masquerade", fam, n, fam, n))
	}
	if len(rules) == 0 {
		return "", fmt.Errorf("no pod subnet given")
	}
	return fmt.Sprintf(`table inet %[1]s {}
delete table inet %[1]s
table inet %[1]s {
	chain postrouting {
		type nat hook postrouting priority srcnat; policy accept;
%[2]s
	}
}
`, MasqueradeTable, strings.Join(rules, "\n")), nil
}

// applyMasquerade loads the rules with nft (in nuv-podnet's image; the node's own nftables).
func applyMasquerade(ctx context.Context, script string) error {
	cmd := exec.CommandContext(ctx, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("nft -f: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

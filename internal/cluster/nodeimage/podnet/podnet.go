// Package podnet is the pod network of the kind node images nuv assembles: kind's own CNI (kindnetd)
// cannot be built here, so every node runs `nuv-node nuv-podnet` (a DaemonSet of the node image's
// default CNI manifest, see Manifest) which
//
//   - writes the node's CNI configuration from its Node's spec.podCIDRs: the reference bridge and
//     host-local plugins (Debian's containernetworking-plugins in /opt/cni/bin) and portmap, so
//     each node hands out addresses from its own range (Conflist);
//   - routes every other node's pod ranges through that node's InternalIP (Routes), and removes
//     the routes of nodes that went away.
//
// Pods therefore reach pods on other nodes without NAT. The routes it owns carry their own
// routing protocol number (RouteProtocol), so it never touches a route it did not make.
package podnet

import (
	"encoding/json"
	"fmt"
	"net"
	"sort"
)

// RouteProtocol marks the routes nuv-podnet installs (rtnetlink's protocol field; values above
// RTPROT_STATIC, 4, are free for routing daemons).
const RouteProtocol = 0x6e // 'n'

// BridgeName is the Linux bridge the pods of a node are attached to.
const BridgeName = "nuv0"

// ConfFile is the name of the CNI configuration nuv-podnet writes in the CNI configuration directory.
const ConfFile = "10-nuv-podnet.conflist"

// Conflist returns the CNI network configuration list of a node whose pod ranges are cidrs
// (spec.podCIDRs: one per IP family). It refuses an empty list and anything that is not a CIDR.
func Conflist(cidrs []string) ([]byte, error) {
	if len(cidrs) == 0 {
		return nil, fmt.Errorf("the node has no pod CIDR yet (spec.podCIDRs is empty)")
	}
	var ranges [][]map[string]string
	var routes []map[string]string
	seen := map[bool]bool{}
	for _, c := range cidrs {
		ip, n, err := net.ParseCIDR(c)
		if err != nil {
			return nil, fmt.Errorf("pod CIDR %q: %w", c, err)
		}
		v4 := ip.To4() != nil
		if seen[v4] {
			return nil, fmt.Errorf("pod CIDRs %v: two ranges of one IP family", cidrs)
		}
		seen[v4] = true
		ranges = append(ranges, []map[string]string{{"subnet": n.String()}})
		if v4 {
			routes = append(routes, map[string]string{"dst": "0.0.0.0/0"})
		} else {
			routes = append(routes, map[string]string{"dst": "::/0"})
		}
	}
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "nuv-podnet",
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      BridgeName,
				"isGateway":   true,
				"ipMasq":      false,
				"hairpinMode": true,
				"ipam": map[string]any{
					"type":   "host-local",
					"ranges": ranges,
					"routes": routes,
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Node is what nuv-podnet needs of a Node.
type Node struct {
	Name      string
	PodCIDRs  []string
	Addresses []string // InternalIP addresses, IPv4 and/or IPv6
}

// Route sends the pod range Dst through the node address Via.
type Route struct {
	Dst  *net.IPNet
	Via  net.IP
	Node string
}

func (r Route) String() string { return fmt.Sprintf("%s via %s (%s)", r.Dst, r.Via, r.Node) }

// Routes returns the routes node self needs to reach the pods of every other node: each pod range
// through that node's InternalIP of the same family. Nodes without a pod range or an address of
// the range's family get no route (they get one once they have both). The result is sorted.
func Routes(self string, nodes []Node) ([]Route, error) {
	var out []Route
	for _, n := range nodes {
		if n.Name == self {
			continue
		}
		for _, c := range n.PodCIDRs {
			ip, dst, err := net.ParseCIDR(c)
			if err != nil {
				return nil, fmt.Errorf("node %s: pod CIDR %q: %w", n.Name, c, err)
			}
			v4 := ip.To4() != nil
			for _, a := range n.Addresses {
				via := net.ParseIP(a)
				if via == nil || (via.To4() != nil) != v4 {
					continue
				}
				out = append(out, Route{Dst: dst, Via: via, Node: n.Name})
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dst.String() < out[j].Dst.String() })
	return out, nil
}

package container

import (
	"context"
	"fmt"
	"net"
	"slices"

	"github.com/vishvananda/netlink"
)

// SetNetworkRoutes makes routes exactly what routing table table holds for the traffic that
// enters the host from network (see above): missing routes are added, others replaced or
// deleted. Empty routes removes the network's rule and the table's routes; a network that does
// not exist (any more) is then no error. It needs root.
func (m *Manager) SetNetworkRoutes(ctx context.Context, network string, table int, routes []NetworkRoute) error {
	br, err := m.bridge(ctx, network)
	if err != nil && (len(routes) > 0 || !isNotFound(err)) {
		return fmt.Errorf("routes of network %s: %w", network, err)
	}
	type want struct {
		dst *net.IPNet
		via net.IP
		dev int
	}
	var wants []want
	for _, r := range routes {
		_, dst, err := net.ParseCIDR(r.Dst)
		via := net.ParseIP(r.Via).To4()
		if err != nil || via == nil {
			return fmt.Errorf("routes of network %s: %s via %s: not an IPv4 range and address", network, r.Dst, r.Via)
		}
		vbr, err := m.bridge(ctx, r.ViaNetwork)
		if err != nil {
			return fmt.Errorf("routes of network %s: %s via %s: %w", network, r.Dst, r.Via, err)
		}
		l, err := netlink.LinkByName(vbr)
		if err != nil {
			return fmt.Errorf("routes of network %s: bridge %s of network %s: %w", network, vbr, r.ViaNetwork, err)
		}
		wants = append(wants, want{dst, via, l.Attrs().Index})
	}
	rules, err := netlink.RuleList(netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("routes of network %s: list the routing rules: %w", network, err)
	}
	var ours []netlink.Rule
	for _, r := range rules {
		if r.Priority == NetworkRulePriority && r.Table == table {
			ours = append(ours, r)
		}
	}
	if len(wants) > 0 {
		found := slices.ContainsFunc(ours, func(r netlink.Rule) bool { return r.IifName == br })
		if !found {
			r := netlink.NewRule()
			r.Family, r.IifName, r.Table, r.Priority = netlink.FAMILY_V4, br, table, NetworkRulePriority
			if err := netlink.RuleAdd(r); err != nil {
				return fmt.Errorf("routes of network %s: rule iif %s lookup %d: %w", network, br, table, err)
			}
		}
	}
	for _, r := range ours {
		if len(wants) == 0 || r.IifName != br {
			if err := netlink.RuleDel(&r); err != nil {
				return fmt.Errorf("routes of network %s: remove rule iif %s lookup %d: %w", network, r.IifName, table, err)
			}
		}
	}
	have, err := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: table}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return fmt.Errorf("routes of network %s: list table %d: %w", network, table, err)
	}
	kept := map[string]bool{}
	for _, w := range wants {
		kept[w.dst.String()] = true
		r := &netlink.Route{Dst: w.dst, Gw: w.via, LinkIndex: w.dev, Table: table, Protocol: NetworkRouteProtocol}
		if err := netlink.RouteReplace(r); err != nil {
			return fmt.Errorf("routes of network %s: %s via %s (table %d): %w", network, w.dst, w.via, table, err)
		}
	}
	for _, r := range have {
		if r.Dst != nil && !kept[r.Dst.String()] {
			if err := netlink.RouteDel(&r); err != nil {
				return fmt.Errorf("routes of network %s: remove %s (table %d): %w", network, r.Dst, table, err)
			}
		}
	}
	return nil
}

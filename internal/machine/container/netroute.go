package container

// Routes of a network's traffic through the host. A machine's packets for an address outside its
// network go to the network's gateway, the host; SetNetworkRoutes gives what enters the host from
// one network routes of its own (a routing table, and a rule "iif <bridge> lookup <table>"), each
// a destination range through a machine's address on another (or the same) network: what a VPC
// subnet's route table does with a route to an instance. The host's other traffic never meets
// them; a network whose routes are emptied loses its rule and table. Linux only (rtnetlink:
// netroute_linux.go); elsewhere SetNetworkRoutes says so.

import "errors"

// NetworkRulePriority is the priority of the rules SetNetworkRoutes makes (before the main
// table's, 32766).
const NetworkRulePriority = 28160

// NetworkRouteProtocol marks the routes SetNetworkRoutes makes (rtnetlink's protocol field).
const NetworkRouteProtocol = 0x6f

// NetworkRoute sends Dst through the machine address Via on network ViaNetwork.
type NetworkRoute struct {
	Dst        string // CIDR
	Via        string // IPv4 address
	ViaNetwork string
}

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

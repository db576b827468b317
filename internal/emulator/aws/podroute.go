package aws

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/machine/container"
)

// The routes of the VPCs' route tables that lead to instances, carried by the machines' network.
// On EC2 a packet for an address that is not the receiving instance's own (a pod's, routed to its
// node) is dropped unless the instance's source/destination check is off, and a machine reaches
// another subnet only through the VPC's router, which follows the subnet's route table. The
// emulator does the same with the host as the router: for every subnet it gives the traffic that
// enters the host from the subnet's network the routes of the subnet's route table (the table
// associated with it, else the VPC's main one) whose target is an instance that runs with its
// check off, each through the instance's private address (package machine/container,
// SetNetworkRoutes). A route to an instance whose check is on, or that does not run, carries
// nothing. Within one subnet the machines share a network and reach each other directly, so the
// check is not enforced there (nor on the source side of a packet).

// InstanceRoute is a route of a subnet's route table to an instance that takes it.
type InstanceRoute struct {
	// Dst is the route's destination (a CIDR); Via the instance's private address, on the network
	// of subnet ViaSubnet.
	Dst, Via, ViaSubnet string
}

// instanceRoutes are the routes the machines' network carries now, by subnet (s.Mu held): see
// above. Only subnets whose machine network exists are listed; every one of those is, with no
// routes when it has none.
func (s *Server) instanceRoutes() map[string][]InstanceRoute {
	e := s.ec2()
	out := map[string][]InstanceRoute{}
	for _, sn := range e.MachineNetworks {
		sub := e.Subnets[sn]
		if sub == nil {
			continue
		}
		out[sn] = nil
		rt := s.subnetRouteTable(sub)
		if rt == nil {
			continue
		}
		for _, r := range rt.Routes {
			in := s.instances()[r.InstanceID]
			if r.InstanceID == "" || in == nil || in.State != "running" || !in.SourceDestCheckOff || in.PrivateIP == "" {
				continue
			}
			out[sn] = append(out[sn], InstanceRoute{Dst: r.DestinationCidrBlock, Via: in.PrivateIP, ViaSubnet: in.SubnetID})
		}
		sort.Slice(out[sn], func(i, j int) bool { return out[sn][i].Dst < out[sn][j].Dst })
	}
	return out
}

// subnetRouteTable is the route table of subnet sub: the one associated with it, else its VPC's
// main table.
func (s *Server) subnetRouteTable(sub *ec2Subnet) *ec2RouteTable {
	e := s.ec2()
	var main *ec2RouteTable
	for _, id := range sortedKeys(e.RouteTables) {
		rt := e.RouteTables[id]
		if rt.VpcID != sub.VpcID {
			continue
		}
		for _, a := range rt.Associations {
			if a.SubnetID == sub.SubnetID {
				return rt
			}
			if a.Main {
				main = rt
			}
		}
	}
	return main
}

// routesDigest is a comparable form of the instance routes.
func routesDigest(routes map[string][]InstanceRoute) string {
	var b strings.Builder
	for _, sn := range sortedKeys(routes) {
		fmt.Fprintf(&b, "%s:", sn)
		for _, r := range routes[sn] {
			fmt.Fprintf(&b, " %s>%s@%s", r.Dst, r.Via, r.ViaSubnet)
		}
		b.WriteString(";")
	}
	return b.String()
}

// routesJob is the key of the job that gives the machines' network the instance routes.
const routesJob = "ec2/instance-routes"

// reconcileRoutes starts the job that gives the machines' network the instance routes when they
// differ from what it carries (s.Mu held). The first time after a start they are given in any
// case: a restarted emulator makes them again.
func (s *Server) reconcileRoutes() {
	want := s.instanceRoutes()
	d := routesDigest(want)
	if (s.inst.routesSet && d == s.inst.routes) || s.Jobs[routesJob] || s.BG.Ctx().Err() != nil || time.Now().Before(s.inst.routesRetry) {
		return
	}
	if len(want) == 0 && !s.inst.routesSet {
		s.inst.routesSet, s.inst.routes = true, d // no machine network: nothing to route
		return
	}
	s.Spawn(routesJob, func(ctx context.Context) func() {
		err := s.machines.SetRoutes(ctx, want)
		return func() {
			if err != nil {
				if msg := err.Error(); msg != s.inst.routesWarned {
					s.Log.Warnf("emulator: the routes of the VPCs' route tables to instances: %v (retrying)", err)
					s.inst.routesWarned = msg
				}
				s.inst.routesRetry = time.Now().Add(machineRetry)
				return
			}
			s.inst.routesWarned = ""
			s.inst.routesSet, s.inst.routes = true, d
			s.Log.V(1).Infof("emulator: routes to instances: %s", d)
		}
	})
}

// subnetRouteTableID is the routing table on the host that carries the routes of subnet of
// account's emulator (SetNetworkRoutes): a number derived from both, in 0x6e000000 +
// [0, 2^24), far from the tables a host uses (main is 254).
func subnetRouteTableID(account, subnet string) int {
	h := fnv.New32a()
	h.Write([]byte(account + "/" + subnet))
	return 0x6e000000 + int(h.Sum32()&0xffffff)
}

// SetRoutes gives the network of each subnet the instance routes of its route table (see
// Machines); a network without routes loses those it had.
func (c *ContainerMachines) SetRoutes(ctx context.Context, routes map[string][]InstanceRoute) error {
	mgr, err := c.manager(ctx)
	if err != nil {
		return err
	}
	nets, err := mgr.Networks(ctx, map[string]string{LabelEmulator: "aws", LabelAccount: c.Account})
	if err != nil {
		return fmt.Errorf("the routes to instances: %w", err)
	}
	for _, n := range nets {
		sn := n.Labels[LabelSubnet]
		if sn == "" {
			continue
		}
		var nr []container.NetworkRoute
		for _, r := range routes[sn] {
			nr = append(nr, container.NetworkRoute{Dst: r.Dst, Via: r.Via, ViaNetwork: networkName(r.ViaSubnet)})
		}
		if err := mgr.SetNetworkRoutes(ctx, n.Name, subnetRouteTableID(c.Account, sn), nr); err != nil {
			return err
		}
	}
	return nil
}

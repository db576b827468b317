package awsmachines

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
)

// The pod network on EC2. nuv-podnet routes every node's pod range through that node's address,
// without encapsulation, which a VPC carries only with two things kOps' route-based networking
// (kubenet) also needs:
//
//	source-dest-check/NAME   the machine's source/destination check off (ModifyInstanceAttribute):
//	                         EC2 drops what an instance sends or receives for an address that is
//	                         not its own (a pod's) otherwise. Control planes and workers, which
//	                         run pods; etcd and HAProxy machines keep the check.
//	pod-route/NAME           a route of the node's pod range (spec.podCIDRs, given by the
//	                         controller manager when the node registers) to its instance in each
//	                         of the cluster's private route tables: machines in another subnet
//	                         (zone) reach it only through the VPC's router, which follows them.
//
// Both are steps of their machine, recorded with its instance ID: a machine healed or rolled
// gets both again (the roll does them before the cluster validates), the route pointed at the
// new instance (ReplaceRoute). Observation reads the check from the instance and the route from
// the route tables, so what was changed behind nuv's back is made again. A route goes with its
// machine (a scale-down deletes it); routes of terminated instances (blackholes) within the
// cluster's pod range are deleted when a route is made.
const (
	kindSourceDestCheck = "source-dest-check"
	kindPodRoute        = "pod-route"
	fieldPodCIDR        = "podCIDR"
)

// Timings of the pod network's steps.
var podCIDRWait = 2 * time.Minute

// carriesPods says whether machines of role run pods (and so need the check off and a route).
func carriesPods(role string) bool { return role == RoleControlPlane || role == RoleWorker }

// privateRouteTables are the keys of a network's route tables that its private subnets (the
// nodes') use.
func privateRouteTables(n awsnet.Network) []string {
	var out []string
	for _, k := range n.Routes {
		if k != awsnet.Key(awsnet.KindRouteTable, "public") {
			out = append(out, k)
		}
	}
	return out
}

// podNetDesired are the pod network's steps of the machine instanceKey (a node), its join being
// joinKey.
func podNetDesired(instanceKey, joinKey string, tables []string) (check, route cluster.Resource) {
	_, n, _ := strings.Cut(instanceKey, "/")
	check = cluster.Resource{Kind: kindSourceDestCheck, Name: n, Fields: map[string]string{"instance": instanceKey, "enabled": "false"},
		DependsOn: []string{instanceKey}}
	route = cluster.Resource{Kind: kindPodRoute, Name: n, Fields: map[string]string{"instance": instanceKey, "routeTables": strings.Join(tables, ",")},
		DependsOn: append([]string{joinKey, awsnet.Key(kindSourceDestCheck, n)}, tables...)}
	return check, route
}

// sourceDestCheck turns the check of the step's machine off.
func (x *exec) sourceDestCheck(ctx context.Context, _ cluster.Change) error {
	ik := x.Res.Fields["instance"]
	id, err := x.ID(ik)
	if err != nil || id == "" {
		return fmt.Errorf("%s: its machine %s is not launched", x.Res.Key(), ik)
	}
	// EC2 changes the attribute of a machine that runs: a machine launched is waited for.
	if err := x.running(ctx, ik); err != nil {
		return err
	}
	if id, err = x.ID(ik); err != nil {
		return err
	}
	if err := x.sourceDestOff(ctx, id); err != nil {
		return err
	}
	return x.Made(id)
}

// sourceDestOff turns the source/destination check of instance id off (again is harmless).
func (x *exec) sourceDestOff(ctx context.Context, id string) error {
	_, err := x.s.EC2.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(id),
		SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(false)}})
	return x.Fail("ec2:ModifyInstanceAttribute", id+" (source/destination check off)", err)
}

// podRoute routes the pod range of the step's node to its instance.
func (x *exec) podRoute(ctx context.Context, _ cluster.Change) error {
	bt, m, err := x.stepMachine(ctx)
	if err != nil {
		return err
	}
	cidr, err := x.routePods(ctx, bt, m, kit.ParseList(x.Res.Fields["routeTables"]))
	if err != nil {
		return err
	}
	x.Res.Fields = maps.Clone(x.Res.Fields)
	x.Res.Fields[fieldPodCIDR] = cidr
	return x.Made(m.info.id)
}

// routePods makes the route of machine m's node's IPv4 pod range to m's instance in each route
// table of tables (keys), replacing one to another target, and deletes the routes within the
// cluster's pod range that lead to m with another range or to a terminated instance. It returns
// the range.
func (x *exec) routePods(ctx context.Context, bt *booted, m *sshMachine, tables []string) (string, error) {
	cidrs, err := bt.b.PodCIDRs(ctx, m.Name(), podCIDRWait)
	if err != nil {
		return "", err
	}
	cidr := ""
	for _, c := range cidrs {
		if p, err := netip.ParsePrefix(c); err == nil && p.Addr().Is4() && cidr == "" {
			cidr = p.String()
		}
	}
	if cidr == "" {
		return "", fmt.Errorf("node %s has no IPv4 pod range (spec.podCIDRs %v)", m.Name(), cidrs)
	}
	podNet, err := netip.ParsePrefix(awsnet.OrDefault(x.C.Spec.Networking.PodCIDR, defaultPodCIDR))
	if err != nil {
		return "", fmt.Errorf("the cluster's pod range: %w", err)
	}
	id := m.info.id
	for _, tk := range tables {
		rt, err := x.ID(tk)
		if err != nil || rt == "" {
			return "", fmt.Errorf("route of pods %s to %s: route table %s is not made", cidr, id, tk)
		}
		out, err := x.s.EC2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{RouteTableIds: []string{rt}})
		if err != nil || len(out.RouteTables) == 0 {
			return "", x.Fail("ec2:DescribeRouteTables", tk, err)
		}
		ops := routeOps(out.RouteTables[0].Routes, cidr, id, podNet)
		for _, d := range ops.drop {
			x.p.log().Infof("  %s: delete route %s (%s)", tk, d, "a terminated instance's, or the node's former range")
			_, err := x.s.EC2.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(rt), DestinationCidrBlock: aws.String(d)})
			if err != nil && awsnet.APICode(err) != "InvalidRoute.NotFound" {
				return "", x.Fail("ec2:DeleteRoute", tk+" "+d, err)
			}
		}
		have := ops.have
		switch {
		case have == id:
			continue
		case have == "":
			_, err = x.s.EC2.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: aws.String(rt), DestinationCidrBlock: aws.String(cidr), InstanceId: aws.String(id)})
			if awsnet.APICode(err) != "RouteAlreadyExists" {
				if err != nil {
					return "", x.Fail("ec2:CreateRoute", tk+" "+cidr, err)
				}
				x.p.log().Infof("  %s: route %s -> %s (node %s)", tk, cidr, id, m.Name())
				continue
			}
		}
		x.p.log().Infof("  %s: route %s -> %s (node %s), was -> %s", tk, cidr, id, m.Name(), have)
		_, err = x.s.EC2.ReplaceRoute(ctx, &ec2.ReplaceRouteInput{RouteTableId: aws.String(rt), DestinationCidrBlock: aws.String(cidr), InstanceId: aws.String(id)})
		if err != nil {
			return "", x.Fail("ec2:ReplaceRoute", tk+" "+cidr, err)
		}
	}
	return cidr, nil
}

// podRouteOps is what a route table needs for the route of a node's range cidr to instance id.
type podRouteOps struct {
	// have is the target of cidr's route now ("": none; id: nothing to do).
	have string
	// drop are the destinations of routes to delete: within the cluster's pod range podNet,
	// to instance id with another range (the node's former one), or to a terminated instance.
	drop []string
}

// routeOps reads a route table's routes for the route of cidr to instance id (see podRouteOps).
func routeOps(routes []ec2types.Route, cidr, id string, podNet netip.Prefix) podRouteOps {
	var ops podRouteOps
	for _, r := range routes {
		dest := aws.ToString(r.DestinationCidrBlock)
		to := aws.ToString(r.InstanceId)
		if dest == cidr {
			ops.have = to + aws.ToString(r.GatewayId) + aws.ToString(r.NatGatewayId) + aws.ToString(r.NetworkInterfaceId)
			continue
		}
		p, err := netip.ParsePrefix(dest)
		if to == "" || err != nil || !podNet.Overlaps(p) {
			continue
		}
		if to == id || r.State == ec2types.RouteStateBlackhole {
			ops.drop = append(ops.drop, dest)
		}
	}
	return ops
}

// deletePodRoute deletes the route of a node that leaves (its machine goes) from the route tables,
// unless it leads elsewhere by now.
func (x *exec) deletePodRoute(ctx context.Context, ch cluster.Change) error {
	cidr, id := ch.Actual.Fields[fieldPodCIDR], awsnet.ActualID(ch)
	if cidr == "" {
		return nil
	}
	if !machinesKeys(x.C)[ch.Key] {
		// The node leaves a cluster that stays (a scale-down): its pods are evicted while their
		// traffic still reaches them, then the route goes (its join's delete, which drains too,
		// finds the node drained). When the whole cluster goes, nothing is drained.
		if err := x.drainLeaving(ctx, ch.Actual.Fields["instance"]); err != nil {
			return err
		}
	}
	for _, tk := range kit.ParseList(ch.Actual.Fields["routeTables"]) {
		rt, err := x.ID(tk)
		if err != nil || rt == "" {
			continue // the table is gone
		}
		out, err := x.s.EC2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{RouteTableIds: []string{rt}})
		if err != nil && awsnet.NotFound(err) {
			continue // the table is gone (notFound is also true of no error)
		}
		if err != nil || len(out.RouteTables) == 0 {
			return x.Fail("ec2:DescribeRouteTables", tk, err)
		}
		for _, r := range out.RouteTables[0].Routes {
			if aws.ToString(r.DestinationCidrBlock) != cidr || aws.ToString(r.InstanceId) != id {
				continue
			}
			_, err := x.s.EC2.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(rt), DestinationCidrBlock: aws.String(cidr)})
			if err != nil && awsnet.APICode(err) != "InvalidRoute.NotFound" && !awsnet.NotFound(err) {
				return x.Fail("ec2:DeleteRoute", tk+" "+cidr, err)
			}
		}
	}
	return nil
}

// rollPodNet gives the machine m that replaced a node in a roll its pod network's steps, and
// records them.
func (x *exec) rollPodNet(ctx context.Context, bt *booted, ik string, m *sshMachine) error {
	var route *cluster.Resource
	for _, r := range machinesDesired(x.C, x.m) {
		if r.Kind == kindPodRoute && r.Fields["instance"] == ik {
			route = &r
		}
	}
	if route == nil {
		return nil // not a node
	}
	if err := x.sourceDestOff(ctx, m.info.id); err != nil {
		return err
	}
	if err := x.record(awsnet.Key(kindSourceDestCheck, route.Name), m.info.id); err != nil {
		return err
	}
	cidr, err := x.routePods(ctx, bt, m, kit.ParseList(route.Fields["routeTables"]))
	if err != nil {
		return err
	}
	r := *route
	r.Fields = maps.Clone(r.Fields)
	r.Fields[fieldPodCIDR] = cidr
	r.ID = m.info.id
	x.p.remember(x.Name, r.Key(), r.ID)
	return x.Save(r)
}

// observePodNet adds the pod network's steps that hold: the check off on a node's machine that
// runs, and the routes recorded for a machine that runs and whose join holds, present in every
// route table and leading to it.
func (s *session) observePodNet(ctx context.Context, o *awsnet.Observation, infos map[string]machineInfo, recorded []cluster.Resource, joined map[string]bool) error {
	for _, k := range slices.Sorted(maps.Keys(infos)) {
		in := infos[k]
		if !carriesPods(in.role) || (in.state != string(ec2types.InstanceStateNameRunning) && in.state != string(ec2types.InstanceStateNamePending)) {
			continue
		}
		if in.inst.SourceDestCheck != nil && !aws.ToBool(in.inst.SourceDestCheck) {
			_, n, _ := strings.Cut(k, "/")
			o.Add(cluster.Resource{Kind: kindSourceDestCheck, Name: n, ID: in.id, Fields: map[string]string{"instance": k, "enabled": "false"}, DependsOn: []string{k}})
		}
	}
	var routes []cluster.Resource
	for _, r := range recorded {
		if r.Kind == kindPodRoute && r.ID != "" && r.Fields[fieldPodCIDR] != "" && joined[r.Fields["instance"]] {
			if in, ok := infos[r.Fields["instance"]]; ok && in.id == r.ID && in.state == string(ec2types.InstanceStateNameRunning) {
				routes = append(routes, r)
			}
		}
	}
	if len(routes) == 0 {
		return nil
	}
	out, err := s.EC2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: awsnet.TagFilter(o.Name)})
	if err != nil {
		return fmt.Errorf("ec2:DescribeRouteTables: %s", awsnet.APIMessage(err))
	}
	to := map[string]string{} // route table id + " " + destination -> instance, of active routes
	for _, rt := range out.RouteTables {
		for _, r := range rt.Routes {
			if r.State == ec2types.RouteStateActive && r.InstanceId != nil {
				to[aws.ToString(rt.RouteTableId)+" "+aws.ToString(r.DestinationCidrBlock)] = aws.ToString(r.InstanceId)
			}
		}
	}
	ids := map[string]string{} // key -> id
	for id, k := range o.Keys {
		ids[k] = id
	}
	for _, r := range routes {
		if podRouteHolds(r, ids, to) {
			o.Add(cluster.Resource{Kind: r.Kind, Name: r.Name, ID: r.ID, Fields: r.Fields, DependsOn: r.DependsOn})
		}
	}
	return nil
}

// podRouteHolds says whether the recorded route r is in each of its route tables (ids: key -> id)
// and active to its instance (to: "TABLE-ID DESTINATION" -> instance, of the active routes).
func podRouteHolds(r cluster.Resource, ids, to map[string]string) bool {
	tables := kit.ParseList(r.Fields["routeTables"])
	if len(tables) == 0 || r.Fields[fieldPodCIDR] == "" {
		return false
	}
	for _, tk := range tables {
		if ids[tk] == "" || to[ids[tk]+" "+r.Fields[fieldPodCIDR]] != r.ID {
			return false
		}
	}
	return true
}

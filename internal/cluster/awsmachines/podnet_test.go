package awsmachines

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
)

// TestPodNetDesired: every machine that runs pods (control planes, workers) has its
// source/destination check step after its instance and a pod route after its join, in every
// private route table (one per zone with perAZ NAT); etcd and HAProxy machines have neither.
func TestPodNetDesired(t *testing.T) {
	perAZ := strings.Replace(haNLB, "    ssh:", "    nat: perAZ\n    ssh:", 1)
	for _, tc := range []struct {
		name, doc string
		nodes     []string
		tables    string
	}{
		{"ha-nlb", haNLB, []string{"control-plane-0", "control-plane-1", "control-plane-2", "workers-0", "workers-1"}, "route-table/private"},
		{"perAZ", perAZ, []string{"control-plane-0", "control-plane-1", "control-plane-2", "workers-0", "workers-1"}, "route-table/private-us-east-1a,route-table/private-us-east-1b"},
		{"external-haproxy", externalHAProxy, []string{"control-plane-0", "pool-0"}, "route-table/private"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, desired := machinesPlan(t, tc.doc)
			at := map[string]int{}
			for i, r := range desired {
				at[r.Key()] = i
			}
			var checks, routes []string
			for _, r := range desired {
				switch r.Kind {
				case kindSourceDestCheck:
					checks = append(checks, r.Name)
					ik := awsnet.Key(kindInstance, r.Name)
					if r.Fields["instance"] != ik || r.Fields["enabled"] != "false" || !slices.Equal(r.DependsOn, []string{ik}) || at[ik] > at[r.Key()] {
						t.Errorf("%s: %+v (instance at %d, the check at %d)", r.Key(), r, at[ik], at[r.Key()])
					}
				case kindPodRoute:
					routes = append(routes, r.Name)
					join := awsnet.Key(kindKubeadmJoin, r.Name)
					if r.Fields["instance"] != awsnet.Key(kindInstance, r.Name) || r.Fields["routeTables"] != tc.tables || at[join] > at[r.Key()] ||
						!slices.Contains(r.DependsOn, join) || !slices.Contains(r.DependsOn, awsnet.Key(kindSourceDestCheck, r.Name)) {
						t.Errorf("%s: %+v", r.Key(), r)
					}
					for _, tk := range strings.Split(tc.tables, ",") {
						if !slices.Contains(r.DependsOn, tk) {
							t.Errorf("%s does not depend on %s: %v", r.Key(), tk, r.DependsOn)
						}
					}
				}
			}
			if !slices.Equal(checks, tc.nodes) || !slices.Equal(routes, tc.nodes) {
				t.Errorf("checks %v, routes %v; want both %v", checks, routes, tc.nodes)
			}
		})
	}
}

// TestRouteOps: what a route table needs for the route of a node's range to its instance.
func TestRouteOps(t *testing.T) {
	podNet := netip.MustParsePrefix("10.244.0.0/16")
	route := func(dest, inst string, state ec2types.RouteState) ec2types.Route {
		r := ec2types.Route{DestinationCidrBlock: aws.String(dest), State: state}
		if inst != "" {
			r.InstanceId = aws.String(inst)
		}
		return r
	}
	local := ec2types.Route{DestinationCidrBlock: aws.String("10.0.0.0/16"), GatewayId: aws.String("local"), State: ec2types.RouteStateActive}
	nat := ec2types.Route{DestinationCidrBlock: aws.String("0.0.0.0/0"), NatGatewayId: aws.String("nat-1"), State: ec2types.RouteStateActive}
	for _, tc := range []struct {
		name   string
		routes []ec2types.Route
		have   string
		drop   []string
	}{
		{"none yet", []ec2types.Route{local, nat}, "", nil},
		{"there", []ec2types.Route{local, nat, route("10.244.1.0/24", "i-new", ec2types.RouteStateActive)}, "i-new", nil},
		{"to the healed machine's predecessor", []ec2types.Route{local, route("10.244.1.0/24", "i-old", ec2types.RouteStateBlackhole)}, "i-old", nil},
		{"a gone node's route, another node's kept", []ec2types.Route{local, route("10.244.3.0/24", "i-gone", ec2types.RouteStateBlackhole),
			route("10.244.2.0/24", "i-other", ec2types.RouteStateActive)}, "", []string{"10.244.3.0/24"}},
		{"the node's former range", []ec2types.Route{route("10.244.7.0/24", "i-new", ec2types.RouteStateActive)}, "", []string{"10.244.7.0/24"}},
		{"a blackhole outside the pod range is the user's", []ec2types.Route{route("192.168.0.0/24", "i-gone", ec2types.RouteStateBlackhole)}, "", nil},
	} {
		got := routeOps(tc.routes, "10.244.1.0/24", "i-new", podNet)
		if got.have != tc.have || !slices.Equal(got.drop, tc.drop) {
			t.Errorf("%s: have %q, drop %v; want %q, %v", tc.name, got.have, got.drop, tc.have, tc.drop)
		}
	}
}

// TestPodRouteHolds: a recorded route is observed only when every one of its route tables has
// it, active, to its instance.
func TestPodRouteHolds(t *testing.T) {
	r := cluster.Resource{Kind: kindPodRoute, Name: "workers-0", ID: "i-1", Fields: map[string]string{"instance": "instance/workers-0",
		"routeTables": "route-table/private-a,route-table/private-b", fieldPodCIDR: "10.244.1.0/24"}}
	ids := map[string]string{"route-table/private-a": "rtb-a", "route-table/private-b": "rtb-b"}
	for _, tc := range []struct {
		name string
		to   map[string]string
		r    cluster.Resource
		want bool
	}{
		{"in both", map[string]string{"rtb-a 10.244.1.0/24": "i-1", "rtb-b 10.244.1.0/24": "i-1"}, r, true},
		{"missing in one", map[string]string{"rtb-a 10.244.1.0/24": "i-1"}, r, false},
		{"to another instance", map[string]string{"rtb-a 10.244.1.0/24": "i-1", "rtb-b 10.244.1.0/24": "i-2"}, r, false},
		{"no range recorded", map[string]string{"rtb-a ": "i-1", "rtb-b ": "i-1"}, cluster.Resource{Kind: kindPodRoute, ID: "i-1",
			Fields: map[string]string{"routeTables": r.Fields["routeTables"]}}, false},
	} {
		if got := podRouteHolds(tc.r, ids, tc.to); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

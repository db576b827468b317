package awsnet

import (
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// The network's resource kinds (each kind's Name is in the plan):
//
//	vpc/NAME                       the network (not made when the spec names an existing one)
//	subnet/private-ZONE            nodes' subnets, one per zone
//	subnet/public-ZONE             NAT gateways' and load balancers' subnets
//	internet-gateway/NAME          the VPC's way out
//	elastic-ip/nat-ZONE            the NAT gateway's public address
//	nat-gateway/ZONE               one (nat: single) or one per zone (nat: perAZ)
//	route-table/public             0.0.0.0/0 to the internet gateway, associated with the public subnets
//	route-table/private[-ZONE]     0.0.0.0/0 to a NAT gateway (none with nat: none)
//	security-group/NAME            a security group
const (
	KindVPC        = "vpc"
	KindSubnet     = "subnet"
	KindIGW        = "internet-gateway"
	KindEIP        = "elastic-ip"
	KindNAT        = "nat-gateway"
	KindRouteTable = "route-table"
	KindSG         = "security-group"
)

// NAT modes: how private subnets reach the internet.
const (
	NATNone   = "none"
	NATSingle = "single"
	NATPerAZ  = "perAZ"
)

// Key is a resource's key: KIND/NAME.
func Key(kind, name string) string { return kind + "/" + name }

// Names are the names of resource keys.
func Names(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		_, out[i], _ = strings.Cut(k, "/")
	}
	return out
}

// OrDefault is v, or d when v is empty.
func OrDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// Network is the VPC nuv makes for a cluster (EKS or self-managed): its resources and the keys
// of what the rest of the cluster hangs on.
type Network struct {
	Resources []cluster.Resource
	VPC       string   // the VPC's key
	Private   []string // keys of the private subnets (nodes), by zone
	Public    []string // keys of the public subnets (NAT gateways, load balancers), by zone
	Routes    []string // keys of the route tables: a node has a way out once they exist
}

// NetworkDesired lists the VPC, its public and private subnet per zone, the internet gateway, the
// NAT gateways nat asks for (none, single, perAZ) with their addresses, and the route tables.
func NetworkDesired(c *spec.Cluster, subnets []Subnet, zones []string, nat string) Network {
	name := c.Metadata.Name
	var n Network
	add := func(res cluster.Resource) { n.Resources = append(n.Resources, res) }
	vpc := Key(KindVPC, name)
	n.VPC = vpc
	add(cluster.Resource{Kind: KindVPC, Name: name, Fields: map[string]string{"cidr": OrDefault(c.Spec.Networking.VPCCIDR, DefaultVPCCIDR)}, Replace: []string{"cidr"}})
	for _, s := range subnets {
		add(cluster.Resource{Kind: KindSubnet, Name: s.Name(), Fields: map[string]string{"cidr": s.CIDR, "zone": s.Zone, "public": kit.Bool(s.Public)},
			Replace: []string{"cidr", "zone"}, DependsOn: []string{vpc}})
		if s.Public {
			n.Public = append(n.Public, Key(KindSubnet, s.Name()))
		} else {
			n.Private = append(n.Private, Key(KindSubnet, s.Name()))
		}
	}
	igw := Key(KindIGW, name)
	add(cluster.Resource{Kind: KindIGW, Name: name, Fields: map[string]string{"vpc": vpc}, DependsOn: []string{vpc}})
	var natZones []string
	switch nat {
	case NATSingle:
		natZones = zones[:1]
	case NATPerAZ:
		natZones = zones
	}
	for _, z := range natZones {
		eip := Key(KindEIP, "nat-"+z)
		add(cluster.Resource{Kind: KindEIP, Name: "nat-" + z, Fields: map[string]string{"domain": "vpc"}, DependsOn: []string{igw}})
		add(cluster.Resource{Kind: KindNAT, Name: z, Fields: map[string]string{"subnet": Key(KindSubnet, "public-"+z), "eip": eip},
			Replace: []string{"subnet", "eip"}, DependsOn: []string{Key(KindSubnet, "public-"+z), eip, igw}})
	}
	add(cluster.Resource{Kind: KindRouteTable, Name: "public", Fields: map[string]string{"default": igw, "subnets": strings.Join(Names(n.Public), ",")},
		DependsOn: append([]string{vpc, igw}, n.Public...)})
	n.Routes = append(n.Routes, Key(KindRouteTable, "public"))
	// Private route tables: one per NAT gateway's zone (perAZ), else one for all private subnets.
	if nat == NATPerAZ {
		for _, z := range zones {
			sn := Key(KindSubnet, "private-"+z)
			add(cluster.Resource{Kind: KindRouteTable, Name: "private-" + z, Fields: map[string]string{"default": Key(KindNAT, z), "subnets": "private-" + z},
				DependsOn: []string{vpc, sn, Key(KindNAT, z)}})
			n.Routes = append(n.Routes, Key(KindRouteTable, "private-"+z))
		}
	} else {
		f := map[string]string{"default": "", "subnets": strings.Join(Names(n.Private), ",")}
		deps := append([]string{vpc}, n.Private...)
		if nat == NATSingle {
			f["default"] = Key(KindNAT, zones[0])
			deps = append(deps, Key(KindNAT, zones[0]))
		}
		add(cluster.Resource{Kind: KindRouteTable, Name: "private", Fields: f, DependsOn: deps})
		n.Routes = append(n.Routes, Key(KindRouteTable, "private"))
	}
	return n
}

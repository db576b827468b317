package eks

import (
	"fmt"
	"net/netip"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// DefaultVPCCIDR is the VPC network when spec.networking.vpcCIDR is not set.
const DefaultVPCCIDR = "10.0.0.0/16"

// Subnet is one subnet nuv makes: private subnets hold the nodes, public ones the NAT gateways and
// load balancers.
type Subnet struct {
	Zone   string
	CIDR   string
	Public bool
}

// Name is the subnet's resource name: "private-us-east-1a", "public-us-east-1b".
func (s Subnet) Name() string {
	if s.Public {
		return "public-" + s.Zone
	}
	return "private-" + s.Zone
}

// CarveSubnets places a private and a public subnet in each zone. Unless given explicitly, their
// networks are carved from the VPC's: the VPC is cut in eight equal parts, private subnets take
// the first ones and public subnets the ones from the fifth on (a /16 gives /19 subnets, room for
// 8190 addresses each). Every problem is returned with its field path: an invalid or misaligned
// CIDR, a VPC too small to carve, a subnet outside the VPC, two subnets that overlap.
func CarveSubnets(vpcCIDR string, zones []string, public, private []string) ([]Subnet, []spec.FieldError) {
	var errs []spec.FieldError
	fail := func(path, f string, a ...any) { errs = append(errs, spec.Errorf(path, f, a...)) }
	vpcPath := "spec.networking.vpcCIDR"
	if vpcCIDR == "" {
		vpcCIDR = DefaultVPCCIDR
	}
	vpc, err := netip.ParsePrefix(vpcCIDR)
	if err != nil || !vpc.Addr().Is4() {
		fail(vpcPath, "invalid IPv4 CIDR %q", vpcCIDR)
		return nil, errs
	}
	if vpc.Masked() != vpc {
		fail(vpcPath, "%q has host bits set (did you mean %s?)", vpcCIDR, vpc.Masked())
		return nil, errs
	}
	if vpc.Bits() < 16 || vpc.Bits() > 24 {
		fail(vpcPath, "%s: an EKS VPC that nuv carves into subnets is a /16 to a /24 (AWS allows /16 to /28 per VPC)", vpcCIDR)
		return nil, errs
	}
	var out []Subnet
	type placed struct {
		path string
		pfx  netip.Prefix
	}
	var all []placed
	for _, pub := range []bool{false, true} {
		given, field, first := private, "privateSubnetCIDRs", 0
		if pub {
			given, field, first = public, "publicSubnetCIDRs", 4
		}
		path := "spec.eks." + field
		if len(given) > 0 && len(given) != len(zones) {
			fail(path, "%d CIDRs for %d zones: give one per zone (%v)", len(given), len(zones), zones)
			continue
		}
		for i, z := range zones {
			var pfx netip.Prefix
			p := fmt.Sprintf("%s[%d]", path, i)
			if len(given) > 0 {
				pfx, err = netip.ParsePrefix(given[i])
				if err != nil || !pfx.Addr().Is4() {
					fail(p, "invalid IPv4 CIDR %q", given[i])
					continue
				}
				if pfx.Masked() != pfx {
					fail(p, "%q has host bits set (did you mean %s?)", given[i], pfx.Masked())
					continue
				}
				if !vpc.Contains(pfx.Addr()) || pfx.Bits() < vpc.Bits() {
					fail(p, "%s is not inside the VPC %s", pfx, vpc)
					continue
				}
				if pfx.Bits() > 28 {
					fail(p, "%s: AWS subnets are /16 to /28", pfx)
					continue
				}
			} else {
				pfx = nth(vpc, vpc.Bits()+3, first+i)
				p = vpcPath
			}
			for _, o := range all {
				if o.pfx.Overlaps(pfx) {
					fail(p, "subnet %s overlaps subnet %s (%s)", pfx, o.pfx, o.path)
				}
			}
			all = append(all, placed{p, pfx})
			out = append(out, Subnet{Zone: z, CIDR: pfx.String(), Public: pub})
		}
	}
	return out, errs
}

// nth is the i-th subnet of length bits inside p.
func nth(p netip.Prefix, bits, i int) netip.Prefix {
	a := p.Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += uint32(i) << (32 - bits)
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), bits)
}

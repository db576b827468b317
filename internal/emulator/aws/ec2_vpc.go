package aws

import (
	"crypto/rand"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"
)

func (s *Server) ec2CreateVpc(p params) (any, error) {
	e := s.ec2()
	c, err := p.required("CidrBlock")
	if err != nil {
		return nil, err
	}
	pfx, err := parseCIDR(c)
	if err != nil || pfx.Bits() < 16 || pfx.Bits() > 28 {
		return nil, errf(400, "InvalidVpc.Range", "The CIDR '%s' is invalid. (a VPC takes an IPv4 block between /16 and /28)", c)
	}
	tags, err := tagsFor(p, "vpc")
	if err != nil {
		return nil, err
	}
	v := &ec2Vpc{VpcID: awsID("vpc"), State: "available", CidrBlock: pfx.String(), DhcpOptionsID: awsID("dopt"), InstanceTenancy: "default",
		OwnerID: s.St.Account, Tags: tags, EnableDNSSupport: true}
	sg := s.newSecurityGroup(v.VpcID, "default", "default VPC security group", nil)
	sg.Ingress = []sgRule{{Protocol: "-1", Group: sg.GroupID}}
	v.DefaultSG = sg.GroupID
	rt := &ec2RouteTable{RouteTableID: awsID("rtb"), VpcID: v.VpcID, OwnerID: s.St.Account,
		Routes: []ec2Route{{DestinationCidrBlock: v.CidrBlock, GatewayID: "local", State: "active", Origin: "CreateRouteTable"}}}
	rt.Associations = []ec2RTAssoc{{RouteTableAssociationID: awsID("rtbassoc"), RouteTableID: rt.RouteTableID, Main: true, AssociationState: ec2AssocState{"associated"}}}
	e.RouteTables[rt.RouteTableID] = rt
	v.MainRouteTable = rt.RouteTableID
	e.Vpcs[v.VpcID] = v
	return &struct {
		ec2Meta
		Vpc *xmlVpc `xml:"vpc"`
	}{Vpc: v.wire()}, nil
}

func (s *Server) vpc(id string) (*ec2Vpc, error) {
	v := s.ec2().Vpcs[id]
	if v == nil {
		return nil, errf(400, "InvalidVpcID.NotFound", "The vpc ID '%s' does not exist", id)
	}
	return v, nil
}

func (s *Server) ec2DescribeVpcs(p params) (any, error) {
	vpcs, err := selectEC2(s.ec2().Vpcs, p.list("VpcId"), func(id string) error { _, err := s.vpc(id); return err }, p.filters(), nil,
		func(v *ec2Vpc) []ec2Tag { return v.Tags },
		func(v *ec2Vpc) map[string][]string {
			return map[string][]string{"vpc-id": {v.VpcID}, "cidr": {v.CidrBlock}, "cidr-block-association.cidr-block": {v.CidrBlock}, "state": {v.State},
				"owner-id": {v.OwnerID}, "is-default": {strconv.FormatBool(v.IsDefault)}, "dhcp-options-id": {v.DhcpOptionsID}}
		})
	return &struct {
		ec2Meta
		Vpcs []*xmlVpc `xml:"vpcSet>item"`
	}{Vpcs: wireAll(vpcs, (*ec2Vpc).wire)}, err
}

func (s *Server) ec2DeleteVpc(p params) (any, error) {
	e := s.ec2()
	id, err := p.required("VpcId")
	if err != nil {
		return nil, err
	}
	v, err := s.vpc(id)
	if err != nil {
		return nil, err
	}
	var deps []string
	for _, sn := range e.Subnets {
		if sn.VpcID == id {
			deps = append(deps, sn.SubnetID)
		}
	}
	for _, g := range e.InternetGateways {
		for _, a := range g.Attachments {
			if a.VpcID == id {
				deps = append(deps, g.InternetGatewayID)
			}
		}
	}
	for _, g := range e.SecurityGroups {
		if g.VpcID == id && g.GroupID != v.DefaultSG {
			deps = append(deps, g.GroupID)
		}
	}
	for _, rt := range e.RouteTables {
		if rt.VpcID == id && rt.RouteTableID != v.MainRouteTable {
			deps = append(deps, rt.RouteTableID)
		}
	}
	for _, n := range e.NatGateways {
		if n.VpcID == id && n.State != "deleted" {
			deps = append(deps, n.NatGatewayID)
		}
	}
	if len(deps) > 0 {
		sort.Strings(deps)
		return nil, errf(400, "DependencyViolation", "The vpc '%s' has dependencies and cannot be deleted. (nuv emulator: %s)", id, strings.Join(deps, ", "))
	}
	delete(e.SecurityGroups, v.DefaultSG)
	delete(e.RouteTables, v.MainRouteTable)
	delete(e.Vpcs, id)
	return &ec2Return{Return: true}, nil
}

func (s *Server) ec2ModifyVpcAttribute(p params) (any, error) {
	id, err := p.required("VpcId")
	if err != nil {
		return nil, err
	}
	v, err := s.vpc(id)
	if err != nil {
		return nil, err
	}
	sup, hosts := p.get("EnableDnsSupport.Value"), p.get("EnableDnsHostnames.Value")
	switch {
	case sup != "" && hosts != "":
		return nil, errf(400, "InvalidParameterCombination", "Fields for multiple attribute types specified: enableDnsSupport, enableDnsHostnames")
	case sup != "":
		v.EnableDNSSupport = sup == "true"
	case hosts != "":
		if hosts == "true" && !v.EnableDNSSupport {
			return nil, errf(400, "InvalidParameterValue", "Cannot enable DNS hostnames without DNS support")
		}
		v.EnableDNSHosts = hosts == "true"
	default:
		return nil, errf(400, "InvalidParameterCombination", "No attributes specified.")
	}
	return &ec2Return{Return: true}, nil
}

func (s *Server) ec2DescribeVpcAttribute(p params) (any, error) {
	id, err := p.required("VpcId")
	if err != nil {
		return nil, err
	}
	v, err := s.vpc(id)
	if err != nil {
		return nil, err
	}
	type val struct {
		Value bool `xml:"value"`
	}
	out := &struct {
		ec2Meta
		VpcID   string `xml:"vpcId"`
		DNSSup  *val   `xml:"enableDnsSupport,omitempty"`
		DNSHost *val   `xml:"enableDnsHostnames,omitempty"`
	}{VpcID: id}
	switch a := p.get("Attribute"); a {
	case "enableDnsSupport":
		out.DNSSup = &val{v.EnableDNSSupport}
	case "enableDnsHostnames":
		out.DNSHost = &val{v.EnableDNSHosts}
	default:
		return nil, errf(400, "InvalidParameterValue", "Value (%s) for parameter attribute is invalid (enableDnsSupport or enableDnsHostnames)", a)
	}
	return out, nil
}

func (s *Server) ec2CreateSubnet(p params) (any, error) {
	e := s.ec2()
	vpcID, err := p.required("VpcId")
	if err != nil {
		return nil, err
	}
	v, err := s.vpc(vpcID)
	if err != nil {
		return nil, err
	}
	c, err := p.required("CidrBlock")
	if err != nil {
		return nil, err
	}
	pfx, err := parseCIDR(c)
	if err != nil || pfx.Bits() < 16 || pfx.Bits() > 28 {
		return nil, errf(400, "InvalidSubnet.Range", "The CIDR '%s' is invalid.", c)
	}
	vpfx, _ := parseCIDR(v.CidrBlock)
	if !vpfx.Contains(pfx.Addr()) || pfx.Bits() < vpfx.Bits() {
		return nil, errf(400, "InvalidSubnet.Range", "The CIDR '%s' is invalid. (it is not within the VPC's %s)", c, v.CidrBlock)
	}
	for _, sn := range e.Subnets {
		if sn.VpcID != vpcID {
			continue
		}
		if o, _ := parseCIDR(sn.CidrBlock); overlaps(o, pfx) {
			return nil, errf(400, "InvalidSubnet.Conflict", "The CIDR '%s' conflicts with another subnet (%s, %s)", c, sn.SubnetID, sn.CidrBlock)
		}
	}
	zone := p.get("AvailabilityZone")
	if zid := p.get("AvailabilityZoneId"); zone == "" && zid != "" {
		for _, z := range s.zones() {
			if zoneID(z) == zid {
				zone = z
			}
		}
		if zone == "" {
			return nil, errf(400, "InvalidParameterValue", "Value (%s) for parameter availabilityZoneId is invalid.", zid)
		}
	}
	if zone == "" {
		zone = s.zones()[0]
	}
	if !contains(s.zones(), zone) {
		return nil, errf(400, "InvalidParameterValue", "Value (%s) for parameter availabilityZone is invalid. Subnets can currently only be created in the following availability zones: %s.", zone, strings.Join(s.zones(), ", "))
	}
	tags, err := tagsFor(p, "subnet")
	if err != nil {
		return nil, err
	}
	id := awsID("subnet")
	sn := &ec2Subnet{SubnetID: id, SubnetArn: fmt.Sprintf("arn:aws:ec2:%s:%s:subnet/%s", s.St.Region, s.St.Account, id), State: "available",
		VpcID: vpcID, CidrBlock: pfx.String(), AvailableIPAddressCount: 1<<(32-pfx.Bits()) - 5, AvailabilityZone: zone,
		AvailabilityZoneID: zoneID(zone), OwnerID: s.St.Account, Tags: tags}
	e.Subnets[id] = sn
	return &struct {
		ec2Meta
		Subnet *ec2Subnet `xml:"subnet"`
	}{Subnet: sn}, nil
}

func (s *Server) ec2DescribeSubnets(p params) (any, error) {
	subnets, err := selectEC2(s.ec2().Subnets, p.list("SubnetId"), func(id string) error {
		return errf(400, "InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", id)
	}, p.filters(), nil,
		func(sn *ec2Subnet) []ec2Tag { return sn.Tags },
		func(sn *ec2Subnet) map[string][]string {
			return map[string][]string{"subnet-id": {sn.SubnetID}, "vpc-id": {sn.VpcID}, "cidr-block": {sn.CidrBlock}, "cidr": {sn.CidrBlock},
				"availability-zone": {sn.AvailabilityZone}, "availability-zone-id": {sn.AvailabilityZoneID}, "state": {sn.State},
				"map-public-ip-on-launch": {strconv.FormatBool(sn.MapPublicIPOnLaunch)}, "owner-id": {sn.OwnerID}, "default-for-az": {strconv.FormatBool(sn.DefaultForAz)}}
		})
	return &struct {
		ec2Meta
		Subnets []*ec2Subnet `xml:"subnetSet>item"`
	}{Subnets: subnets}, err
}

func (s *Server) ec2DeleteSubnet(p params) (any, error) {
	e := s.ec2()
	id, err := p.required("SubnetId")
	if err != nil {
		return nil, err
	}
	if e.Subnets[id] == nil {
		return nil, errf(400, "InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", id)
	}
	var deps []string
	for _, n := range e.NatGateways {
		if n.SubnetID == id && n.State != "deleted" {
			deps = append(deps, n.NatGatewayID)
		}
	}
	deps = append(deps, s.instanceDeps(func(in *ec2Instance) bool { return in.SubnetID == id })...)
	for _, c := range s.St.EKS.Clusters {
		if contains(c.VPC.SubnetIDs, id) {
			deps = append(deps, "EKS cluster "+c.Name)
		}
		for _, ng := range c.NodeGroups {
			if contains(ng.Subnets, id) {
				deps = append(deps, "EKS node group "+c.Name+"/"+ng.Name)
			}
		}
	}
	deps = append(deps, s.elbSubnetDeps(id)...)
	if len(deps) > 0 {
		sort.Strings(deps)
		return nil, errf(400, "DependencyViolation", "The subnet '%s' has dependencies and cannot be deleted. (nuv emulator: %s)", id, strings.Join(deps, ", "))
	}
	for _, rt := range e.RouteTables {
		kept := rt.Associations[:0]
		for _, a := range rt.Associations {
			if a.SubnetID != id {
				kept = append(kept, a)
			}
		}
		rt.Associations = kept
	}
	delete(e.Subnets, id)
	s.subnetDeleted(id)
	return &ec2Return{Return: true}, nil
}

func (s *Server) ec2ModifySubnetAttribute(p params) (any, error) {
	id, err := p.required("SubnetId")
	if err != nil {
		return nil, err
	}
	sn := s.ec2().Subnets[id]
	if sn == nil {
		return nil, errf(400, "InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", id)
	}
	v := p.get("MapPublicIpOnLaunch.Value")
	if v == "" {
		return nil, errf(400, "InvalidParameterCombination", "nuv emulator: ModifySubnetAttribute supports MapPublicIpOnLaunch only")
	}
	sn.MapPublicIPOnLaunch = v == "true"
	return &ec2Return{Return: true}, nil
}

func (s *Server) igw(id string) (*ec2IGW, error) {
	g := s.ec2().InternetGateways[id]
	if g == nil {
		return nil, errf(400, "InvalidInternetGatewayID.NotFound", "The internetGateway ID '%s' does not exist", id)
	}
	return g, nil
}

func (s *Server) ec2CreateIGW(p params) (any, error) {
	tags, err := tagsFor(p, "internet-gateway")
	if err != nil {
		return nil, err
	}
	g := &ec2IGW{InternetGatewayID: awsID("igw"), OwnerID: s.St.Account, Tags: tags, Attachments: []ec2Attachment{}}
	s.ec2().InternetGateways[g.InternetGatewayID] = g
	return &struct {
		ec2Meta
		IGW *ec2IGW `xml:"internetGateway"`
	}{IGW: g}, nil
}

func (s *Server) ec2DescribeIGWs(p params) (any, error) {
	igws, err := selectEC2(s.ec2().InternetGateways, p.list("InternetGatewayId"), func(id string) error { _, err := s.igw(id); return err }, p.filters(), nil,
		func(g *ec2IGW) []ec2Tag { return g.Tags },
		func(g *ec2IGW) map[string][]string {
			var vpcs, states []string
			for _, a := range g.Attachments {
				vpcs, states = append(vpcs, a.VpcID), append(states, a.State)
			}
			return map[string][]string{"internet-gateway-id": {g.InternetGatewayID}, "attachment.vpc-id": vpcs, "attachment.state": states, "owner-id": {g.OwnerID}}
		})
	return &struct {
		ec2Meta
		IGWs []*ec2IGW `xml:"internetGatewaySet>item"`
	}{IGWs: igws}, err
}

func (s *Server) ec2AttachIGW(p params) (any, error) {
	g, err := s.igw(p.get("InternetGatewayId"))
	if err != nil {
		return nil, err
	}
	v, err := s.vpc(p.get("VpcId"))
	if err != nil {
		return nil, err
	}
	if len(g.Attachments) > 0 {
		return nil, errf(400, "Resource.AlreadyAssociated", "resource %s is already attached to network %s", g.InternetGatewayID, g.Attachments[0].VpcID)
	}
	for _, o := range s.ec2().InternetGateways {
		for _, a := range o.Attachments {
			if a.VpcID == v.VpcID {
				return nil, errf(400, "Resource.AlreadyAssociated", "network %s already has an internet gateway attached (%s)", v.VpcID, o.InternetGatewayID)
			}
		}
	}
	g.Attachments = []ec2Attachment{{VpcID: v.VpcID, State: "available"}}
	return &ec2Return{Return: true}, nil
}

func (s *Server) ec2DetachIGW(p params) (any, error) {
	g, err := s.igw(p.get("InternetGatewayId"))
	if err != nil {
		return nil, err
	}
	vpcID := p.get("VpcId")
	if _, err := s.vpc(vpcID); err != nil {
		return nil, err
	}
	if len(g.Attachments) == 0 || g.Attachments[0].VpcID != vpcID {
		return nil, errf(400, "Gateway.NotAttached", "resource %s is not attached to network %s", g.InternetGatewayID, vpcID)
	}
	for _, n := range s.ec2().NatGateways {
		if n.VpcID == vpcID && n.ConnectivityType == "public" && n.State != "deleted" {
			return nil, errf(400, "DependencyViolation", "Network %s has some mapped public address(es). Please unmap those public address(es) before detaching the gateway. (nuv emulator: %s)", vpcID, n.NatGatewayID)
		}
	}
	g.Attachments = []ec2Attachment{}
	return &ec2Return{Return: true}, nil
}

func (s *Server) ec2DeleteIGW(p params) (any, error) {
	g, err := s.igw(p.get("InternetGatewayId"))
	if err != nil {
		return nil, err
	}
	if len(g.Attachments) > 0 {
		return nil, errf(400, "DependencyViolation", "The internetGateway '%s' has dependencies and cannot be deleted. (attached to %s)", g.InternetGatewayID, g.Attachments[0].VpcID)
	}
	delete(s.ec2().InternetGateways, g.InternetGatewayID)
	return &ec2Return{Return: true}, nil
}

func (s *Server) ec2AllocateAddress(p params) (any, error) {
	if d := p.get("Domain"); d != "" && d != "vpc" {
		return nil, errf(400, "InvalidParameterValue", "Invalid value '%s' for domain (only vpc)", d)
	}
	tags, err := tagsFor(p, "elastic-ip")
	if err != nil {
		return nil, err
	}
	var n [3]byte
	_, _ = rand.Read(n[:])
	ip := net.IPv4(3, n[0], n[1], n[2]).String()
	a := &ec2Address{PublicIP: ip, AllocationID: awsID("eipalloc"), Domain: "vpc", NetworkBorderGroup: s.St.Region, Tags: tags}
	s.ec2().Addresses[a.AllocationID] = a
	return &struct {
		ec2Meta
		PublicIP           string   `xml:"publicIp"`
		AllocationID       string   `xml:"allocationId"`
		Domain             string   `xml:"domain"`
		NetworkBorderGroup string   `xml:"networkBorderGroup"`
		Tags               []ec2Tag `xml:"tagSet>item"`
	}{PublicIP: a.PublicIP, AllocationID: a.AllocationID, Domain: a.Domain, NetworkBorderGroup: a.NetworkBorderGroup, Tags: a.Tags}, nil
}

func (s *Server) ec2DescribeAddresses(p params) (any, error) {
	ips := p.list("PublicIp")
	addrs, err := selectEC2(s.ec2().Addresses, p.list("AllocationId"), func(id string) error {
		return errf(400, "InvalidAllocationID.NotFound", "The allocation ID '%s' does not exist", id)
	}, p.filters(),
		func(a *ec2Address) bool { return len(ips) == 0 || contains(ips, a.PublicIP) },
		func(a *ec2Address) []ec2Tag { return a.Tags },
		func(a *ec2Address) map[string][]string {
			return map[string][]string{"allocation-id": {a.AllocationID}, "public-ip": {a.PublicIP}, "domain": {a.Domain}, "association-id": {a.AssociationID}, "network-interface-id": {a.NetworkInterfaceID}}
		})
	return &struct {
		ec2Meta
		Addresses []*ec2Address `xml:"addressesSet>item"`
	}{Addresses: addrs}, err
}

func (s *Server) ec2ReleaseAddress(p params) (any, error) {
	id, err := p.required("AllocationId")
	if err != nil {
		return nil, err
	}
	a := s.ec2().Addresses[id]
	if a == nil {
		return nil, errf(400, "InvalidAllocationID.NotFound", "The allocation ID '%s' does not exist", id)
	}
	if a.AssociationID != "" {
		return nil, errf(400, "InvalidIPAddress.InUse", "Address %s is in use. (nuv emulator: by network interface %s)", a.PublicIP, a.NetworkInterfaceID)
	}
	delete(s.ec2().Addresses, id)
	return &ec2Return{Return: true}, nil
}

func (s *Server) nat(id string) (*ec2Nat, error) {
	n := s.ec2().NatGateways[id]
	if n == nil {
		return nil, errf(400, "NatGatewayNotFound", "The Nat Gateway %s was not found", id)
	}
	return n, nil
}

func (s *Server) ec2CreateNat(p params) (any, error) {
	e := s.ec2()
	snID, err := p.required("SubnetId")
	if err != nil {
		return nil, err
	}
	sn := e.Subnets[snID]
	if sn == nil {
		return nil, errf(400, "InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", snID)
	}
	ct := p.get("ConnectivityType")
	if ct == "" {
		ct = "public"
	}
	if ct != "public" && ct != "private" {
		return nil, errf(400, "InvalidParameterValue", "Value (%s) for parameter connectivityType is invalid (public or private)", ct)
	}
	tags, err := tagsFor(p, "natgateway")
	if err != nil {
		return nil, err
	}
	pfx, _ := parseCIDR(sn.CidrBlock)
	addr := ec2NatAddress{PrivateIP: pfx.Addr().Next().Next().Next().Next().String(), NetworkInterfaceID: awsID("eni"), IsPrimary: true, Status: "succeeded"}
	if ct == "public" {
		allocID := p.get("AllocationId")
		a := e.Addresses[allocID]
		if allocID == "" || a == nil {
			return nil, errf(400, "InvalidAllocationID.NotFound", "The allocation ID '%s' does not exist", allocID)
		}
		if a.AssociationID != "" {
			return nil, errf(400, "Resource.AlreadyAssociated", "Elastic IP address [%s] is already associated", allocID)
		}
		a.AssociationID, a.NetworkInterfaceID, a.PrivateIP = awsID("eipassoc"), addr.NetworkInterfaceID, addr.PrivateIP
		addr.AllocationID, addr.PublicIP = a.AllocationID, a.PublicIP
	}
	n := &ec2Nat{NatGatewayID: "nat-0" + randFrom(hexDigits, 16), SubnetID: snID, VpcID: sn.VpcID, State: "pending",
		CreateTime: time.Now().UTC().Truncate(time.Second), ConnectivityType: ct, Addresses: []ec2NatAddress{addr}, Tags: tags, Due: time.Now().Add(s.Delay)}
	e.NatGateways[n.NatGatewayID] = n
	return &struct {
		ec2Meta
		ClientToken string  `xml:"clientToken,omitempty"`
		Nat         *xmlNat `xml:"natGateway"`
	}{ClientToken: p.get("ClientToken"), Nat: n.wire()}, nil
}

func (s *Server) ec2DescribeNats(p params) (any, error) {
	nats, err := selectEC2(s.ec2().NatGateways, p.list("NatGatewayId"), func(id string) error { _, err := s.nat(id); return err }, p.filters(), nil,
		func(n *ec2Nat) []ec2Tag { return n.Tags },
		func(n *ec2Nat) map[string][]string {
			return map[string][]string{"nat-gateway-id": {n.NatGatewayID}, "state": {n.State}, "subnet-id": {n.SubnetID}, "vpc-id": {n.VpcID}}
		})
	return &struct {
		ec2Meta
		Nats []*xmlNat `xml:"natGatewaySet>item"`
	}{Nats: wireAll(nats, (*ec2Nat).wire)}, err
}

func (s *Server) ec2DeleteNat(p params) (any, error) {
	n, err := s.nat(p.get("NatGatewayId"))
	if err != nil {
		return nil, err
	}
	if n.State != "deleting" && n.State != "deleted" {
		n.State, n.Due = "deleting", time.Now().Add(s.Delay)
	}
	return &struct {
		ec2Meta
		ID string `xml:"natGatewayId"`
	}{ID: n.NatGatewayID}, nil
}

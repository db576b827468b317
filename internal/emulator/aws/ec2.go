package aws

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// ec2State is EC2's part of the state, each kind of resource by id.
type ec2State struct {
	Vpcs             map[string]*ec2Vpc        `json:"vpcs"`
	Subnets          map[string]*ec2Subnet     `json:"subnets"`
	InternetGateways map[string]*ec2IGW        `json:"internetGateways"`
	Addresses        map[string]*ec2Address    `json:"addresses"`
	NatGateways      map[string]*ec2Nat        `json:"natGateways"`
	RouteTables      map[string]*ec2RouteTable `json:"routeTables"`
	SecurityGroups   map[string]*ec2SG         `json:"securityGroups"`
	ec2Machines                                // instances, key pairs (ec2_instances.go)
}

type ec2Tag struct {
	Key   string `xml:"key" json:"key"`
	Value string `xml:"value" json:"value"`
}

type ec2Vpc struct {
	VpcID            string   `json:"vpcId"`
	State            string   `json:"state"`
	CidrBlock        string   `json:"cidrBlock"`
	DhcpOptionsID    string   `json:"dhcpOptionsId"`
	InstanceTenancy  string   `json:"instanceTenancy"`
	IsDefault        bool     `json:"isDefault"`
	OwnerID          string   `json:"ownerId"`
	Tags             []ec2Tag `json:"tags"`
	EnableDNSSupport bool     `json:"enableDnsSupport"`
	EnableDNSHosts   bool     `json:"enableDnsHostnames"`
	DefaultSG        string   `json:"defaultSecurityGroup"`
	MainRouteTable   string   `json:"mainRouteTable"`
}

type ec2Subnet struct {
	SubnetID                string   `xml:"subnetId" json:"subnetId"`
	SubnetArn               string   `xml:"subnetArn" json:"subnetArn"`
	State                   string   `xml:"state" json:"state"`
	VpcID                   string   `xml:"vpcId" json:"vpcId"`
	CidrBlock               string   `xml:"cidrBlock" json:"cidrBlock"`
	AvailableIPAddressCount int      `xml:"availableIpAddressCount" json:"availableIpAddressCount"`
	AvailabilityZone        string   `xml:"availabilityZone" json:"availabilityZone"`
	AvailabilityZoneID      string   `xml:"availabilityZoneId" json:"availabilityZoneId"`
	DefaultForAz            bool     `xml:"defaultForAz" json:"defaultForAz"`
	MapPublicIPOnLaunch     bool     `xml:"mapPublicIpOnLaunch" json:"mapPublicIpOnLaunch"`
	OwnerID                 string   `xml:"ownerId" json:"ownerId"`
	Tags                    []ec2Tag `xml:"tagSet>item" json:"tags"`
}

type ec2Attachment struct {
	VpcID string `xml:"vpcId" json:"vpcId"`
	State string `xml:"state" json:"state"`
}

type ec2IGW struct {
	InternetGatewayID string          `xml:"internetGatewayId" json:"internetGatewayId"`
	OwnerID           string          `xml:"ownerId" json:"ownerId"`
	Attachments       []ec2Attachment `xml:"attachmentSet>item" json:"attachments"`
	Tags              []ec2Tag        `xml:"tagSet>item" json:"tags"`
}

type ec2Address struct {
	PublicIP           string   `xml:"publicIp" json:"publicIp"`
	AllocationID       string   `xml:"allocationId" json:"allocationId"`
	Domain             string   `xml:"domain" json:"domain"`
	AssociationID      string   `xml:"associationId,omitempty" json:"associationId,omitempty"`
	NetworkInterfaceID string   `xml:"networkInterfaceId,omitempty" json:"networkInterfaceId,omitempty"`
	PrivateIP          string   `xml:"privateIpAddress,omitempty" json:"privateIpAddress,omitempty"`
	NetworkBorderGroup string   `xml:"networkBorderGroup" json:"networkBorderGroup"`
	Tags               []ec2Tag `xml:"tagSet>item" json:"tags"`
}

type ec2NatAddress struct {
	AllocationID       string `xml:"allocationId,omitempty" json:"allocationId,omitempty"`
	PublicIP           string `xml:"publicIp,omitempty" json:"publicIp,omitempty"`
	PrivateIP          string `xml:"privateIp" json:"privateIp"`
	NetworkInterfaceID string `xml:"networkInterfaceId" json:"networkInterfaceId"`
	IsPrimary          bool   `xml:"isPrimary" json:"isPrimary"`
	Status             string `xml:"status" json:"status"`
}

type ec2Nat struct {
	NatGatewayID     string          `json:"natGatewayId"`
	SubnetID         string          `json:"subnetId"`
	VpcID            string          `json:"vpcId"`
	State            string          `json:"state"`
	CreateTime       time.Time       `json:"createTime"`
	DeleteTime       *time.Time      `json:"deleteTime,omitempty"`
	ConnectivityType string          `json:"connectivityType"`
	Addresses        []ec2NatAddress `json:"addresses"`
	Tags             []ec2Tag        `json:"tags"`
	Due              time.Time       `json:"due"`
}

type ec2Route struct {
	DestinationCidrBlock string `xml:"destinationCidrBlock" json:"destinationCidrBlock"`
	GatewayID            string `xml:"gatewayId,omitempty" json:"gatewayId,omitempty"`
	NatGatewayID         string `xml:"natGatewayId,omitempty" json:"natGatewayId,omitempty"`
	// InstanceID and InstanceOwnerID are the target of a route to an instance (its primary
	// network interface): what kOps' and nuv's pod routes are.
	InstanceID      string `xml:"instanceId,omitempty" json:"instanceId,omitempty"`
	InstanceOwnerID string `xml:"instanceOwnerId,omitempty" json:"instanceOwnerId,omitempty"`
	State           string `xml:"state" json:"state"`
	Origin          string `xml:"origin" json:"origin"`
}

type ec2AssocState struct {
	State string `xml:"state" json:"state"`
}

type ec2RTAssoc struct {
	RouteTableAssociationID string        `xml:"routeTableAssociationId" json:"routeTableAssociationId"`
	RouteTableID            string        `xml:"routeTableId" json:"routeTableId"`
	SubnetID                string        `xml:"subnetId,omitempty" json:"subnetId,omitempty"`
	Main                    bool          `xml:"main" json:"main"`
	AssociationState        ec2AssocState `xml:"associationState" json:"associationState"`
}

type ec2RouteTable struct {
	RouteTableID string       `xml:"routeTableId" json:"routeTableId"`
	VpcID        string       `xml:"vpcId" json:"vpcId"`
	OwnerID      string       `xml:"ownerId" json:"ownerId"`
	Routes       []ec2Route   `xml:"routeSet>item" json:"routes"`
	Associations []ec2RTAssoc `xml:"associationSet>item" json:"associations"`
	Tags         []ec2Tag     `xml:"tagSet>item" json:"tags"`
}

// The EC2 query protocol's forms of the resources whose state holds more than EC2 answers (a VPC's
// DNS attributes, default security group and main route table; a NAT gateway's due time): what
// Describe* and Create* answer, made from the state at the edge (wire). Resources whose state is
// exactly their answer (subnets, internet gateways, addresses, route tables) and the small value
// types inside all of them (tags, attachments, routes) keep one struct with both tags.

type xmlVpc struct {
	VpcID           string   `xml:"vpcId"`
	State           string   `xml:"state"`
	CidrBlock       string   `xml:"cidrBlock"`
	DhcpOptionsID   string   `xml:"dhcpOptionsId"`
	InstanceTenancy string   `xml:"instanceTenancy"`
	IsDefault       bool     `xml:"isDefault"`
	OwnerID         string   `xml:"ownerId"`
	Tags            []ec2Tag `xml:"tagSet>item"`
}

type xmlNat struct {
	NatGatewayID     string          `xml:"natGatewayId"`
	SubnetID         string          `xml:"subnetId"`
	VpcID            string          `xml:"vpcId"`
	State            string          `xml:"state"`
	CreateTime       time.Time       `xml:"createTime"`
	DeleteTime       *time.Time      `xml:"deleteTime,omitempty"`
	ConnectivityType string          `xml:"connectivityType"`
	Addresses        []ec2NatAddress `xml:"natGatewayAddressSet>item"`
	Tags             []ec2Tag        `xml:"tagSet>item"`
}

func (x *ec2Vpc) wire() *xmlVpc {
	return &xmlVpc{VpcID: x.VpcID, State: x.State, CidrBlock: x.CidrBlock, DhcpOptionsID: x.DhcpOptionsID, InstanceTenancy: x.InstanceTenancy, IsDefault: x.IsDefault, OwnerID: x.OwnerID, Tags: x.Tags}
}

func (x *ec2Nat) wire() *xmlNat {
	return &xmlNat{NatGatewayID: x.NatGatewayID, SubnetID: x.SubnetID, VpcID: x.VpcID, State: x.State, CreateTime: x.CreateTime, DeleteTime: x.DeleteTime, ConnectivityType: x.ConnectivityType, Addresses: x.Addresses, Tags: x.Tags}
}

// wireAll is the wire form of each of xs.
func wireAll[T any, W any](xs []*T, wire func(*T) *W) []*W {
	out := make([]*W, 0, len(xs))
	for _, x := range xs {
		out = append(out, wire(x))
	}
	return out
}

// sgRule is one rule of a security group, flattened (one peer per rule).
type sgRule struct {
	Protocol string `json:"protocol"`
	From     int    `json:"from"`
	To       int    `json:"to"`
	Cidr     string `json:"cidr,omitempty"`
	Group    string `json:"group,omitempty"`
	Desc     string `json:"description,omitempty"`
}

type ec2SG struct {
	GroupID     string   `json:"groupId"`
	GroupName   string   `json:"groupName"`
	Description string   `json:"description"`
	VpcID       string   `json:"vpcId"`
	OwnerID     string   `json:"ownerId"`
	Ingress     []sgRule `json:"ingress"`
	Egress      []sgRule `json:"egress"`
	Tags        []ec2Tag `json:"tags"`
}

// XML forms of security groups.
type xmlIPRange struct {
	CidrIP      string `xml:"cidrIp"`
	Description string `xml:"description,omitempty"`
}

type xmlGroupPair struct {
	GroupID     string `xml:"groupId"`
	UserID      string `xml:"userId"`
	Description string `xml:"description,omitempty"`
}

type xmlPermission struct {
	IPProtocol string         `xml:"ipProtocol"`
	FromPort   *int           `xml:"fromPort,omitempty"`
	ToPort     *int           `xml:"toPort,omitempty"`
	Groups     []xmlGroupPair `xml:"groups>item"`
	IPRanges   []xmlIPRange   `xml:"ipRanges>item"`
}

type xmlSG struct {
	OwnerID       string          `xml:"ownerId"`
	GroupID       string          `xml:"groupId"`
	GroupName     string          `xml:"groupName"`
	Description   string          `xml:"groupDescription"`
	VpcID         string          `xml:"vpcId"`
	SecurityGroup string          `xml:"securityGroupArn"`
	Ingress       []xmlPermission `xml:"ipPermissions>item"`
	Egress        []xmlPermission `xml:"ipPermissionsEgress>item"`
	Tags          []ec2Tag        `xml:"tagSet>item"`
}

var ec2Actions = lazy.Value[map[string]queryHandler]{New: func() map[string]queryHandler {
	return map[string]queryHandler{
		"DescribeAvailabilityZones":     (*Server).ec2DescribeAZs,
		"CreateVpc":                     (*Server).ec2CreateVpc,
		"DescribeVpcs":                  (*Server).ec2DescribeVpcs,
		"DeleteVpc":                     (*Server).ec2DeleteVpc,
		"ModifyVpcAttribute":            (*Server).ec2ModifyVpcAttribute,
		"DescribeVpcAttribute":          (*Server).ec2DescribeVpcAttribute,
		"CreateSubnet":                  (*Server).ec2CreateSubnet,
		"DescribeSubnets":               (*Server).ec2DescribeSubnets,
		"DeleteSubnet":                  (*Server).ec2DeleteSubnet,
		"ModifySubnetAttribute":         (*Server).ec2ModifySubnetAttribute,
		"CreateInternetGateway":         (*Server).ec2CreateIGW,
		"DescribeInternetGateways":      (*Server).ec2DescribeIGWs,
		"AttachInternetGateway":         (*Server).ec2AttachIGW,
		"DetachInternetGateway":         (*Server).ec2DetachIGW,
		"DeleteInternetGateway":         (*Server).ec2DeleteIGW,
		"AllocateAddress":               (*Server).ec2AllocateAddress,
		"DescribeAddresses":             (*Server).ec2DescribeAddresses,
		"ReleaseAddress":                (*Server).ec2ReleaseAddress,
		"CreateNatGateway":              (*Server).ec2CreateNat,
		"DescribeNatGateways":           (*Server).ec2DescribeNats,
		"DeleteNatGateway":              (*Server).ec2DeleteNat,
		"CreateRouteTable":              (*Server).ec2CreateRouteTable,
		"DescribeRouteTables":           (*Server).ec2DescribeRouteTables,
		"DeleteRouteTable":              (*Server).ec2DeleteRouteTable,
		"CreateRoute":                   (*Server).ec2CreateRoute,
		"ReplaceRoute":                  (*Server).ec2ReplaceRoute,
		"DeleteRoute":                   (*Server).ec2DeleteRoute,
		"AssociateRouteTable":           (*Server).ec2AssociateRouteTable,
		"DisassociateRouteTable":        (*Server).ec2DisassociateRouteTable,
		"CreateSecurityGroup":           (*Server).ec2CreateSG,
		"DescribeSecurityGroups":        (*Server).ec2DescribeSGs,
		"DeleteSecurityGroup":           (*Server).ec2DeleteSG,
		"AuthorizeSecurityGroupIngress": (*Server).ec2AuthorizeIngress,
		"RevokeSecurityGroupIngress":    (*Server).ec2RevokeIngress,
		"AuthorizeSecurityGroupEgress":  (*Server).ec2AuthorizeEgress,
		"RevokeSecurityGroupEgress":     (*Server).ec2RevokeEgress,
		"CreateTags":                    (*Server).ec2CreateTags,
		"DeleteTags":                    (*Server).ec2DeleteTags,
		"DescribeTags":                  (*Server).ec2DescribeTags,
		"DescribeInstanceTypes":         (*Server).ec2DescribeInstanceTypes,
		"RunInstances":                  (*Server).ec2RunInstances,
		"DescribeInstances":             (*Server).ec2DescribeInstances,
		"ModifyInstanceAttribute":       (*Server).ec2ModifyInstanceAttribute,
		"DescribeInstanceAttribute":     (*Server).ec2DescribeInstanceAttribute,
		"DescribeInstanceStatus":        (*Server).ec2DescribeInstanceStatus,
		"StopInstances":                 (*Server).ec2StopInstances,
		"StartInstances":                (*Server).ec2StartInstances,
		"TerminateInstances":            (*Server).ec2TerminateInstances,
		"CreateKeyPair":                 (*Server).ec2CreateKeyPair,
		"ImportKeyPair":                 (*Server).ec2ImportKeyPair,
		"DescribeKeyPairs":              (*Server).ec2DescribeKeyPairs,
		"DeleteKeyPair":                 (*Server).ec2DeleteKeyPair,
		"DescribeImages":                (*Server).ec2DescribeImages,
	}
}}

func (s *Server) ec2() *ec2State {
	e := &s.St.EC2
	if e.Vpcs == nil {
		e.Vpcs = map[string]*ec2Vpc{}
	}
	if e.Subnets == nil {
		e.Subnets = map[string]*ec2Subnet{}
	}
	if e.InternetGateways == nil {
		e.InternetGateways = map[string]*ec2IGW{}
	}
	if e.Addresses == nil {
		e.Addresses = map[string]*ec2Address{}
	}
	if e.NatGateways == nil {
		e.NatGateways = map[string]*ec2Nat{}
	}
	if e.RouteTables == nil {
		e.RouteTables = map[string]*ec2RouteTable{}
	}
	if e.SecurityGroups == nil {
		e.SecurityGroups = map[string]*ec2SG{}
	}
	return e
}

// zones are the Availability Zones of the emulator's region.
func (s *Server) zones() []string {
	letters := "abc"
	if s.St.Region == "us-east-1" {
		letters = "abcdef"
	}
	var out []string
	for _, l := range letters {
		out = append(out, s.St.Region+string(l))
	}
	return out
}

func zoneID(zone string) string {
	region, letter := zone[:len(zone)-1], zone[len(zone)-1]
	p := strings.Split(region, "-")
	abbr := region
	if len(p) == 3 {
		abbr = p[0] + p[1][:1] + p[2]
	}
	return fmt.Sprintf("%s-az%d", abbr, letter-'a'+1)
}

func (s *Server) ec2DescribeAZs(p params) (any, error) {
	type az struct {
		ZoneName           string `xml:"zoneName"`
		ZoneState          string `xml:"zoneState"`
		RegionName         string `xml:"regionName"`
		ZoneID             string `xml:"zoneId"`
		ZoneType           string `xml:"zoneType"`
		OptInStatus        string `xml:"optInStatus"`
		GroupName          string `xml:"groupName"`
		NetworkBorderGroup string `xml:"networkBorderGroup"`
	}
	out := &struct {
		ec2Meta
		Zones []az `xml:"availabilityZoneInfo>item"`
	}{}
	names := p.list("ZoneName")
	filters := p.filters()
	for _, z := range s.zones() {
		if len(names) > 0 && !contains(names, z) {
			continue
		}
		a := az{z, "available", s.St.Region, zoneID(z), "availability-zone", "opt-in-not-required", s.St.Region, s.St.Region}
		if !matchFilters(filters, nil, func(n string) []string {
			return map[string][]string{"zone-name": {a.ZoneName}, "zone-id": {a.ZoneID}, "state": {a.ZoneState}, "region-name": {a.RegionName}, "zone-type": {a.ZoneType}}[n]
		}) {
			continue
		}
		out.Zones = append(out.Zones, a)
	}
	for _, n := range names {
		if !contains(s.zones(), n) {
			return nil, errf(400, "InvalidParameterValue", "Invalid availability zone: [%s]", n)
		}
	}
	return out, nil
}

func contains(list []string, x string) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

// matchFilters applies EC2 filters: each named filter must match one of its values (* and ?
// wildcards); tag:K, tag-key and tag-value look at tags; field gives the other fields' values.
func matchFilters(filters map[string][]string, tags []ec2Tag, field func(string) []string) bool {
	for name, want := range filters {
		var have []string
		switch {
		case strings.HasPrefix(name, "tag:"):
			for _, t := range tags {
				if t.Key == name[4:] {
					have = append(have, t.Value)
				}
			}
		case name == "tag-key":
			for _, t := range tags {
				have = append(have, t.Key)
			}
		case name == "tag-value":
			for _, t := range tags {
				have = append(have, t.Value)
			}
		default:
			have = field(name)
		}
		ok := false
		for _, w := range want {
			for _, h := range have {
				ok = ok || wildcard(w, h)
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// wildcard matches EC2 filter patterns: * any run, ? one character.
func wildcard(pattern, s string) bool {
	if pattern == "" {
		return s == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if wildcard(pattern[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && wildcard(pattern[1:], s[1:])
	}
	return s != "" && s[0] == pattern[0] && wildcard(pattern[1:], s[1:])
}

// tagsFor reads TagSpecification.N entries of resourceType.
func tagsFor(p params, resourceType string) ([]ec2Tag, error) {
	var tags []ec2Tag
	for _, spec := range p.structs("TagSpecification") {
		if rt := spec.get("ResourceType"); rt != resourceType {
			return nil, errf(400, "InvalidParameterValue", "'%s' is not a valid taggable resource type for this operation (want %s)", rt, resourceType)
		}
		for _, t := range spec.structs("Tag") {
			tags = setTag(tags, t.get("Key"), t.get("Value"))
		}
	}
	return tags, nil
}

func setTag(tags []ec2Tag, k, v string) []ec2Tag {
	for i := range tags {
		if tags[i].Key == k {
			tags[i].Value = v
			return tags
		}
	}
	return append(tags, ec2Tag{k, v})
}

// parseCIDR parses an IPv4 CIDR whose address is the network address.
func parseCIDR(c string) (netip.Prefix, error) {
	pfx, err := netip.ParsePrefix(c)
	if err != nil || !pfx.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("not an IPv4 CIDR block")
	}
	if pfx.Masked() != pfx {
		return netip.Prefix{}, fmt.Errorf("the address is not the network address of the block (%s)", pfx.Masked())
	}
	return pfx, nil
}

func overlaps(a, b netip.Prefix) bool { return a.Overlaps(b) }

// selectEC2 is what every Describe call does: the resources of m that ids names (all of them when
// ids is empty; the first unknown id is notFound's error), in ID order, that also pass keep (nil:
// all) and whose tags and fields (filter name -> values) match the request's filters.
func selectEC2[V any](m map[string]*V, ids []string, notFound func(id string) error, filters map[string][]string,
	keep func(*V) bool, tags func(*V) []ec2Tag, fields func(*V) map[string][]string) ([]*V, error) {
	if err := idsExist(m, ids, notFound); err != nil {
		return nil, err
	}
	var out []*V
	for _, id := range sortedKeys(m) {
		v := m[id]
		if (len(ids) > 0 && !contains(ids, id)) || (keep != nil && !keep(v)) {
			continue
		}
		if matchFilters(filters, tags(v), func(n string) []string { return fields(v)[n] }) {
			out = append(out, v)
		}
	}
	return out, nil
}

// ids checks requested ids exist, answering code for the first that does not.
func idsExist[V any](m map[string]*V, ids []string, notFound func(id string) error) error {
	for _, id := range ids {
		if m[id] == nil {
			return notFound(id)
		}
	}
	return nil
}

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

// reconcileEC2 moves NAT gateways along (pending -> available, deleting -> deleted, and deleted
// ones are forgotten an hour later, as EC2 does); s.Mu is held.
func (s *Server) reconcileEC2(t time.Time) bool {
	changed := false
	e := s.ec2()
	for id, n := range e.NatGateways {
		switch {
		case n.State == "pending" && !t.Before(n.Due):
			n.State = "available"
			changed = true
		case n.State == "deleting" && !t.Before(n.Due):
			n.State = "deleted"
			dt := t.UTC().Truncate(time.Second)
			n.DeleteTime = &dt
			for i := range n.Addresses {
				if a := e.Addresses[n.Addresses[i].AllocationID]; a != nil {
					a.AssociationID, a.NetworkInterfaceID, a.PrivateIP = "", "", ""
				}
				n.Addresses[i].Status = "disassociated"
			}
			changed = true
		case n.State == "deleted" && n.DeleteTime != nil && t.Sub(*n.DeleteTime) > time.Hour:
			delete(e.NatGateways, id)
			changed = true
		}
	}
	return changed
}

func (s *Server) routeTable(id string) (*ec2RouteTable, error) {
	rt := s.ec2().RouteTables[id]
	if rt == nil {
		return nil, errf(400, "InvalidRouteTableID.NotFound", "The routeTable ID '%s' does not exist", id)
	}
	return rt, nil
}

func (s *Server) ec2CreateRouteTable(p params) (any, error) {
	v, err := s.vpc(p.get("VpcId"))
	if err != nil {
		return nil, err
	}
	tags, err := tagsFor(p, "route-table")
	if err != nil {
		return nil, err
	}
	rt := &ec2RouteTable{RouteTableID: awsID("rtb"), VpcID: v.VpcID, OwnerID: s.St.Account, Tags: tags, Associations: []ec2RTAssoc{},
		Routes: []ec2Route{{DestinationCidrBlock: v.CidrBlock, GatewayID: "local", State: "active", Origin: "CreateRouteTable"}}}
	s.ec2().RouteTables[rt.RouteTableID] = rt
	return &struct {
		ec2Meta
		RT *ec2RouteTable `xml:"routeTable"`
	}{RT: rt}, nil
}

func (s *Server) ec2DescribeRouteTables(p params) (any, error) {
	e := s.ec2()
	ids := p.list("RouteTableId")
	if err := idsExist(e.RouteTables, ids, func(id string) error { _, err := s.routeTable(id); return err }); err != nil {
		return nil, err
	}
	filters := p.filters()
	out := &struct {
		ec2Meta
		RTs []ec2RouteTable `xml:"routeTableSet>item"`
	}{}
	for _, id := range sortedKeys(e.RouteTables) {
		rt := e.RouteTables[id]
		if len(ids) > 0 && !contains(ids, id) {
			continue
		}
		if !matchFilters(filters, rt.Tags, func(n string) []string {
			var subnets, assocs, mains []string
			for _, a := range rt.Associations {
				subnets, assocs = append(subnets, a.SubnetID), append(assocs, a.RouteTableAssociationID)
				mains = append(mains, strconv.FormatBool(a.Main))
			}
			return map[string][]string{"route-table-id": {rt.RouteTableID}, "vpc-id": {rt.VpcID}, "association.subnet-id": subnets,
				"association.route-table-association-id": assocs, "association.main": mains}[n]
		}) {
			continue
		}
		c := *rt
		c.Routes = nil
		for _, r := range rt.Routes {
			if r.NatGatewayID != "" {
				if n := e.NatGateways[r.NatGatewayID]; n == nil || n.State == "deleted" || n.State == "deleting" {
					r.State = "blackhole"
				}
			}
			if r.InstanceID != "" && !s.routableInstance(r.InstanceID) {
				r.State = "blackhole"
			}
			if r.GatewayID != "" && r.GatewayID != "local" {
				if g := e.InternetGateways[r.GatewayID]; g == nil || len(g.Attachments) == 0 || g.Attachments[0].VpcID != rt.VpcID {
					r.State = "blackhole"
				}
			}
			c.Routes = append(c.Routes, r)
		}
		out.RTs = append(out.RTs, c)
	}
	return out, nil
}

func (s *Server) ec2DeleteRouteTable(p params) (any, error) {
	rt, err := s.routeTable(p.get("RouteTableId"))
	if err != nil {
		return nil, err
	}
	if len(rt.Associations) > 0 {
		return nil, errf(400, "DependencyViolation", "The routeTable '%s' has dependencies and cannot be deleted.", rt.RouteTableID)
	}
	delete(s.ec2().RouteTables, rt.RouteTableID)
	return &ec2Return{Return: true}, nil
}

func (s *Server) ec2AssociateRouteTable(p params) (any, error) {
	e := s.ec2()
	rt, err := s.routeTable(p.get("RouteTableId"))
	if err != nil {
		return nil, err
	}
	snID, err := p.required("SubnetId")
	if err != nil {
		return nil, err
	}
	sn := e.Subnets[snID]
	if sn == nil {
		return nil, errf(400, "InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", snID)
	}
	if sn.VpcID != rt.VpcID {
		return nil, errf(400, "InvalidParameterValue", "Route table %s and subnet %s belong to different networks", rt.RouteTableID, snID)
	}
	for _, o := range e.RouteTables {
		for _, a := range o.Associations {
			if a.SubnetID == snID {
				return nil, errf(400, "Resource.AlreadyAssociated", "the specified association for route table %s conflicts with an existing association (%s)", rt.RouteTableID, a.RouteTableAssociationID)
			}
		}
	}
	a := ec2RTAssoc{RouteTableAssociationID: awsID("rtbassoc"), RouteTableID: rt.RouteTableID, SubnetID: snID, AssociationState: ec2AssocState{"associated"}}
	rt.Associations = append(rt.Associations, a)
	return &struct {
		ec2Meta
		AssociationID string        `xml:"associationId"`
		State         ec2AssocState `xml:"associationState"`
	}{AssociationID: a.RouteTableAssociationID, State: a.AssociationState}, nil
}

func (s *Server) ec2DisassociateRouteTable(p params) (any, error) {
	id := p.get("AssociationId")
	for _, rt := range s.ec2().RouteTables {
		for i, a := range rt.Associations {
			if a.RouteTableAssociationID == id {
				if a.Main {
					return nil, errf(400, "InvalidParameterValue", "cannot disassociate the main route table association %s", id)
				}
				rt.Associations = append(rt.Associations[:i], rt.Associations[i+1:]...)
				return &ec2Return{Return: true}, nil
			}
		}
	}
	return nil, errf(400, "InvalidAssociationID.NotFound", "The association ID '%s' does not exist", id)
}

// newSecurityGroup makes a group in vpc that allows all egress.
func (s *Server) newSecurityGroup(vpc, name, desc string, tags map[string]string) *ec2SG {
	g := &ec2SG{GroupID: awsID("sg"), GroupName: name, Description: desc, VpcID: vpc, OwnerID: s.St.Account,
		Ingress: []sgRule{}, Egress: []sgRule{{Protocol: "-1", Cidr: "0.0.0.0/0"}}}
	for _, k := range sortedKeys(tags) {
		g.Tags = append(g.Tags, ec2Tag{k, tags[k]})
	}
	s.ec2().SecurityGroups[g.GroupID] = g
	return g
}

func (s *Server) deleteSecurityGroup(id string) { delete(s.ec2().SecurityGroups, id) }

func (s *Server) sg(p params) (*ec2SG, error) {
	e := s.ec2()
	if id := p.get("GroupId"); id != "" {
		g := e.SecurityGroups[id]
		if g == nil {
			return nil, errf(400, "InvalidGroup.NotFound", "The security group '%s' does not exist", id)
		}
		return g, nil
	}
	if name := p.get("GroupName"); name != "" {
		for _, g := range e.SecurityGroups {
			if g.GroupName == name {
				return g, nil
			}
		}
		return nil, errf(400, "InvalidGroup.NotFound", "The security group '%s' does not exist in default VPC", name)
	}
	return nil, errf(400, "MissingParameter", "The request must contain the parameter groupId")
}

func (s *Server) ec2CreateSG(p params) (any, error) {
	name, err := p.required("GroupName")
	if err != nil {
		return nil, err
	}
	desc, err := p.required("GroupDescription")
	if err != nil {
		return nil, err
	}
	vpcID := p.get("VpcId")
	if vpcID == "" {
		return nil, errf(400, "VPCIdNotSpecified", "No default VPC for this user (nuv emulator: give VpcId)")
	}
	if _, err := s.vpc(vpcID); err != nil {
		return nil, err
	}
	if strings.HasPrefix(name, "sg-") || name == "default" {
		return nil, errf(400, "InvalidParameterValue", "Value (%s) for parameter GroupName is invalid. Group names may not be in the format sg-* or be 'default'.", name)
	}
	for _, g := range s.ec2().SecurityGroups {
		if g.VpcID == vpcID && g.GroupName == name {
			return nil, errf(400, "InvalidGroup.Duplicate", "The security group '%s' already exists for VPC '%s'", name, vpcID)
		}
	}
	tags, err := tagsFor(p, "security-group")
	if err != nil {
		return nil, err
	}
	g := s.newSecurityGroup(vpcID, name, desc, nil)
	g.Tags = tags
	return &struct {
		ec2Meta
		GroupID string   `xml:"groupId"`
		Arn     string   `xml:"securityGroupArn"`
		Tags    []ec2Tag `xml:"tagSet>item"`
	}{GroupID: g.GroupID, Arn: s.sgArn(g), Tags: tags}, nil
}

func (s *Server) sgArn(g *ec2SG) string {
	return fmt.Sprintf("arn:aws:ec2:%s:%s:security-group/%s", s.St.Region, s.St.Account, g.GroupID)
}

// xmlPerms groups flattened rules by protocol and ports, as EC2 reports them.
func (s *Server) xmlPerms(rules []sgRule) []xmlPermission {
	var out []xmlPermission
	idx := map[string]int{}
	for _, r := range rules {
		k := fmt.Sprintf("%s/%d/%d", r.Protocol, r.From, r.To)
		i, ok := idx[k]
		if !ok {
			p := xmlPermission{IPProtocol: r.Protocol}
			if r.Protocol != "-1" {
				p.FromPort, p.ToPort = intp(r.From), intp(r.To)
			}
			out = append(out, p)
			i = len(out) - 1
			idx[k] = i
		}
		if r.Cidr != "" {
			out[i].IPRanges = append(out[i].IPRanges, xmlIPRange{r.Cidr, r.Desc})
		} else {
			out[i].Groups = append(out[i].Groups, xmlGroupPair{r.Group, s.St.Account, r.Desc})
		}
	}
	return out
}

func (s *Server) ec2DescribeSGs(p params) (any, error) {
	names := p.list("GroupName")
	sgs, err := selectEC2(s.ec2().SecurityGroups, p.list("GroupId"), func(id string) error {
		return errf(400, "InvalidGroup.NotFound", "The security group '%s' does not exist", id)
	}, p.filters(),
		func(g *ec2SG) bool { return len(names) == 0 || contains(names, g.GroupName) },
		func(g *ec2SG) []ec2Tag { return g.Tags },
		func(g *ec2SG) map[string][]string {
			return map[string][]string{"group-id": {g.GroupID}, "group-name": {g.GroupName}, "vpc-id": {g.VpcID}, "description": {g.Description}, "owner-id": {g.OwnerID}}
		})
	if err != nil {
		return nil, err
	}
	out := &struct {
		ec2Meta
		SGs []xmlSG `xml:"securityGroupInfo>item"`
	}{}
	for _, g := range sgs {
		out.SGs = append(out.SGs, xmlSG{OwnerID: g.OwnerID, GroupID: g.GroupID, GroupName: g.GroupName, Description: g.Description, VpcID: g.VpcID,
			SecurityGroup: s.sgArn(g), Ingress: s.xmlPerms(g.Ingress), Egress: s.xmlPerms(g.Egress), Tags: g.Tags})
	}
	return out, nil
}

func (s *Server) ec2DeleteSG(p params) (any, error) {
	g, err := s.sg(p)
	if err != nil {
		return nil, err
	}
	if v := s.ec2().Vpcs[g.VpcID]; v != nil && v.DefaultSG == g.GroupID {
		return nil, errf(400, "CannotDelete", "the specified group: \"%s\" name: \"default\" cannot be deleted by a user", g.GroupID)
	}
	for _, o := range s.ec2().SecurityGroups {
		if o.GroupID == g.GroupID {
			continue
		}
		for _, r := range append(append([]sgRule{}, o.Ingress...), o.Egress...) {
			if r.Group == g.GroupID {
				return nil, errf(400, "DependencyViolation", "resource %s has a dependent object (a rule of %s)", g.GroupID, o.GroupID)
			}
		}
	}
	if deps := s.instanceDeps(func(in *ec2Instance) bool { return contains(in.Groups, g.GroupID) }); len(deps) > 0 {
		return nil, errf(400, "DependencyViolation", "resource %s has a dependent object (nuv emulator: instances %s)", g.GroupID, strings.Join(deps, ", "))
	}
	for _, c := range s.St.EKS.Clusters {
		if contains(c.VPC.SecurityGroupIDs, g.GroupID) || c.SecurityGroup == g.GroupID {
			return nil, errf(400, "DependencyViolation", "resource %s has a dependent object (EKS cluster %s)", g.GroupID, c.Name)
		}
	}
	delete(s.ec2().SecurityGroups, g.GroupID)
	return &ec2Return{Return: true}, nil
}

// rulesOf reads IpPermissions.N (and the older top-level form) as flattened rules.
func (s *Server) rulesOf(p params) ([]sgRule, error) {
	perms := p.structs("IpPermissions")
	if len(perms) == 0 && p.get("IpProtocol") != "" {
		perms = []params{p}
	}
	var out []sgRule
	for _, perm := range perms {
		proto := strings.ToLower(perm.get("IpProtocol"))
		switch proto {
		case "tcp", "udp", "icmp", "-1":
		case "all":
			proto = "-1"
		case "6":
			proto = "tcp"
		case "17":
			proto = "udp"
		default:
			return nil, errf(400, "InvalidParameterValue", "Invalid value '%s' for IP protocol. Unknown protocol.", perm.get("IpProtocol"))
		}
		var from, to int
		if proto != "-1" {
			var err1, err2 error
			from, err1 = strconv.Atoi(perm.get("FromPort"))
			to, err2 = strconv.Atoi(perm.get("ToPort"))
			if err1 != nil || err2 != nil || (proto != "icmp" && (from < 0 || to > 65535 || from > to)) {
				return nil, errf(400, "InvalidParameterValue", "Invalid port range %q-%q for protocol %s", perm.get("FromPort"), perm.get("ToPort"), proto)
			}
		}
		base := sgRule{Protocol: proto, From: from, To: to}
		for _, r := range perm.structs("IpRanges") {
			if _, err := parseCIDR(r.get("CidrIp")); err != nil {
				return nil, errf(400, "InvalidParameterValue", "CIDR block %s is malformed", r.get("CidrIp"))
			}
			x := base
			x.Cidr, x.Desc = r.get("CidrIp"), r.get("Description")
			out = append(out, x)
		}
		if c := perm.get("CidrIp"); c != "" {
			x := base
			x.Cidr = c
			out = append(out, x)
		}
		for _, gp := range perm.structs("Groups") {
			if s.ec2().SecurityGroups[gp.get("GroupId")] == nil {
				return nil, errf(400, "InvalidGroup.NotFound", "The security group '%s' does not exist", gp.get("GroupId"))
			}
			x := base
			x.Group, x.Desc = gp.get("GroupId"), gp.get("Description")
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return nil, errf(400, "MissingParameter", "No permissions given: IpPermissions with IpRanges or UserIdGroupPairs")
	}
	return out, nil
}

func sameRule(a, b sgRule) bool {
	return a.Protocol == b.Protocol && a.From == b.From && a.To == b.To && a.Cidr == b.Cidr && a.Group == b.Group
}

func (s *Server) authorize(p params, egress bool) (any, error) {
	g, err := s.sg(p)
	if err != nil {
		return nil, err
	}
	rules, err := s.rulesOf(p)
	if err != nil {
		return nil, err
	}
	list := &g.Ingress
	if egress {
		list = &g.Egress
	}
	for _, r := range rules {
		for _, o := range *list {
			if sameRule(r, o) {
				peer := r.Cidr + r.Group
				return nil, errf(400, "InvalidPermission.Duplicate", "the specified rule \"peer: %s, %s, from port: %d, to port: %d, ALLOW\" already exists", peer, strings.ToUpper(r.Protocol), r.From, r.To)
			}
		}
	}
	*list = append(*list, rules...)
	return &ec2Return{Return: true}, nil
}

func (s *Server) revoke(p params, egress bool) (any, error) {
	g, err := s.sg(p)
	if err != nil {
		return nil, err
	}
	rules, err := s.rulesOf(p)
	if err != nil {
		return nil, err
	}
	list := &g.Ingress
	if egress {
		list = &g.Egress
	}
	for _, r := range rules {
		found := false
		kept := (*list)[:0]
		for _, o := range *list {
			if sameRule(r, o) {
				found = true
				continue
			}
			kept = append(kept, o)
		}
		if !found {
			return nil, errf(400, "InvalidPermission.NotFound", "The specified rule does not exist in this security group.")
		}
		*list = kept
	}
	return &ec2Return{Return: true}, nil
}

func (s *Server) ec2AuthorizeIngress(p params) (any, error) { return s.authorize(p, false) }
func (s *Server) ec2AuthorizeEgress(p params) (any, error)  { return s.authorize(p, true) }
func (s *Server) ec2RevokeIngress(p params) (any, error)    { return s.revoke(p, false) }
func (s *Server) ec2RevokeEgress(p params) (any, error)     { return s.revoke(p, true) }

// taggable finds the tags of an EC2 resource by id, with its DescribeTags resource type.
func (s *Server) taggable(id string) (*[]ec2Tag, string, error) {
	e := s.ec2()
	if t, typ, ok := s.taggableInstance(id); ok {
		return t, typ, nil
	}
	switch {
	case e.Vpcs[id] != nil:
		return &e.Vpcs[id].Tags, "vpc", nil
	case e.Subnets[id] != nil:
		return &e.Subnets[id].Tags, "subnet", nil
	case e.InternetGateways[id] != nil:
		return &e.InternetGateways[id].Tags, "internet-gateway", nil
	case e.NatGateways[id] != nil:
		return &e.NatGateways[id].Tags, "natgateway", nil
	case e.RouteTables[id] != nil:
		return &e.RouteTables[id].Tags, "route-table", nil
	case e.SecurityGroups[id] != nil:
		return &e.SecurityGroups[id].Tags, "security-group", nil
	case e.Addresses[id] != nil:
		return &e.Addresses[id].Tags, "elastic-ip", nil
	}
	prefix, _, _ := strings.Cut(id, "-")
	code := map[string]string{"vpc": "InvalidVpcID.NotFound", "subnet": "InvalidSubnetID.NotFound", "igw": "InvalidInternetGatewayID.NotFound",
		"nat": "NatGatewayNotFound", "rtb": "InvalidRouteTableID.NotFound", "sg": "InvalidGroup.NotFound", "eipalloc": "InvalidAllocationID.NotFound",
		"i": "InvalidInstanceID.NotFound", "key": "InvalidKeyPairID.NotFound"}[prefix]
	if code == "" {
		return nil, "", errf(400, "InvalidID", "The ID '%s' is not valid", id)
	}
	return nil, "", errf(400, code, "The ID '%s' does not exist", id)
}

func (s *Server) ec2CreateTags(p params) (any, error) {
	ids := p.list("ResourceId")
	if len(ids) == 0 {
		return nil, errf(400, "MissingParameter", "The request must contain the parameter resourceIdSet")
	}
	tags := p.structs("Tag")
	for _, id := range ids {
		if _, _, err := s.taggable(id); err != nil {
			return nil, err
		}
	}
	for _, id := range ids {
		t, _, _ := s.taggable(id)
		for _, tag := range tags {
			*t = setTag(*t, tag.get("Key"), tag.get("Value"))
		}
		if len(*t) > 50 {
			return nil, errf(400, "TagLimitExceeded", "The maximum number of Tags for resource %s has been reached (50)", id)
		}
	}
	return &ec2Return{Return: true}, nil
}

func (s *Server) ec2DeleteTags(p params) (any, error) {
	ids := p.list("ResourceId")
	tags := p.structs("Tag")
	for _, id := range ids {
		t, _, err := s.taggable(id)
		if err != nil {
			return nil, err
		}
		kept := (*t)[:0]
		for _, x := range *t {
			drop := len(tags) == 0
			for _, tag := range tags {
				_, hasValue := tag["Value"]
				if tag.get("Key") == x.Key && (!hasValue || tag.get("Value") == x.Value) {
					drop = true
				}
			}
			if !drop {
				kept = append(kept, x)
			}
		}
		*t = kept
	}
	return &ec2Return{Return: true}, nil
}

func (s *Server) ec2DescribeTags(p params) (any, error) {
	e := s.ec2()
	type desc struct {
		ResourceID   string `xml:"resourceId"`
		ResourceType string `xml:"resourceType"`
		Key          string `xml:"key"`
		Value        string `xml:"value"`
	}
	var all []string
	for _, m := range [][]string{sortedKeys(e.Vpcs), sortedKeys(e.Subnets), sortedKeys(e.InternetGateways), sortedKeys(e.NatGateways),
		sortedKeys(e.RouteTables), sortedKeys(e.SecurityGroups), sortedKeys(e.Addresses), s.taggableInstanceIDs()} {
		all = append(all, m...)
	}
	filters := p.filters()
	out := &struct {
		ec2Meta
		Tags []desc `xml:"tagSet>item"`
	}{}
	for _, id := range all {
		if n := e.NatGateways[id]; n != nil && n.State == "deleted" {
			continue
		}
		tags, typ, _ := s.taggable(id)
		for _, t := range *tags {
			d := desc{id, typ, t.Key, t.Value}
			f := map[string][]string{}
			for k, v := range filters {
				if !strings.HasPrefix(k, "tag:") {
					f[k] = v
				}
			}
			if !matchFilters(f, nil, func(n string) []string {
				return map[string][]string{"resource-id": {d.ResourceID}, "resource-type": {d.ResourceType}, "key": {d.Key}, "value": {d.Value}}[n]
			}) {
				continue
			}
			// tag:K filters select resources by their tags; DescribeTags lists their tags.
			if !matchFilters(tagFilters(filters), *tags, func(string) []string { return nil }) {
				continue
			}
			out.Tags = append(out.Tags, d)
		}
	}
	return out, nil
}

func tagFilters(f map[string][]string) map[string][]string {
	out := map[string][]string{}
	for k, v := range f {
		if strings.HasPrefix(k, "tag:") {
			out[k] = v
		}
	}
	return out
}

package aws

import (
	"fmt"
	"net/netip"
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

package aws

import (
	"slices"
	"strconv"
	"strings"
)

// Routes of a route table (CreateRoute, ReplaceRoute, DeleteRoute) and the instance attribute
// that routing to an instance needs (ModifyInstanceAttribute, DescribeInstanceAttribute
// sourceDestCheck). A route's target is an internet gateway, a NAT gateway or an instance; a
// route to an instance is "blackhole" in DescribeRouteTables once the instance is gone (terminated
// or forgotten), as EC2 shows it. The routes to instances whose source/destination check is off
// are what the machines' network carries (podroute.go): a packet for an address that is not the
// instance's own reaches it only then, as on EC2.

// routeTarget is the target of a CreateRoute or ReplaceRoute of dest in rt: exactly one of
// GatewayId, NatGatewayId and InstanceId (the ones the emulator implements).
func (s *Server) routeTarget(p params, rt *ec2RouteTable, dest string) (ec2Route, error) {
	e := s.ec2()
	r := ec2Route{DestinationCidrBlock: dest, State: "active", Origin: "CreateRoute"}
	gw, nat, inst := p.get("GatewayId"), p.get("NatGatewayId"), p.get("InstanceId")
	n := 0
	for _, v := range []string{gw, nat, inst} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return r, errf(400, "InvalidParameterCombination", "give exactly one target: GatewayId, NatGatewayId or InstanceId (nuv emulator implements these three)")
	}
	switch {
	case gw != "":
		g, err := s.igw(gw)
		if err != nil {
			return r, errf(400, "InvalidGatewayID.NotFound", "The gateway ID '%s' does not exist", gw)
		}
		if len(g.Attachments) == 0 || g.Attachments[0].VpcID != rt.VpcID {
			return r, errf(400, "InvalidParameterValue", "route table %s and network gateway %s belong to different networks", rt.RouteTableID, gw)
		}
		r.GatewayID = gw
	case nat != "":
		g := e.NatGateways[nat]
		if g == nil || g.State == "deleted" {
			return r, errf(400, "InvalidNatGatewayID.NotFound", "The natGateway ID '%s' does not exist", nat)
		}
		if g.VpcID != rt.VpcID {
			return r, errf(400, "InvalidParameterValue", "route table %s and NAT gateway %s belong to different networks", rt.RouteTableID, nat)
		}
		r.NatGatewayID = nat
	default:
		in := s.instances()[inst]
		if in == nil {
			return r, instanceNotFound(inst)
		}
		if !in.live() || in.State == "shutting-down" {
			return r, errf(400, "IncorrectInstanceState", "The instance '%s' is not in a valid state for this operation.", inst)
		}
		if in.VpcID != rt.VpcID {
			return r, errf(400, "InvalidParameterValue", "route table %s and instance %s belong to different networks", rt.RouteTableID, inst)
		}
		r.InstanceID, r.InstanceOwnerID = inst, s.St.Account
	}
	return r, nil
}

// routeDest is the DestinationCidrBlock of a route request, checked.
func routeDest(p params) (string, error) {
	dest, err := p.required("DestinationCidrBlock")
	if err != nil {
		return "", err
	}
	if _, err := parseCIDR(dest); err != nil {
		return "", errf(400, "InvalidParameterValue", "Value (%s) for parameter destinationCidrBlock is invalid. This is not a valid CIDR block.", dest)
	}
	return dest, nil
}

// routeRequest is the route table and the destination a CreateRoute or ReplaceRoute names.
func (s *Server) routeRequest(p params) (*ec2RouteTable, string, error) {
	rt, err := s.routeTable(p.get("RouteTableId"))
	if err != nil {
		return nil, "", err
	}
	dest, err := routeDest(p)
	return rt, dest, err
}

func (s *Server) ec2CreateRoute(p params) (any, error) {
	rt, dest, err := s.routeRequest(p)
	if err != nil {
		return nil, err
	}
	for _, r := range rt.Routes {
		if r.DestinationCidrBlock == dest {
			return nil, errf(400, "RouteAlreadyExists", "The route identified by %s already exists.", dest)
		}
	}
	r, err := s.routeTarget(p, rt, dest)
	if err != nil {
		return nil, err
	}
	rt.Routes = append(rt.Routes, r)
	return &ec2Return{Return: true}, nil
}

// ec2ReplaceRoute points the route of DestinationCidrBlock at another target (the local route
// stays).
func (s *Server) ec2ReplaceRoute(p params) (any, error) {
	rt, dest, err := s.routeRequest(p)
	if err != nil {
		return nil, err
	}
	for i, old := range rt.Routes {
		if old.DestinationCidrBlock != dest {
			continue
		}
		if old.GatewayID == "local" {
			return nil, errf(400, "InvalidParameterValue", "cannot replace local route %s in route table %s", dest, rt.RouteTableID)
		}
		r, err := s.routeTarget(p, rt, dest)
		if err != nil {
			return nil, err
		}
		r.Origin = old.Origin
		rt.Routes[i] = r
		return &ec2Return{Return: true}, nil
	}
	return nil, errf(400, "InvalidParameterValue", "There is no route defined for '%s' in the route table. Use CreateRoute instead.", dest)
}

func (s *Server) ec2DeleteRoute(p params) (any, error) {
	rt, err := s.routeTable(p.get("RouteTableId"))
	if err != nil {
		return nil, err
	}
	dest, err := p.required("DestinationCidrBlock")
	if err != nil {
		return nil, err
	}
	for i, r := range rt.Routes {
		if r.DestinationCidrBlock != dest {
			continue
		}
		if r.GatewayID == "local" {
			return nil, errf(400, "InvalidParameterValue", "cannot remove local route %s in route table %s", dest, rt.RouteTableID)
		}
		rt.Routes = append(rt.Routes[:i], rt.Routes[i+1:]...)
		return &ec2Return{Return: true}, nil
	}
	return nil, errf(400, "InvalidRoute.NotFound", "no route with destination-cidr-block %s in route table %s", dest, rt.RouteTableID)
}

// routableInstance says whether a route to instance id leads somewhere: the instance exists and
// is not (being) terminated. s.Mu is held.
func (s *Server) routableInstance(id string) bool {
	in := s.instances()[id]
	return in != nil && in.live() && in.State != "shutting-down"
}

// instanceAttributes are the attributes ModifyInstanceAttribute knows (EC2's list); the emulator
// changes sourceDestCheck and refuses the others as not implemented.
var instanceAttributes = []string{"instanceType", "kernel", "ramdisk", "userData", "disableApiTermination",
	"instanceInitiatedShutdownBehavior", "rootDeviceName", "blockDeviceMapping", "productCodes", "sourceDestCheck",
	"groupSet", "ebsOptimized", "sriovNetSupport", "enaSupport", "enclaveOptions", "disableApiStop"}

// parseAttrBool is an attribute's boolean value (EC2 takes true and false in any case).
func parseAttrBool(param, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errf(400, "InvalidParameterValue", "Value (%s) for parameter %s is invalid. Expected: 'true' or 'false'.", v, param)
}

// ec2ModifyInstanceAttribute changes one attribute of an instance, in either of EC2's forms:
// Attribute=sourceDestCheck&Value=false, or SourceDestCheck.Value=false (the SDKs' and the aws
// CLI's --no-source-dest-check).
func (s *Server) ec2ModifyInstanceAttribute(p params) (any, error) {
	id, err := p.required("InstanceId")
	if err != nil {
		return nil, err
	}
	in := s.instances()[id]
	if in == nil {
		return nil, instanceNotFound(id)
	}
	attr, value := p.get("Attribute"), p.get("Value")
	// the structured form: SourceDestCheck.Value, GroupId.N, BlockDeviceMapping.N.*
	var structured []string
	for k := range p {
		name, _, _ := strings.Cut(k, ".")
		switch name {
		case "Action", "Version", "InstanceId", "Attribute", "Value", "DryRun":
			continue
		}
		if !slices.Contains(structured, name) {
			structured = append(structured, name)
		}
	}
	slices.Sort(structured)
	switch {
	case len(structured) > 1 || (attr != "" && len(structured) > 0):
		return nil, errf(400, "InvalidParameterCombination", "modify one attribute per request (given: %s)", strings.Join(append(structured, attr), ", "))
	case attr == "" && len(structured) == 0:
		return nil, errf(400, "MissingParameter", "The request must contain exactly one attribute to modify")
	case attr == "":
		attr = map[string]string{"GroupId": "groupSet"}[structured[0]]
		if attr == "" {
			attr = strings.ToLower(structured[0][:1]) + structured[0][1:]
		}
		value = p.get(structured[0] + ".Value")
	}
	known := false
	for _, a := range instanceAttributes {
		if a == attr {
			known = true
		}
	}
	if !known {
		return nil, errf(400, "InvalidParameterValue", "Value (%s) for parameter attribute is invalid. Unknown attribute.", attr)
	}
	if attr != "sourceDestCheck" {
		return nil, errf(400, "UnsupportedOperation", "nuv's EC2 emulator does not modify the instance attribute %s (it implements sourceDestCheck)", attr)
	}
	if !in.live() || in.State == "shutting-down" {
		return nil, errf(400, "IncorrectInstanceState", "The instance '%s' is not in a state from which it can be modified.", id)
	}
	if value == "" {
		return nil, errf(400, "MissingParameter", "The request must contain the parameter Value")
	}
	on, err := parseAttrBool(attr, value)
	if err != nil {
		return nil, err
	}
	in.SourceDestCheckOff = !on
	return &ec2Return{Return: true}, nil
}

// ec2DescribeInstanceAttribute answers an instance's sourceDestCheck (the attribute the emulator
// keeps; the others are refused as not implemented).
func (s *Server) ec2DescribeInstanceAttribute(p params) (any, error) {
	id, err := p.required("InstanceId")
	if err != nil {
		return nil, err
	}
	attr, err := p.required("Attribute")
	if err != nil {
		return nil, err
	}
	in := s.instances()[id]
	if in == nil {
		return nil, instanceNotFound(id)
	}
	known := false
	for _, a := range instanceAttributes {
		known = known || a == attr
	}
	if !known {
		return nil, errf(400, "InvalidParameterValue", "Value (%s) for parameter attribute is invalid. Unknown attribute.", attr)
	}
	if attr != "sourceDestCheck" {
		return nil, errf(400, "UnsupportedOperation", "nuv's EC2 emulator does not describe the instance attribute %s (it implements sourceDestCheck)", attr)
	}
	type boolValue struct {
		Value bool `xml:"value"`
	}
	return &struct {
		ec2Meta
		InstanceID      string    `xml:"instanceId"`
		SourceDestCheck boolValue `xml:"sourceDestCheck"`
	}{InstanceID: id, SourceDestCheck: boolValue{!in.SourceDestCheckOff}}, nil
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

package aws

import (
	"fmt"
	"strconv"
	"strings"
)

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

package aws

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// Elastic Load Balancing v2 (network load balancers), served in the AWS query protocol
// (Action=...&Version=2015-12-01, SigV4 service "elasticloadbalancing", answers in the
// elasticloadbalancing XML namespace), so the SDK's elasticloadbalancingv2 client and `aws elbv2`
// run unmodified. Every load balancer is a real TCP balancer (see Balancers): it becomes active
// once its balancer listens, its listeners forward to the registered targets that pass their
// health checks, and those checks are real TCP (or HTTP) checks the emulator runs at the target
// group's interval and thresholds (elbv2_health.go).

// elbNS is the XML namespace of Elastic Load Balancing v2's answers.
const elbNS = "http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/"

// elbService is the SigV4 service name (and the service part of the ARNs) of Elastic Load Balancing.
const elbService = "elasticloadbalancing"

// elbState is Elastic Load Balancing's part of the state, each kind of resource by ARN.
type elbState struct {
	LoadBalancers map[string]*elbLB       `json:"loadBalancers"`
	TargetGroups  map[string]*elbTG       `json:"targetGroups"`
	Listeners     map[string]*elbListener `json:"listeners"`
	// Removing are the balancers of deleted load balancers still to be removed (their
	// containers and the networks nothing else uses); a restarted emulator finishes the job.
	Removing []*elbRemoval `json:"removing,omitempty"`
}

// elbLB is a load balancer.
type elbLB struct {
	ARN            string    `json:"arn"`
	Name           string    `json:"name"`
	DNSName        string    `json:"dnsName"`
	Scheme         string    `json:"scheme"`
	Type           string    `json:"type"`
	VpcID          string    `json:"vpcId"`
	IPAddressType  string    `json:"ipAddressType"`
	SecurityGroups []string  `json:"securityGroups,omitempty"`
	State          string    `json:"state"` // provisioning, active, failed
	Reason         string    `json:"reason,omitempty"`
	Created        time.Time `json:"created"`
	Due            time.Time `json:"due"`
	Zones          []elbZone `json:"zones"`
	// Reach are the balancer's addresses in the subnets of its targets outside its own subnets
	// (by subnet id): an NLB reaches every subnet of its VPC, a container only the networks it
	// is attached to.
	Reach map[string]string `json:"reach,omitempty"`
	Tags  []elbTag          `json:"tags"`
	// Container is the name of the balancer's container (see Balancers).
	Container string `json:"container"`
	// Gen counts the changes of what the balancer must do (listeners, targets, their health);
	// the balancer is reconfigured until it runs generation Gen.
	Gen int `json:"gen"`
}

// elbZone is one subnet of a load balancer and the balancer's address there.
type elbZone struct {
	SubnetID string `json:"subnetId"`
	Zone     string `json:"zone"`
	IP       string `json:"ip"`
}

// elbTG is a target group.
type elbTG struct {
	ARN           string         `json:"arn"`
	Name          string         `json:"name"`
	Protocol      string         `json:"protocol"`
	Port          int            `json:"port"`
	VpcID         string         `json:"vpcId"`
	TargetType    string         `json:"targetType"`
	IPAddressType string         `json:"ipAddressType"`
	HC            elbHealthCheck `json:"healthCheck"`
	Targets       []*elbTarget   `json:"targets"`
	Tags          []elbTag       `json:"tags"`
	// DeregistrationDelay is the deregistration_delay.timeout_seconds attribute.
	DeregistrationDelay int `json:"deregistrationDelay"`
}

// elbHealthCheck is a target group's health check.
type elbHealthCheck struct {
	Enabled   bool   `json:"enabled"`
	Protocol  string `json:"protocol"` // TCP, HTTP or HTTPS
	Port      string `json:"port"`     // traffic-port or a port number
	Path      string `json:"path,omitempty"`
	Interval  int    `json:"interval"`
	Timeout   int    `json:"timeout"`
	Healthy   int    `json:"healthy"`
	Unhealthy int    `json:"unhealthy"`
	Matcher   string `json:"matcher,omitempty"` // HTTP codes, e.g. 200-399
}

// elbTarget is a registered target and its health.
type elbTarget struct {
	ID   string `json:"id"` // an instance id or an IPv4 address
	Port int    `json:"port"`
	AZ   string `json:"az,omitempty"`
	// State and Reason are its health (initial, healthy, unhealthy, unused, draining).
	State       string `json:"state"`
	Reason      string `json:"reason,omitempty"`
	Description string `json:"description,omitempty"`
	// OK and Fail count the consecutive passed and failed health checks.
	OK   int `json:"ok"`
	Fail int `json:"fail"`
	// Next is when it is checked next; DrainUntil is when a deregistered target is gone.
	Next       time.Time `json:"next"`
	DrainUntil time.Time `json:"drainUntil,omitempty"`
	// Registered is when it was registered.
	Registered time.Time `json:"registered"`
}

// elbListener is a listener: a port of a load balancer forwarding to one target group.
type elbListener struct {
	ARN          string   `json:"arn"`
	LoadBalancer string   `json:"loadBalancer"`
	Port         int      `json:"port"`
	Protocol     string   `json:"protocol"`
	TargetGroup  string   `json:"targetGroup"`
	Tags         []elbTag `json:"tags"`
}

// elbRemoval is a balancer to remove, with the networks it was attached to.
type elbRemoval struct {
	Container string            `json:"container"`
	Networks  map[string]string `json:"networks"` // subnet id -> CIDR
}

type elbTag struct {
	Key   string `xml:"Key" json:"key"`
	Value string `xml:"Value" json:"value"`
}

// The query protocol's forms of the resources (what Describe* and Create* answer).

type xmlLB struct {
	LoadBalancerArn       string      `xml:"LoadBalancerArn"`
	DNSName               string      `xml:"DNSName"`
	CanonicalHostedZoneID string      `xml:"CanonicalHostedZoneId"`
	CreatedTime           string      `xml:"CreatedTime"`
	LoadBalancerName      string      `xml:"LoadBalancerName"`
	Scheme                string      `xml:"Scheme"`
	VpcID                 string      `xml:"VpcId"`
	State                 xmlLBState  `xml:"State"`
	Type                  string      `xml:"Type"`
	AvailabilityZones     []xmlLBZone `xml:"AvailabilityZones>member"`
	SecurityGroups        *[]string   `xml:"SecurityGroups>member,omitempty"`
	IPAddressType         string      `xml:"IpAddressType"`
}

type xmlLBState struct {
	Code   string `xml:"Code"`
	Reason string `xml:"Reason,omitempty"`
}

type xmlLBZone struct {
	ZoneName  string         `xml:"ZoneName"`
	SubnetID  string         `xml:"SubnetId"`
	Addresses []xmlLBAddress `xml:"LoadBalancerAddresses>member"`
}

type xmlLBAddress struct {
	IPAddress          string `xml:"IpAddress,omitempty"`
	PrivateIPv4Address string `xml:"PrivateIPv4Address,omitempty"`
}

type xmlTG struct {
	TargetGroupArn             string    `xml:"TargetGroupArn"`
	TargetGroupName            string    `xml:"TargetGroupName"`
	Protocol                   string    `xml:"Protocol"`
	Port                       int       `xml:"Port"`
	VpcID                      string    `xml:"VpcId"`
	HealthCheckProtocol        string    `xml:"HealthCheckProtocol"`
	HealthCheckPort            string    `xml:"HealthCheckPort"`
	HealthCheckEnabled         bool      `xml:"HealthCheckEnabled"`
	HealthCheckIntervalSeconds int       `xml:"HealthCheckIntervalSeconds"`
	HealthCheckTimeoutSeconds  int       `xml:"HealthCheckTimeoutSeconds"`
	HealthyThresholdCount      int       `xml:"HealthyThresholdCount"`
	UnhealthyThresholdCount    int       `xml:"UnhealthyThresholdCount"`
	HealthCheckPath            string    `xml:"HealthCheckPath,omitempty"`
	Matcher                    *xmlMatch `xml:"Matcher,omitempty"`
	LoadBalancerArns           []string  `xml:"LoadBalancerArns>member"`
	TargetType                 string    `xml:"TargetType"`
	IPAddressType              string    `xml:"IpAddressType"`
}

type xmlMatch struct {
	HTTPCode string `xml:"HttpCode"`
}

type xmlAction struct {
	Type           string `xml:"Type"`
	TargetGroupArn string `xml:"TargetGroupArn"`
	ForwardConfig  struct {
		TargetGroups []xmlTGTuple `xml:"TargetGroups>member"`
	} `xml:"ForwardConfig"`
}

type xmlTGTuple struct {
	TargetGroupArn string `xml:"TargetGroupArn"`
	Weight         int    `xml:"Weight"`
}

type xmlListener struct {
	ListenerArn     string      `xml:"ListenerArn"`
	LoadBalancerArn string      `xml:"LoadBalancerArn"`
	Port            int         `xml:"Port"`
	Protocol        string      `xml:"Protocol"`
	DefaultActions  []xmlAction `xml:"DefaultActions>member"`
}

var elbActions = lazy.Value[map[string]queryHandler]{New: func() map[string]queryHandler {
	return map[string]queryHandler{
		"CreateLoadBalancer":             (*Server).elbCreateLB,
		"DescribeLoadBalancers":          (*Server).elbDescribeLBs,
		"DeleteLoadBalancer":             (*Server).elbDeleteLB,
		"DescribeLoadBalancerAttributes": (*Server).elbDescribeLBAttributes,
		"CreateTargetGroup":              (*Server).elbCreateTG,
		"DescribeTargetGroups":           (*Server).elbDescribeTGs,
		"ModifyTargetGroup":              (*Server).elbModifyTG,
		"DeleteTargetGroup":              (*Server).elbDeleteTG,
		"DescribeTargetGroupAttributes":  (*Server).elbDescribeTGAttributes,
		"ModifyTargetGroupAttributes":    (*Server).elbModifyTGAttributes,
		"RegisterTargets":                (*Server).elbRegisterTargets,
		"DeregisterTargets":              (*Server).elbDeregisterTargets,
		"DescribeTargetHealth":           (*Server).elbDescribeTargetHealth,
		"CreateListener":                 (*Server).elbCreateListener,
		"DescribeListeners":              (*Server).elbDescribeListeners,
		"DeleteListener":                 (*Server).elbDeleteListener,
		"AddTags":                        (*Server).elbAddTags,
		"RemoveTags":                     (*Server).elbRemoveTags,
		"DescribeTags":                   (*Server).elbDescribeTags,
	}
}}

func (s *Server) elb() *elbState {
	e := &s.St.ELBV2
	if e.LoadBalancers == nil {
		e.LoadBalancers = map[string]*elbLB{}
	}
	if e.TargetGroups == nil {
		e.TargetGroups = map[string]*elbTG{}
	}
	if e.Listeners == nil {
		e.Listeners = map[string]*elbListener{}
	}
	return e
}

// elbValidation is the ValidationError the service answers for a bad parameter.
func elbValidation(format string, a ...any) *apiError {
	return errf(400, "ValidationError", format, a...)
}

// elbMembers is an awsQuery list: prefix.member.1, prefix.member.2, ...
func elbMembers(p params, prefix string) []string { return p.list(prefix + ".member") }

// elbStructs is an awsQuery list of structures: prefix.member.N.Field.
func elbStructs(p params, prefix string) []params { return p.structs(prefix + ".member") }

func (s *Server) elbARN(kind, name string) string {
	return fmt.Sprintf("arn:aws:%s:%s:%s:%s/%s/%s", elbService, s.St.Region, s.St.Account, kind, name, randFrom(hexDigits, 16))
}

// elbName checks the name of a load balancer or target group as the service does: at most 32
// alphanumerics and hyphens, not starting or ending with a hyphen.
var elbNameRE = lazy.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,30}[A-Za-z0-9])?$`)

func elbCheckName(what, name string) error {
	if name == "" {
		return elbValidation("%s name is required", what)
	}
	if !elbNameRE.MatchString(name) {
		return elbValidation("%s name '%s' cannot be longer than '32' characters, can only contain alphanumeric characters and hyphens, and cannot begin or end with a hyphen", what, name)
	}
	return nil
}

// elbTags reads Tags.member.N.Key/Value (at most 50 keys, each once).
func elbTags(p params) ([]elbTag, error) {
	var out []elbTag
	seen := map[string]bool{}
	for _, t := range elbStructs(p, "Tags") {
		k := t.get("Key")
		if k == "" {
			return nil, elbValidation("A tag key is required")
		}
		if strings.HasPrefix(strings.ToLower(k), "aws:") {
			return nil, elbValidation("Tag keys starting with 'aws:' are reserved for internal use")
		}
		if seen[k] {
			return nil, errf(400, "DuplicateTagKeys", "Tag key '%s' is duplicated", k)
		}
		seen[k] = true
		out = append(out, elbTag{Key: k, Value: t.get("Value")})
	}
	if len(out) > 50 {
		return nil, errf(400, "TooManyTags", "You've reached the limit on the number of tags for this resource (50)")
	}
	return out, nil
}

// elbPort reads a port parameter (1-65535); absent is 0.
func elbPort(p params, k string) (int, error) {
	v := p.get(k)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 65535 {
		return 0, elbValidation("%s '%s' must be between 1 and 65535", k, v)
	}
	return n, nil
}

// elbInt reads an integer parameter within [lo, hi]; absent is def.
func elbInt(p params, k string, def, lo, hi int) (int, error) {
	v := p.get(k)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, elbValidation("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must have value between %d and %d", v, lowerFirst(k), lo, hi)
	}
	return n, nil
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// canonicalZone is the Route 53 hosted zone of network load balancers in region.
func canonicalZone(region string) string {
	zones := map[string]string{"us-east-1": "Z26RNL4JYFTOTI", "us-east-2": "ZLMOA37VPKANP", "us-west-1": "Z24FKFUX50B4VW",
		"us-west-2": "Z18D5FSROUN65G", "eu-west-1": "Z2IFOLAFXWLO4F", "eu-central-1": "Z3F0SRJ5LGBH90"}
	if z, ok := zones[region]; ok {
		return z
	}
	return "Z" + strings.ToUpper(stableHex("nlb-zone/"+region, 13))
}

func (s *Server) lbWire(lb *elbLB) xmlLB {
	x := xmlLB{LoadBalancerArn: lb.ARN, DNSName: lb.DNSName, CanonicalHostedZoneID: canonicalZone(s.St.Region),
		CreatedTime: lb.Created.UTC().Format("2006-01-02T15:04:05.000Z"), LoadBalancerName: lb.Name, Scheme: lb.Scheme,
		VpcID: lb.VpcID, State: xmlLBState{Code: lb.State, Reason: lb.Reason}, Type: lb.Type, IPAddressType: lb.IPAddressType}
	if len(lb.SecurityGroups) > 0 {
		sgs := append([]string(nil), lb.SecurityGroups...)
		x.SecurityGroups = &sgs
	}
	for _, z := range lb.Zones {
		a := xmlLBAddress{PrivateIPv4Address: z.IP}
		if lb.Scheme == "internet-facing" {
			// The balancer's address is the one clients reach: the emulator has no public addresses.
			a = xmlLBAddress{IPAddress: z.IP}
		}
		x.AvailabilityZones = append(x.AvailabilityZones, xmlLBZone{ZoneName: z.Zone, SubnetID: z.SubnetID, Addresses: []xmlLBAddress{a}})
	}
	return x
}

func (s *Server) tgWire(tg *elbTG) xmlTG {
	x := xmlTG{TargetGroupArn: tg.ARN, TargetGroupName: tg.Name, Protocol: tg.Protocol, Port: tg.Port, VpcID: tg.VpcID,
		HealthCheckProtocol: tg.HC.Protocol, HealthCheckPort: tg.HC.Port, HealthCheckEnabled: tg.HC.Enabled,
		HealthCheckIntervalSeconds: tg.HC.Interval, HealthCheckTimeoutSeconds: tg.HC.Timeout, HealthyThresholdCount: tg.HC.Healthy,
		UnhealthyThresholdCount: tg.HC.Unhealthy, HealthCheckPath: tg.HC.Path, TargetType: tg.TargetType, IPAddressType: tg.IPAddressType,
		LoadBalancerArns: s.tgLoadBalancers(tg.ARN)}
	if tg.HC.Matcher != "" {
		x.Matcher = &xmlMatch{HTTPCode: tg.HC.Matcher}
	}
	return x
}

func listenerWire(l *elbListener) xmlListener {
	a := xmlAction{Type: "forward", TargetGroupArn: l.TargetGroup}
	a.ForwardConfig.TargetGroups = []xmlTGTuple{{TargetGroupArn: l.TargetGroup, Weight: 1}}
	return xmlListener{ListenerArn: l.ARN, LoadBalancerArn: l.LoadBalancer, Port: l.Port, Protocol: l.Protocol, DefaultActions: []xmlAction{a}}
}

// tgLoadBalancers are the load balancers whose listeners forward to the target group.
func (s *Server) tgLoadBalancers(tgARN string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range s.elb().Listeners {
		if l.TargetGroup == tgARN && !seen[l.LoadBalancer] {
			seen[l.LoadBalancer] = true
			out = append(out, l.LoadBalancer)
		}
	}
	sort.Strings(out)
	return out
}

func lbNotFound() *apiError {
	return errf(400, "LoadBalancerNotFound", "One or more load balancers not found")
}

func tgNotFound() *apiError {
	return errf(400, "TargetGroupNotFound", "One or more target groups not found")
}

func listenerNotFound() *apiError {
	return errf(400, "ListenerNotFound", "One or more listeners not found")
}

// lbSubnets reads Subnets.member.N and SubnetMappings.member.N (one of them), checks them and
// returns the zones (addresses not yet chosen but for mappings that name one).
func (s *Server) lbSubnets(p params) ([]elbZone, string, error) {
	ids := elbMembers(p, "Subnets")
	maps := elbStructs(p, "SubnetMappings")
	if len(ids) > 0 && len(maps) > 0 {
		return nil, "", elbValidation("You can specify subnets or subnet mappings, not both")
	}
	want := map[string]string{}
	for _, m := range maps {
		if m.get("AllocationId") != "" {
			return nil, "", elbValidation("nuv emulator: Elastic IP allocations of subnet mappings are not supported (omit AllocationId)")
		}
		ids = append(ids, m.get("SubnetId"))
		want[m.get("SubnetId")] = m.get("PrivateIPv4Address")
	}
	if len(ids) == 0 {
		return nil, "", elbValidation("At least one subnet must be specified")
	}
	e := s.ec2()
	var zones []elbZone
	vpc := ""
	byZone := map[string]string{}
	for _, id := range ids {
		sn := e.Subnets[id]
		if sn == nil {
			return nil, "", errf(400, "SubnetNotFound", "The subnet ID '%s' is not valid", id)
		}
		if vpc != "" && sn.VpcID != vpc {
			return nil, "", errf(400, "InvalidConfigurationRequest", "The subnets '%s' and '%s' are in different VPCs", zones[0].SubnetID, id)
		}
		vpc = sn.VpcID
		if other, dup := byZone[sn.AvailabilityZone]; dup {
			return nil, "", errf(400, "InvalidConfigurationRequest", "A load balancer cannot be attached to multiple subnets in the same Availability Zone (%s and %s are both in %s)", other, id, sn.AvailabilityZone)
		}
		byZone[sn.AvailabilityZone] = id
		z := elbZone{SubnetID: id, Zone: sn.AvailabilityZone}
		if ip := want[id]; ip != "" {
			a, err := netip.ParseAddr(ip)
			pfx, _ := parseCIDR(sn.CidrBlock)
			if err != nil || !a.Is4() || !pfx.Contains(a) || reservedInSubnet(pfx, a) {
				return nil, "", errf(400, "InvalidConfigurationRequest", "The private IPv4 address '%s' is not a valid address in subnet '%s' (%s)", ip, id, sn.CidrBlock)
			}
			z.IP = a.String()
		}
		zones = append(zones, z)
	}
	return zones, vpc, nil
}

// reservedInSubnet reports the addresses AWS keeps in every subnet: the first four and the last.
func reservedInSubnet(pfx netip.Prefix, a netip.Addr) bool {
	first := pfx.Masked().Addr()
	for i := 0; i < 4; i++ {
		if a == first {
			return true
		}
		first = first.Next()
	}
	return a == lastAddr(pfx)
}

func lastAddr(pfx netip.Prefix) netip.Addr {
	b := pfx.Masked().Addr().As4()
	n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n |= 1<<(32-pfx.Bits()) - 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// usedAddresses are the private addresses taken in the emulator's subnets: those of load
// balancers and those of EC2 instances (ec2PrivateAddresses).
func (s *Server) usedAddresses() map[string]bool {
	used := map[string]bool{}
	for _, lb := range s.elb().LoadBalancers {
		for _, z := range lb.Zones {
			used[z.IP] = true
		}
		for _, ip := range lb.Reach {
			used[ip] = true
		}
	}
	for _, ip := range s.ec2PrivateAddresses() {
		used[ip] = true
	}
	return used
}

// allocBalancerIP takes a free address of the subnet for a balancer, from the top of the subnet
// down (EC2 instances take theirs from the bottom up), skipping the addresses AWS reserves.
func (s *Server) allocBalancerIP(subnetID string, used map[string]bool) (string, error) {
	sn := s.ec2().Subnets[subnetID]
	if sn == nil {
		return "", errf(400, "SubnetNotFound", "The subnet ID '%s' is not valid", subnetID)
	}
	pfx, err := parseCIDR(sn.CidrBlock)
	if err != nil {
		return "", fmt.Errorf("subnet %s has CIDR %q: %w", subnetID, sn.CidrBlock, err)
	}
	for a := lastAddr(pfx); pfx.Contains(a); a = a.Prev() {
		if reservedInSubnet(pfx, a) || used[a.String()] {
			continue
		}
		used[a.String()] = true
		return a.String(), nil
	}
	return "", errf(400, "InvalidSubnet", "Not enough IP space available in %s", subnetID)
}

func (s *Server) elbCreateLB(p params) (any, error) {
	e := s.elb()
	name := p.get("Name")
	if err := elbCheckName("Load balancer", name); err != nil {
		return nil, err
	}
	if strings.HasPrefix(name, "internal-") {
		return nil, elbValidation("Load balancer name '%s' cannot begin with 'internal-'", name)
	}
	typ := p.get("Type")
	if typ == "" {
		typ = "application"
	}
	if typ != "network" {
		return nil, elbValidation("nuv emulator serves network load balancers only (Type=network); the load balancer type '%s' is not supported", typ)
	}
	scheme := p.get("Scheme")
	if scheme == "" {
		scheme = "internet-facing"
	}
	if scheme != "internet-facing" && scheme != "internal" {
		return nil, elbValidation("1 validation error detected: Value '%s' at 'scheme' failed to satisfy constraint: Member must satisfy enum value set: [internet-facing, internal]", scheme)
	}
	ipType := p.get("IpAddressType")
	if ipType == "" {
		ipType = "ipv4"
	}
	if ipType != "ipv4" {
		return nil, elbValidation("nuv emulator: IP address type '%s' is not supported (ipv4 only)", ipType)
	}
	zones, vpc, err := s.lbSubnets(p)
	if err != nil {
		return nil, err
	}
	sgs := elbMembers(p, "SecurityGroups")
	for _, id := range sgs {
		if g := s.ec2().SecurityGroups[id]; g == nil || g.VpcID != vpc {
			return nil, errf(400, "InvalidSecurityGroup", "Security group '%s' does not exist in VPC '%s'", id, vpc)
		}
	}
	tags, err := elbTags(p)
	if err != nil {
		return nil, err
	}
	for _, lb := range e.LoadBalancers {
		if lb.Name != name {
			continue
		}
		// The call is idempotent: the same settings answer the existing load balancer.
		if lb.Scheme == scheme && lb.Type == typ && sameSubnets(lb.Zones, zones) {
			return s.lbAnswer(lb), nil
		}
		return nil, errf(400, "DuplicateLoadBalancerName", "A load balancer with the same name '%s' exists, but with different settings", name)
	}
	if scheme == "internet-facing" && !s.vpcHasIGW(vpc) {
		return nil, errf(400, "InvalidSubnet", "VPC %s has no internet gateway", vpc)
	}
	used := s.usedAddresses()
	for i := range zones {
		if zones[i].IP != "" {
			if used[zones[i].IP] {
				return nil, errf(400, "InvalidConfigurationRequest", "The private IPv4 address '%s' of subnet '%s' is in use", zones[i].IP, zones[i].SubnetID)
			}
			used[zones[i].IP] = true
		}
	}
	for i := range zones {
		if zones[i].IP == "" {
			if zones[i].IP, err = s.allocBalancerIP(zones[i].SubnetID, used); err != nil {
				return nil, err
			}
		}
	}
	arn := s.elbARN("loadbalancer/net", name)
	id := arn[strings.LastIndex(arn, "/")+1:]
	t := time.Now().UTC()
	lb := &elbLB{ARN: arn, Name: name, DNSName: fmt.Sprintf("%s-%s.elb.%s.amazonaws.com", name, id, s.St.Region), Scheme: scheme, Type: typ,
		VpcID: vpc, IPAddressType: ipType, SecurityGroups: sgs, State: "provisioning", Created: t, Due: t.Add(s.Delay), Zones: zones,
		Tags: tags, Container: balancerContainer(s.St.Account, name, id), Gen: 1}
	e.LoadBalancers[arn] = lb
	s.Log.Infof("emulator: load balancer %s provisioning (%s)", name, zoneIPs(lb.Zones))
	return s.lbAnswer(lb), nil
}

func zoneIPs(zs []elbZone) string {
	var out []string
	for _, z := range zs {
		out = append(out, z.SubnetID+"="+z.IP)
	}
	return strings.Join(out, ", ")
}

func sameSubnets(a, b []elbZone) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].SubnetID != b[i].SubnetID || (b[i].IP != "" && b[i].IP != a[i].IP) {
			return false
		}
	}
	return true
}

func (s *Server) vpcHasIGW(vpc string) bool {
	for _, g := range s.ec2().InternetGateways {
		for _, a := range g.Attachments {
			if a.VpcID == vpc {
				return true
			}
		}
	}
	return false
}

func (s *Server) lbAnswer(lbs ...*elbLB) any {
	out := make([]xmlLB, 0, len(lbs))
	for _, lb := range lbs {
		out = append(out, s.lbWire(lb))
	}
	return &struct {
		LoadBalancers []xmlLB `xml:"LoadBalancers>member"`
	}{out}
}

// lbsOf returns the load balancers named by ARN (LoadBalancerArns) or by name (Names), or all.
func (s *Server) lbsOf(p params) ([]*elbLB, error) {
	e := s.elb()
	arns, names := elbMembers(p, "LoadBalancerArns"), elbMembers(p, "Names")
	if len(arns) > 0 && len(names) > 0 {
		return nil, elbValidation("Load balancer names and load balancer ARNs cannot be specified at the same time")
	}
	var out []*elbLB
	switch {
	case len(arns) > 0:
		for _, a := range arns {
			lb := e.LoadBalancers[a]
			if lb == nil {
				return nil, lbNotFound()
			}
			out = append(out, lb)
		}
	case len(names) > 0:
		for _, n := range names {
			var found *elbLB
			for _, lb := range e.LoadBalancers {
				if lb.Name == n {
					found = lb
				}
			}
			if found == nil {
				return nil, errf(400, "LoadBalancerNotFound", "Load balancers '[%s]' not found", n)
			}
			out = append(out, found)
		}
	default:
		for _, k := range sortedKeys(e.LoadBalancers) {
			out = append(out, e.LoadBalancers[k])
		}
	}
	return out, nil
}

func (s *Server) elbDescribeLBs(p params) (any, error) {
	lbs, err := s.lbsOf(p)
	if err != nil {
		return nil, err
	}
	return s.lbAnswer(lbs...), nil
}

func (s *Server) elbDescribeLBAttributes(p params) (any, error) {
	arn, err := p.required("LoadBalancerArn")
	if err != nil {
		return nil, err
	}
	if s.elb().LoadBalancers[arn] == nil {
		return nil, lbNotFound()
	}
	return attributesAnswer([][2]string{{"deletion_protection.enabled", "false"}, {"load_balancing.cross_zone.enabled", "false"},
		{"access_logs.s3.enabled", "false"}, {"ipv6.deny_all_igw_traffic", "false"}, {"dns_record.client_routing_policy", "any_availability_zone"}}), nil
}

type xmlAttribute struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

func attributesAnswer(kv [][2]string) any {
	var out []xmlAttribute
	for _, a := range kv {
		out = append(out, xmlAttribute{a[0], a[1]})
	}
	return &struct {
		Attributes []xmlAttribute `xml:"Attributes>member"`
	}{out}
}

func (s *Server) elbDeleteLB(p params) (any, error) {
	e := s.elb()
	arn, err := p.required("LoadBalancerArn")
	if err != nil {
		return nil, err
	}
	lb := e.LoadBalancers[arn]
	if lb == nil {
		if !strings.Contains(arn, ":loadbalancer/") {
			return nil, elbValidation("'%s' is not a valid load balancer ARN", arn)
		}
		return &struct{}{}, nil // deleting what is gone succeeds, as the service does
	}
	for k, l := range e.Listeners {
		if l.LoadBalancer == arn {
			delete(e.Listeners, k)
		}
	}
	nets := map[string]string{}
	for _, z := range lb.Zones {
		nets[z.SubnetID] = s.subnetCIDR(z.SubnetID)
	}
	for id := range lb.Reach {
		nets[id] = s.subnetCIDR(id)
	}
	e.Removing = append(e.Removing, &elbRemoval{Container: lb.Container, Networks: nets})
	delete(e.LoadBalancers, arn)
	s.touchTargetGroups()
	s.Log.Infof("emulator: load balancer %s deleted; its balancer %s is being removed", lb.Name, lb.Container)
	return &struct{}{}, nil
}

func (s *Server) subnetCIDR(id string) string {
	if sn := s.ec2().Subnets[id]; sn != nil {
		return sn.CidrBlock
	}
	return ""
}

// taggable finds the tags of a load balancer, target group or listener by ARN.
func (s *Server) elbTaggable(arn string) (*[]elbTag, error) {
	e := s.elb()
	switch {
	case strings.Contains(arn, ":loadbalancer/"):
		if lb := e.LoadBalancers[arn]; lb != nil {
			return &lb.Tags, nil
		}
		return nil, lbNotFound()
	case strings.Contains(arn, ":targetgroup/"):
		if tg := e.TargetGroups[arn]; tg != nil {
			return &tg.Tags, nil
		}
		return nil, tgNotFound()
	case strings.Contains(arn, ":listener/"):
		if l := e.Listeners[arn]; l != nil {
			return &l.Tags, nil
		}
		return nil, listenerNotFound()
	}
	return nil, elbValidation("'%s' is not a valid load balancer, target group or listener ARN", arn)
}

func (s *Server) elbAddTags(p params) (any, error) {
	arns := elbMembers(p, "ResourceArns")
	if len(arns) == 0 {
		return nil, elbValidation("At least one resource ARN must be specified")
	}
	tags, err := elbTags(p)
	if err != nil {
		return nil, err
	}
	if len(tags) == 0 {
		return nil, elbValidation("At least one tag must be specified")
	}
	var targets []*[]elbTag
	for _, a := range arns {
		t, err := s.elbTaggable(a)
		if err != nil {
			return nil, err
		}
		merged := setELBTags(*t, tags)
		if len(merged) > 50 {
			return nil, errf(400, "TooManyTags", "You've reached the limit on the number of tags for resource '%s' (50)", a)
		}
		targets = append(targets, t)
	}
	for _, t := range targets {
		*t = setELBTags(*t, tags)
	}
	return &struct{}{}, nil
}

func setELBTags(have, add []elbTag) []elbTag {
	out := append([]elbTag(nil), have...)
	for _, a := range add {
		found := false
		for i := range out {
			if out[i].Key == a.Key {
				out[i].Value, found = a.Value, true
			}
		}
		if !found {
			out = append(out, a)
		}
	}
	return out
}

func (s *Server) elbRemoveTags(p params) (any, error) {
	arns, keys := elbMembers(p, "ResourceArns"), elbMembers(p, "TagKeys")
	if len(arns) == 0 || len(keys) == 0 {
		return nil, elbValidation("Resource ARNs and tag keys must be specified")
	}
	var targets []*[]elbTag
	for _, a := range arns {
		t, err := s.elbTaggable(a)
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}
	for _, t := range targets {
		kept := (*t)[:0]
		for _, tag := range *t {
			if !contains(keys, tag.Key) {
				kept = append(kept, tag)
			}
		}
		*t = kept
	}
	return &struct{}{}, nil
}

func (s *Server) elbDescribeTags(p params) (any, error) {
	arns := elbMembers(p, "ResourceArns")
	if len(arns) == 0 {
		return nil, elbValidation("At least one resource ARN must be specified")
	}
	if len(arns) > 20 {
		return nil, elbValidation("1 validation error detected: Value at 'resourceArns' failed to satisfy constraint: Member must have length less than or equal to 20")
	}
	type desc struct {
		ResourceArn string   `xml:"ResourceArn"`
		Tags        []elbTag `xml:"Tags>member"`
	}
	var out []desc
	for _, a := range arns {
		t, err := s.elbTaggable(a)
		if err != nil {
			return nil, err
		}
		out = append(out, desc{ResourceArn: a, Tags: append([]elbTag{}, *t...)})
	}
	return &struct {
		TagDescriptions []desc `xml:"TagDescriptions>member"`
	}{out}, nil
}

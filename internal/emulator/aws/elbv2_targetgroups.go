package aws

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// healthDefaults are the health check defaults of a target group of protocol TCP.
func healthDefaults(protocol string) elbHealthCheck {
	hc := elbHealthCheck{Enabled: true, Protocol: protocol, Port: "traffic-port", Interval: 30, Timeout: 10, Healthy: 5, Unhealthy: 2}
	if protocol == "HTTP" || protocol == "HTTPS" {
		hc.Path, hc.Matcher, hc.Timeout = "/", "200-399", 6
	}
	return hc
}

// healthCheckOf applies the HealthCheck* parameters to hc and checks them as the service does.
func healthCheckOf(p params, hc elbHealthCheck, create bool) (elbHealthCheck, error) {
	var err error
	if v := p.get("HealthCheckProtocol"); v != "" {
		switch v {
		case "TCP", "HTTP", "HTTPS":
		default:
			return hc, elbValidation("Health check protocol '%s' is not supported for target groups with the TCP protocol (TCP, HTTP or HTTPS)", v)
		}
		if v != hc.Protocol && create {
			hc = healthDefaults(v)
		}
		hc.Protocol = v
		if v != "TCP" && hc.Path == "" {
			hc.Path, hc.Matcher = "/", "200-399"
		}
		if v == "TCP" {
			hc.Path, hc.Matcher = "", ""
		}
	}
	if v := p.get("HealthCheckPort"); v != "" {
		if v != "traffic-port" {
			if n, err := strconv.Atoi(v); err != nil || n < 1 || n > 65535 {
				return hc, elbValidation("Health check port '%s' must be 'traffic-port' or a port between 1 and 65535", v)
			}
		}
		hc.Port = v
	}
	if v := p.get("HealthCheckPath"); v != "" {
		if hc.Protocol == "TCP" {
			return hc, elbValidation("Health check path is not supported with the TCP health check protocol")
		}
		if !strings.HasPrefix(v, "/") || len(v) > 1024 {
			return hc, elbValidation("Health check path '%s' must begin with '/' and be at most 1024 characters", v)
		}
		hc.Path = v
	}
	if v := p.get("Matcher.HttpCode"); v != "" {
		if hc.Protocol == "TCP" {
			return hc, elbValidation("A matcher is not supported with the TCP health check protocol")
		}
		if _, _, ok := parseMatcher(v); !ok {
			return hc, elbValidation("Matcher HTTP code '%s' is not valid: want codes between 200 and 599, e.g. 200 or 200-399", v)
		}
		hc.Matcher = v
	}
	hc.Enabled = p.boolean("HealthCheckEnabled", hc.Enabled)
	if !hc.Enabled {
		return hc, elbValidation("Health checks cannot be disabled for target groups with the TCP protocol")
	}
	if hc.Interval, err = elbInt(p, "HealthCheckIntervalSeconds", hc.Interval, 5, 300); err != nil {
		return hc, err
	}
	if hc.Timeout, err = elbInt(p, "HealthCheckTimeoutSeconds", hc.Timeout, 2, 120); err != nil {
		return hc, err
	}
	if hc.Healthy, err = elbInt(p, "HealthyThresholdCount", hc.Healthy, 2, 10); err != nil {
		return hc, err
	}
	if hc.Unhealthy, err = elbInt(p, "UnhealthyThresholdCount", hc.Unhealthy, 2, 10); err != nil {
		return hc, err
	}
	if hc.Timeout > hc.Interval {
		return hc, elbValidation("Health check timeout '%d' must be smaller than or equal to the interval '%d'", hc.Timeout, hc.Interval)
	}
	return hc, nil
}

// parseMatcher reads "200", "200,202" or "200-399" as the range of codes it accepts (lowest, highest).
func parseMatcher(m string) (lo, hi int, ok bool) {
	lo, hi = 600, 0
	for _, part := range strings.Split(m, ",") {
		a, b, isRange := strings.Cut(part, "-")
		if !isRange {
			b = a
		}
		x, err1 := strconv.Atoi(a)
		y, err2 := strconv.Atoi(b)
		if err1 != nil || err2 != nil || x < 200 || y > 599 || x > y {
			return 0, 0, false
		}
		lo, hi = min(lo, x), max(hi, y)
	}
	return lo, hi, true
}

func (s *Server) elbCreateTG(p params) (any, error) {
	e := s.elb()
	name := p.get("Name")
	if err := elbCheckName("Target group", name); err != nil {
		return nil, err
	}
	tt := p.get("TargetType")
	if tt == "" {
		tt = "instance"
	}
	if tt != "instance" && tt != "ip" {
		return nil, elbValidation("nuv emulator: target type '%s' is not supported (instance or ip)", tt)
	}
	proto := p.get("Protocol")
	if proto == "" {
		return nil, elbValidation("A protocol must be specified for target groups of type '%s'", tt)
	}
	if proto != "TCP" {
		return nil, elbValidation("nuv emulator serves TCP target groups only; the protocol '%s' is not supported", proto)
	}
	port, err := elbPort(p, "Port")
	if err != nil {
		return nil, err
	}
	if port == 0 {
		return nil, elbValidation("A port must be specified")
	}
	vpc := p.get("VpcId")
	if vpc == "" {
		return nil, elbValidation("A VPC ID must be specified")
	}
	if s.ec2().Vpcs[vpc] == nil {
		return nil, elbValidation("The VPC ID '%s' is not found", vpc)
	}
	ipType := p.get("IpAddressType")
	if ipType == "" {
		ipType = "ipv4"
	}
	if ipType != "ipv4" {
		return nil, elbValidation("nuv emulator: IP address type '%s' is not supported (ipv4 only)", ipType)
	}
	hc, err := healthCheckOf(p, healthDefaults(proto), true)
	if err != nil {
		return nil, err
	}
	tags, err := elbTags(p)
	if err != nil {
		return nil, err
	}
	for _, tg := range e.TargetGroups {
		if tg.Name != name {
			continue
		}
		if tg.Protocol == proto && tg.Port == port && tg.VpcID == vpc && tg.TargetType == tt && tg.HC == hc {
			return s.tgAnswer(tg), nil
		}
		return nil, errf(400, "DuplicateTargetGroupName", "A target group with the same name '%s' exists, but with different settings", name)
	}
	tg := &elbTG{ARN: s.elbARN("targetgroup", name), Name: name, Protocol: proto, Port: port, VpcID: vpc, TargetType: tt,
		IPAddressType: ipType, HC: hc, Tags: tags, DeregistrationDelay: 300}
	e.TargetGroups[tg.ARN] = tg
	return s.tgAnswer(tg), nil
}

func (s *Server) tgAnswer(tgs ...*elbTG) any {
	out := make([]xmlTG, 0, len(tgs))
	for _, tg := range tgs {
		out = append(out, s.tgWire(tg))
	}
	return &struct {
		TargetGroups []xmlTG `xml:"TargetGroups>member"`
	}{out}
}

func (s *Server) tg(arn string) (*elbTG, error) {
	if arn == "" {
		return nil, elbValidation("A target group ARN must be specified")
	}
	tg := s.elb().TargetGroups[arn]
	if tg == nil {
		return nil, tgNotFound()
	}
	return tg, nil
}

func (s *Server) elbDescribeTGs(p params) (any, error) {
	e := s.elb()
	arns, names, lbARN := elbMembers(p, "TargetGroupArns"), elbMembers(p, "Names"), p.get("LoadBalancerArn")
	if (len(arns) > 0 && len(names) > 0) || (lbARN != "" && len(arns)+len(names) > 0) {
		return nil, elbValidation("Only one of load balancer ARN, target group ARNs or target group names can be specified")
	}
	var out []*elbTG
	switch {
	case len(arns) > 0:
		for _, a := range arns {
			tg, err := s.tg(a)
			if err != nil {
				return nil, err
			}
			out = append(out, tg)
		}
	case len(names) > 0:
		for _, n := range names {
			var found *elbTG
			for _, tg := range e.TargetGroups {
				if tg.Name == n {
					found = tg
				}
			}
			if found == nil {
				return nil, errf(400, "TargetGroupNotFound", "Target groups '[%s]' not found", n)
			}
			out = append(out, found)
		}
	case lbARN != "":
		if e.LoadBalancers[lbARN] == nil {
			return nil, lbNotFound()
		}
		for _, k := range sortedKeys(e.TargetGroups) {
			if contains(s.tgLoadBalancers(k), lbARN) {
				out = append(out, e.TargetGroups[k])
			}
		}
	default:
		for _, k := range sortedKeys(e.TargetGroups) {
			out = append(out, e.TargetGroups[k])
		}
	}
	return s.tgAnswer(out...), nil
}

func (s *Server) elbModifyTG(p params) (any, error) {
	tg, err := s.tg(p.get("TargetGroupArn"))
	if err != nil {
		return nil, err
	}
	hc, err := healthCheckOf(p, tg.HC, false)
	if err != nil {
		return nil, err
	}
	if hc != tg.HC {
		tg.HC = hc
		s.touchTargetGroups(tg.ARN)
	}
	return s.tgAnswer(tg), nil
}

func (s *Server) elbDeleteTG(p params) (any, error) {
	e := s.elb()
	arn, err := p.required("TargetGroupArn")
	if err != nil {
		return nil, err
	}
	if e.TargetGroups[arn] == nil {
		return &struct{}{}, nil // deleting what is gone succeeds
	}
	if lbs := s.tgLoadBalancers(arn); len(lbs) > 0 {
		return nil, errf(400, "ResourceInUse", "Target group '%s' is currently in use by a listener or a rule", arn)
	}
	delete(e.TargetGroups, arn)
	return &struct{}{}, nil
}

func (s *Server) elbDescribeTGAttributes(p params) (any, error) {
	tg, err := s.tg(p.get("TargetGroupArn"))
	if err != nil {
		return nil, err
	}
	return attributesAnswer([][2]string{{"deregistration_delay.timeout_seconds", strconv.Itoa(tg.DeregistrationDelay)},
		{"deregistration_delay.connection_termination.enabled", "false"}, {"proxy_protocol_v2.enabled", "false"},
		{"preserve_client_ip.enabled", "false"}, {"stickiness.enabled", "false"}, {"stickiness.type", "source_ip"},
		{"load_balancing.cross_zone.enabled", "use_load_balancer_configuration"}}), nil
}

// elbModifyTGAttributes takes deregistration_delay.timeout_seconds (what the emulator acts on)
// and refuses the attributes it would only pretend to honour.
func (s *Server) elbModifyTGAttributes(p params) (any, error) {
	tg, err := s.tg(p.get("TargetGroupArn"))
	if err != nil {
		return nil, err
	}
	for _, a := range elbStructs(p, "Attributes") {
		k, v := a.get("Key"), a.get("Value")
		switch k {
		case "deregistration_delay.timeout_seconds":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 3600 {
				return nil, elbValidation("Attribute '%s' must be between 0 and 3600, not '%s'", k, v)
			}
			tg.DeregistrationDelay = n
		default:
			return nil, elbValidation("nuv emulator: the target group attribute '%s' is not supported (deregistration_delay.timeout_seconds only)", k)
		}
	}
	return s.elbDescribeTGAttributes(p)
}

// rfc1918 are the ranges an ip target may come from besides its VPC's subnets.
var privateRanges = lazy.Value[[]netip.Prefix]{New: func() []netip.Prefix {
	var out []netip.Prefix
	for _, c := range []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"} {
		out = append(out, netip.MustParsePrefix(c))
	}
	return out
}}

// targetsOf reads Targets.member.N.Id/Port/AvailabilityZone with the group's port as default.
func targetsOf(p params, tg *elbTG) ([]*elbTarget, error) {
	ms := elbStructs(p, "Targets")
	if len(ms) == 0 {
		return nil, elbValidation("At least one target must be specified")
	}
	var out []*elbTarget
	for _, m := range ms {
		id := m.get("Id")
		if id == "" {
			return nil, elbValidation("A target ID must be specified")
		}
		port, err := elbPort(m, "Port")
		if err != nil {
			return nil, err
		}
		if port == 0 {
			port = tg.Port
		}
		out = append(out, &elbTarget{ID: id, Port: port, AZ: m.get("AvailabilityZone")})
	}
	return out, nil
}

func (tg *elbTG) find(id string, port int) *elbTarget {
	for _, t := range tg.Targets {
		if t.ID == id && t.Port == port {
			return t
		}
	}
	return nil
}

func (s *Server) elbRegisterTargets(p params) (any, error) {
	tg, err := s.tg(p.get("TargetGroupArn"))
	if err != nil {
		return nil, err
	}
	ts, err := targetsOf(p, tg)
	if err != nil {
		return nil, err
	}
	var invalid, notRunning []string
	for _, t := range ts {
		switch tg.TargetType {
		case "ip":
			a, err := netip.ParseAddr(t.ID)
			if err != nil || !a.Is4() {
				return nil, errf(400, "InvalidTarget", "The IP address '%s' is not a valid IPv4 address", t.ID)
			}
			inVPC := false
			if v := s.ec2().Vpcs[tg.VpcID]; v != nil {
				pfx, _ := parseCIDR(v.CidrBlock)
				inVPC = pfx.Contains(a)
			}
			private := inVPC
			for _, r := range privateRanges.Get() {
				private = private || r.Contains(a)
			}
			if !private {
				return nil, errf(400, "InvalidTarget", "The IP address '%s' is not in a valid range: ip targets come from the VPC's subnets (%s) or the ranges 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 and 100.64.0.0/10", t.ID, tg.VpcID)
			}
			if !inVPC && t.AZ != "all" {
				return nil, elbValidation("The IP address '%s' is outside the VPC: the Availability Zone of the target must be 'all'", t.ID)
			}
		case "instance":
			inst, ok := s.ec2InstanceTarget(t.ID)
			switch {
			case !ok:
				invalid = append(invalid, t.ID)
			case inst.VpcID != tg.VpcID:
				return nil, errf(400, "InvalidTarget", "The following targets are not in the target group's VPC '%s': '%s'", tg.VpcID, t.ID)
			case inst.State != "running":
				notRunning = append(notRunning, t.ID)
			}
		}
	}
	if len(invalid) > 0 {
		return nil, errf(400, "InvalidTarget", "The following targets are not valid instances: '%s'", strings.Join(invalid, "', '"))
	}
	if len(notRunning) > 0 {
		return nil, errf(400, "InvalidTarget", "The following targets are not in a running state and cannot be registered: '%s'", strings.Join(notRunning, "', '"))
	}
	t0 := time.Now().UTC()
	for _, t := range ts {
		if old := tg.find(t.ID, t.Port); old != nil {
			if old.State == "draining" { // registered again while draining: back to initial
				*old = elbTarget{ID: old.ID, Port: old.Port, AZ: t.AZ, Registered: t0}
			}
			continue
		}
		t.Registered = t0
		tg.Targets = append(tg.Targets, t)
	}
	s.refreshTargets(tg, t0)
	s.touchTargetGroups(tg.ARN)
	return &struct{}{}, nil
}

func (s *Server) elbDeregisterTargets(p params) (any, error) {
	tg, err := s.tg(p.get("TargetGroupArn"))
	if err != nil {
		return nil, err
	}
	ts, err := targetsOf(p, tg)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, t := range ts {
		if tg.find(t.ID, t.Port) == nil {
			missing = append(missing, t.ID)
		}
	}
	if len(missing) > 0 {
		return nil, errf(400, "InvalidTarget", "The following targets are not registered in target group '%s': '%s'", tg.Name, strings.Join(missing, "', '"))
	}
	t0 := time.Now().UTC()
	for _, t := range ts {
		old := tg.find(t.ID, t.Port)
		if old.State == "draining" {
			continue
		}
		if len(s.tgLoadBalancers(tg.ARN)) == 0 {
			tg.remove(old) // not in use: nothing to drain
			continue
		}
		old.State, old.Reason, old.Description = "draining", "Target.DeregistrationInProgress", "Target deregistration is in progress"
		old.DrainUntil = t0.Add(s.drainTime(tg))
	}
	s.touchTargetGroups(tg.ARN)
	return &struct{}{}, nil
}

// drainTime is how long a deregistered target drains: the group's deregistration delay, but
// never longer than the emulator's Delay (tests wait for it).
func (s *Server) drainTime(tg *elbTG) time.Duration {
	return min(time.Duration(tg.DeregistrationDelay)*time.Second, s.Delay)
}

func (tg *elbTG) remove(t *elbTarget) {
	kept := tg.Targets[:0]
	for _, x := range tg.Targets {
		if x != t {
			kept = append(kept, x)
		}
	}
	tg.Targets = kept
}

type xmlTargetHealth struct {
	Target struct {
		ID               string `xml:"Id"`
		Port             int    `xml:"Port"`
		AvailabilityZone string `xml:"AvailabilityZone,omitempty"`
	} `xml:"Target"`
	HealthCheckPort string `xml:"HealthCheckPort"`
	TargetHealth    struct {
		State       string `xml:"State"`
		Reason      string `xml:"Reason,omitempty"`
		Description string `xml:"Description,omitempty"`
	} `xml:"TargetHealth"`
}

func (s *Server) elbDescribeTargetHealth(p params) (any, error) {
	tg, err := s.tg(p.get("TargetGroupArn"))
	if err != nil {
		return nil, err
	}
	s.refreshTargets(tg, time.Now())
	var ts []*elbTarget
	if len(elbStructs(p, "Targets")) > 0 {
		if ts, err = targetsOf(p, tg); err != nil {
			return nil, err
		}
		for i, t := range ts {
			if r := tg.find(t.ID, t.Port); r != nil {
				ts[i] = r
				continue
			}
			t.State, t.Reason, t.Description = "unused", "Target.NotRegistered", "Target is not registered to the target group"
		}
	} else {
		ts = tg.Targets
	}
	out := make([]xmlTargetHealth, 0, len(ts))
	for _, t := range ts {
		var x xmlTargetHealth
		x.Target.ID, x.Target.Port, x.Target.AvailabilityZone = t.ID, t.Port, s.targetZone(tg, t)
		x.HealthCheckPort = tg.HC.Port
		if x.HealthCheckPort == "traffic-port" {
			x.HealthCheckPort = strconv.Itoa(t.Port)
		}
		x.TargetHealth.State, x.TargetHealth.Reason, x.TargetHealth.Description = t.State, t.Reason, t.Description
		out = append(out, x)
	}
	return &struct {
		TargetHealthDescriptions []xmlTargetHealth `xml:"TargetHealthDescriptions>member"`
	}{out}, nil
}

// targetZone is the Availability Zone of a target: the one given, or that of its subnet.
func (s *Server) targetZone(tg *elbTG, t *elbTarget) string {
	if t.AZ != "" {
		return t.AZ
	}
	if _, sn := s.targetAddr(tg, t); sn != nil {
		return sn.AvailabilityZone
	}
	return ""
}

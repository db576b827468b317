package aws

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"
)

// Target health, as Elastic Load Balancing reports it: a target of a group no listener uses is
// unused (Target.NotInUse); once a listener forwards to the group it is initial
// (Elb.RegistrationInProgress, then Elb.InitialHealthChecking once its balancer routes to it),
// healthy after HealthyThresholdCount passed checks in a row, unhealthy
// (Target.FailedHealthChecks) after UnhealthyThresholdCount failed ones; a deregistered target
// drains (Target.DeregistrationInProgress) for the deregistration delay (at most Options.Delay)
// and is then gone. The checks are real: a TCP connect (or an HTTP GET) from the emulator to the
// target's address every HealthCheckIntervalSeconds, given HealthCheckTimeoutSeconds.

// refreshTargets puts the targets of tg into the states their group's use implies at t (s.Mu
// held): unused when no listener forwards to the group, initial when one starts to; drained
// targets whose time is up are dropped. It reports whether anything changed.
func (s *Server) refreshTargets(tg *elbTG, t time.Time) bool {
	inUse := len(s.tgLoadBalancers(tg.ARN)) > 0
	changed := false
	kept := tg.Targets[:0]
	for _, x := range tg.Targets {
		switch {
		case x.State == "draining":
			if !inUse || !t.Before(x.DrainUntil) {
				changed = true
				continue
			}
		case !inUse:
			if x.State != "unused" {
				x.State, x.Reason, x.Description, x.OK, x.Fail = "unused", "Target.NotInUse", "Target group is not configured to receive traffic from the load balancer", 0, 0
				changed = true
			}
		case tg.TargetType == "instance" && !s.instanceUsable(x.ID):
			inst, ok := s.ec2InstanceTarget(x.ID)
			if !ok { // terminated: the service deregisters it
				changed = true
				continue
			}
			if x.State != "unused" || x.Reason != "Target.InvalidState" {
				x.State, x.Reason, x.Description, x.OK, x.Fail = "unused", "Target.InvalidState", "Target is in the "+inst.State+" state", 0, 0
				changed = true
			}
		case x.State == "" || x.State == "unused":
			x.State, x.Reason, x.Description, x.OK, x.Fail = "initial", "Elb.RegistrationInProgress", "Target registration is in progress", 0, 0
			x.Next = t
			changed = true
		}
		kept = append(kept, x)
	}
	tg.Targets = kept
	return changed
}

// instanceUsable reports whether instance id runs (what an instance target needs to be checked).
func (s *Server) instanceUsable(id string) bool {
	inst, ok := s.ec2InstanceTarget(id)
	return ok && inst.State == "running"
}

// touchTargetGroups refreshes the named target groups (all when none is named) and makes the
// balancers forwarding to them reconfigure (s.Mu held).
func (s *Server) touchTargetGroups(arns ...string) {
	e := s.elb()
	if len(arns) == 0 {
		arns = sortedKeys(e.TargetGroups)
	}
	t := time.Now()
	for _, arn := range arns {
		tg := e.TargetGroups[arn]
		if tg == nil {
			continue
		}
		s.refreshTargets(tg, t)
		for _, lb := range s.tgLoadBalancers(arn) {
			if b := e.LoadBalancers[lb]; b != nil {
				b.Gen++
			}
		}
	}
}

// targetAddr is the IPv4 address of a target (an instance's private address for instance
// targets) and the VPC subnet it is in (nil: none of the group's VPC, or an instance unknown).
func (s *Server) targetAddr(tg *elbTG, t *elbTarget) (string, *ec2Subnet) {
	ip := t.ID
	if tg.TargetType == "instance" {
		inst, ok := s.ec2InstanceTarget(t.ID)
		if !ok || inst.PrivateIP == "" {
			return "", nil
		}
		ip = inst.PrivateIP
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return "", nil
	}
	for _, id := range sortedKeys(s.ec2().Subnets) {
		sn := s.ec2().Subnets[id]
		if pfx, err := parseCIDR(sn.CidrBlock); err == nil && sn.VpcID == tg.VpcID && pfx.Contains(a) {
			return ip, sn
		}
	}
	return ip, nil
}

// healthPort is the port a target is checked on.
func healthPort(tg *elbTG, t *elbTarget) int {
	if n, err := strconv.Atoi(tg.HC.Port); err == nil {
		return n
	}
	return t.Port
}

// routed are the targets a balancer forwards new connections to: those registered and not
// draining that are healthy, or all of them when none is (a network load balancer fails open).
func routed(tg *elbTG) []*elbTarget {
	var healthy, all []*elbTarget
	for _, t := range tg.Targets {
		if t.State == "draining" || t.State == "unused" {
			continue
		}
		all = append(all, t)
		if t.State == "healthy" {
			healthy = append(healthy, t)
		}
	}
	if len(healthy) > 0 {
		return healthy
	}
	return all
}

// checkTarget runs one health check of addr (ip:port) with hc's protocol and timeout.
func checkTarget(ctx context.Context, dial func(ctx context.Context, network, addr string) (net.Conn, error), addr string, hc elbHealthCheck) error {
	timeout := time.Duration(hc.Timeout) * time.Second
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if hc.Protocol == "TCP" {
		c, err := dial(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
	tr := &http.Transport{DialContext: dial, DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // #nosec G402 -- load balancers do not verify their targets' certificates
	defer tr.CloseIdleConnections()
	scheme := "http"
	if hc.Protocol == "HTTPS" {
		scheme = "https"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+addr+hc.Path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "ELB-HealthChecker/2.0")
	resp, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if lo, hi, _ := parseMatcher(hc.Matcher); resp.StatusCode < lo || resp.StatusCode > hi {
		return fmt.Errorf("HTTP %d, want %s", resp.StatusCode, hc.Matcher)
	}
	return nil
}

// reconcileHealth starts the health checks that are due (s.Mu held).
func (s *Server) reconcileHealth(t time.Time) bool {
	e := s.elb()
	changed := false
	for _, arn := range sortedKeys(e.TargetGroups) {
		tg := e.TargetGroups[arn]
		if s.refreshTargets(tg, t) {
			changed = true
			s.touchLBsOf(arn)
		}
		for _, x := range tg.Targets {
			if x.State == "draining" || x.State == "unused" || t.Before(x.Next) {
				continue
			}
			x.Next = t.Add(time.Duration(tg.HC.Interval) * time.Second)
			ip, _ := s.targetAddr(tg, x)
			addr := net.JoinHostPort(ip, strconv.Itoa(healthPort(tg, x)))
			hc, target := tg.HC, x
			s.Spawn("elb-health/"+arn+"/"+x.ID+":"+strconv.Itoa(x.Port), func(ctx context.Context) func() {
				var err error
				if ip == "" {
					err = fmt.Errorf("the instance has no private address")
				} else {
					err = checkTarget(ctx, s.elbDial, addr, hc)
				}
				return func() { s.healthResult(arn, target, err) }
			})
		}
	}
	return changed
}

// healthResult counts one health check of target x of group arn (s.Mu held).
func (s *Server) healthResult(arn string, x *elbTarget, err error) {
	tg := s.elb().TargetGroups[arn]
	if tg == nil || tg.find(x.ID, x.Port) != x || x.State == "draining" || x.State == "unused" {
		return // deregistered or deleted meanwhile
	}
	before := x.State
	if err == nil {
		x.OK, x.Fail = x.OK+1, 0
		if x.State != "healthy" && x.OK >= tg.HC.Healthy {
			x.State, x.Reason, x.Description = "healthy", "", ""
		} else if x.State == "initial" {
			x.Reason, x.Description = "Elb.InitialHealthChecking", "Initial health checks in progress"
		}
	} else {
		x.OK, x.Fail = 0, x.Fail+1
		if x.State != "unhealthy" && x.Fail >= tg.HC.Unhealthy {
			x.State, x.Reason, x.Description = "unhealthy", "Target.FailedHealthChecks", "Health checks failed"
		} else if x.State == "initial" {
			x.Reason, x.Description = "Elb.InitialHealthChecking", "Initial health checks in progress"
		}
	}
	if x.State != before {
		s.Log.Infof("emulator: target %s:%d of target group %s %s (%v)", x.ID, x.Port, tg.Name, x.State, errOrOK(err))
		s.touchLBsOf(arn)
	}
}

func errOrOK(err error) string {
	if err == nil {
		return "health check passed"
	}
	return err.Error()
}

// touchLBsOf makes the balancers forwarding to target group arn reconfigure (s.Mu held).
func (s *Server) touchLBsOf(arn string) {
	for _, lb := range s.tgLoadBalancers(arn) {
		if b := s.elb().LoadBalancers[lb]; b != nil {
			b.Gen++
		}
	}
}

package aws

import (
	"context"
	"net"
	"sort"
	"strings"
	"time"
)

// Balancers runs the real TCP balancers behind the emulator's network load balancers.
// ContainerBalancers is the real one: a container of nuv's node image running HAProxy on the
// Docker network of each of the load balancer's subnets. The emulator calls it from background
// jobs, never while it holds its lock.
type Balancers interface {
	// Ensure makes balancer b exist, run and do what b says (created, started, attached to its
	// networks, its configuration replaced and reloaded gracefully as needed) and returns once
	// every listener accepts connections on every address of b.Listen.
	Ensure(ctx context.Context, b Balancer) error
	// Remove removes a balancer's container (one that does not exist is no error), then the
	// networks of subnets that nothing else is attached to any more.
	Remove(ctx context.Context, container string, subnets []Subnet) error
}

// Balancer is what one load balancer's balancer must do.
type Balancer struct {
	// Container names it (unique on the daemon: see balancerContainer).
	Container string
	// LoadBalancer is the load balancer's name, Account the emulator's account (labels).
	LoadBalancer, Account string
	// Listen are the load balancer's subnets and its address in each (what DescribeLoadBalancers
	// reports); Reach are the subnets of targets elsewhere in the VPC and its address there.
	Listen, Reach []Subnet
	// Listeners forward ports to targets.
	Listeners []BalancerListener
}

// Subnet is a VPC subnet (its Docker network is SubnetNetwork(ID), made with CIDR) and an
// address in it.
type Subnet struct {
	ID, CIDR, IP string
	// VPC is the subnet's VPC and VPCCIDR its block: the networks of a VPC's subnets are linked
	// (LinkVPC), as the VPC's local route links its subnets.
	VPC, VPCCIDR string
}

// BalancerListener is one listener: connections to Port go to Targets, round robin, among those
// that pass Check.
type BalancerListener struct {
	Port    int
	Targets []BalancerTarget
	Check   BalancerCheck
}

// BalancerTarget is a target's address and port.
type BalancerTarget struct {
	IP   string
	Port int
}

// BalancerCheck is how the balancer checks its targets itself (the target group's health check).
type BalancerCheck struct {
	Protocol          string // TCP, HTTP or HTTPS
	Port              int    // 0: the target's port
	Path              string // HTTP(S)
	Interval, Timeout time.Duration
	Rise, Fall        int
}

// SubnetNetwork is the name of the Docker network of a VPC subnet of the AWS emulator: the
// balancers of load balancers and the machines of EC2 instances in that subnet share it (EC2's
// machines name it the same way: nuv-ec2-<subnet ID>).
func SubnetNetwork(subnetID string) string { return "nuv-ec2-" + subnetID }

// balancerContainer names the container of load balancer name (id: the ARN's last part) of
// account: unique across emulators sharing a Docker daemon.
func balancerContainer(account, name, id string) string {
	return "nuv-aws-" + account + "-elb-" + name + "-" + id[:8]
}

// elbRuntime is what the emulator keeps in memory about its balancers: the generation each runs
// (a restarted emulator reconfigures and so re-adopts every balancer) and when a failed one is
// tried again.
type elbRuntime struct {
	synced map[string]int
	retry  map[string]time.Time
}

func (s *Server) elbRT() *elbRuntime {
	if s.elbrt.synced == nil {
		s.elbrt.synced, s.elbrt.retry = map[string]int{}, map[string]time.Time{}
	}
	return &s.elbrt
}

// balancerOf is what the balancer of lb must do now (s.Mu held).
func (s *Server) balancerOf(lb *elbLB) Balancer {
	e := s.elb()
	b := Balancer{Container: lb.Container, LoadBalancer: lb.Name, Account: s.St.Account}
	for _, z := range lb.Zones {
		vpc, vcidr := s.vpcOfSubnet(z.SubnetID)
		b.Listen = append(b.Listen, Subnet{ID: z.SubnetID, CIDR: s.subnetCIDR(z.SubnetID), IP: z.IP, VPC: vpc, VPCCIDR: vcidr})
	}
	for _, id := range sortedKeys(lb.Reach) {
		vpc, vcidr := s.vpcOfSubnet(id)
		b.Reach = append(b.Reach, Subnet{ID: id, CIDR: s.subnetCIDR(id), IP: lb.Reach[id], VPC: vpc, VPCCIDR: vcidr})
	}
	for _, k := range sortedKeys(e.Listeners) {
		l := e.Listeners[k]
		tg := e.TargetGroups[l.TargetGroup]
		if l.LoadBalancer != lb.ARN || tg == nil {
			continue
		}
		bl := BalancerListener{Port: l.Port, Check: BalancerCheck{Protocol: tg.HC.Protocol, Path: tg.HC.Path,
			Interval: time.Duration(tg.HC.Interval) * time.Second, Timeout: time.Duration(tg.HC.Timeout) * time.Second,
			Rise: tg.HC.Healthy, Fall: tg.HC.Unhealthy}}
		if tg.HC.Port != "traffic-port" {
			bl.Check.Port = healthPort(tg, &elbTarget{})
		}
		for _, t := range routed(tg) {
			if ip, _ := s.targetAddr(tg, t); ip != "" {
				bl.Targets = append(bl.Targets, BalancerTarget{IP: ip, Port: t.Port})
			}
		}
		b.Listeners = append(b.Listeners, bl)
	}
	sort.Slice(b.Listeners, func(i, j int) bool { return b.Listeners[i].Port < b.Listeners[j].Port })
	return b
}

// reachTargets gives lb an address in every subnet of its targets that is not one of its own
// (s.Mu held); true when it gained one.
func (s *Server) reachTargets(lb *elbLB) bool {
	e := s.elb()
	own := map[string]bool{}
	for _, z := range lb.Zones {
		own[z.SubnetID] = true
	}
	var used map[string]bool
	changed := false
	for _, l := range e.Listeners {
		tg := e.TargetGroups[l.TargetGroup]
		if l.LoadBalancer != lb.ARN || tg == nil {
			continue
		}
		for _, t := range tg.Targets {
			_, sn := s.targetAddr(tg, t)
			if sn == nil || own[sn.SubnetID] || lb.Reach[sn.SubnetID] != "" {
				continue
			}
			if used == nil {
				used = s.usedAddresses()
			}
			ip, err := s.allocBalancerIP(sn.SubnetID, used)
			if err != nil {
				s.Log.Warnf("emulator: load balancer %s cannot reach subnet %s: %v", lb.Name, sn.SubnetID, err)
				continue
			}
			if lb.Reach == nil {
				lb.Reach = map[string]string{}
			}
			lb.Reach[sn.SubnetID] = ip
			changed = true
		}
	}
	return changed
}

// reconcileELB moves load balancers and their balancers along (s.Mu held): balancers whose
// generation is not the one that runs are (re)configured, provisioning load balancers become
// active once their balancer listens and Options.Delay has passed, the balancers of deleted load
// balancers are removed; then the health checks that are due run.
func (s *Server) reconcileELB(t time.Time) bool {
	e := s.elb()
	rt := s.elbRT()
	changed := false
	for _, r := range e.Removing {
		r := r
		s.Spawn("elb-remove/"+r.Container, func(ctx context.Context) func() {
			var subnets []Subnet
			for _, id := range sortedKeys(r.Networks) {
				subnets = append(subnets, Subnet{ID: id, CIDR: r.Networks[id]})
			}
			err := s.balancers.Remove(ctx, r.Container, subnets)
			return func() {
				if err != nil {
					s.Log.Warnf("emulator: remove balancer %s: %v (retrying)", r.Container, err)
					return
				}
				kept := e.Removing[:0]
				for _, x := range e.Removing {
					if x != r {
						kept = append(kept, x)
					}
				}
				e.Removing = kept
				s.Log.Infof("emulator: balancer %s removed", r.Container)
			}
		})
	}
	for _, arn := range sortedKeys(e.LoadBalancers) {
		lb := e.LoadBalancers[arn]
		if s.reachTargets(lb) {
			lb.Gen++
			changed = true
		}
		if rt.synced[arn] == lb.Gen {
			if lb.State == "provisioning" && !t.Before(lb.Due) {
				lb.State = "active"
				s.Log.Infof("emulator: load balancer %s active (%s)", lb.Name, zoneIPs(lb.Zones))
				changed = true
			}
			continue
		}
		if t.Before(rt.retry[arn]) {
			continue
		}
		b, gen := s.balancerOf(lb), lb.Gen
		s.Spawn("elb/"+arn, func(ctx context.Context) func() {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			err := s.balancers.Ensure(ctx, b)
			return func() {
				if s.elb().LoadBalancers[arn] != lb {
					return // deleted meanwhile: its removal is under way
				}
				if err != nil {
					s.Log.Warnf("emulator: balancer of load balancer %s: %v (retrying in 5s)", lb.Name, err)
					rt.retry[arn] = time.Now().Add(5 * time.Second)
					if lb.State == "provisioning" {
						lb.Reason = "nuv emulator: the balancer is not up yet: " + firstLine(err.Error())
					}
					return
				}
				lb.Reason = ""
				rt.synced[arn] = gen
				delete(rt.retry, arn)
			}
		})
	}
	return s.reconcileHealth(t) || changed
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// elbSubnetDeps names the load balancers using subnet id (what makes DeleteSubnet refuse).
func (s *Server) elbSubnetDeps(id string) []string {
	var out []string
	for _, lb := range s.elb().LoadBalancers {
		for _, z := range lb.Zones {
			if z.SubnetID == id {
				out = append(out, "load balancer "+lb.Name)
			}
		}
		if lb.Reach[id] != "" {
			out = append(out, "load balancer "+lb.Name+" (reaching its targets)")
		}
	}
	return out
}

// elbSubnetAddresses are the addresses balancers hold in subnet id (what EC2 must not give an
// instance there; s.Mu held).
func (s *Server) elbSubnetAddresses(id string) []string {
	var out []string
	for _, lb := range s.elb().LoadBalancers {
		for _, z := range lb.Zones {
			if z.SubnetID == id {
				out = append(out, z.IP)
			}
		}
		if ip := lb.Reach[id]; ip != "" {
			out = append(out, ip)
		}
	}
	return out
}

// defaultDial is how the emulator reaches targets for their health checks.
func defaultDial(ctx context.Context, network, addr string) (net.Conn, error) {
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}

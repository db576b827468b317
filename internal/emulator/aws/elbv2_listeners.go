package aws

import (
	"fmt"
	"sort"
	"strings"
)

// listenerActions reads DefaultActions: exactly one forward to one target group.
func (s *Server) listenerTarget(p params) (string, error) {
	acts := elbStructs(p, "DefaultActions")
	if len(acts) == 0 {
		return "", elbValidation("A default action must be specified")
	}
	if len(acts) > 1 {
		return "", errf(400, "TooManyActions", "nuv emulator: a listener of a network load balancer takes one forward action")
	}
	a := acts[0]
	if t := a.get("Type"); t != "forward" {
		return "", errf(400, "InvalidLoadBalancerAction", "The action type '%s' is not supported for network load balancers (forward)", t)
	}
	arn := a.get("TargetGroupArn")
	tuples := elbStructs(a, "ForwardConfig.TargetGroups")
	if len(tuples) > 1 {
		return "", errf(400, "InvalidLoadBalancerAction", "A forward action of a network load balancer takes one target group")
	}
	if len(tuples) == 1 {
		if t := tuples[0].get("TargetGroupArn"); arn != "" && t != arn {
			return "", errf(400, "InvalidLoadBalancerAction", "The target group ARN and the forward config name different target groups")
		} else {
			arn = t
		}
	}
	if arn == "" {
		return "", errf(400, "InvalidLoadBalancerAction", "A forward action must name a target group")
	}
	return arn, nil
}

func (s *Server) elbCreateListener(p params) (any, error) {
	e := s.elb()
	lbARN, err := p.required("LoadBalancerArn")
	if err != nil {
		return nil, err
	}
	lb := e.LoadBalancers[lbARN]
	if lb == nil {
		return nil, lbNotFound()
	}
	proto := p.get("Protocol")
	if proto == "" {
		proto = "TCP"
	}
	if proto != "TCP" {
		return nil, errf(400, "UnsupportedProtocol", "nuv emulator: listeners of network load balancers take the protocol TCP, not '%s'", proto)
	}
	port, err := elbPort(p, "Port")
	if err != nil {
		return nil, err
	}
	if port == 0 {
		return nil, elbValidation("A listener port must be specified")
	}
	tgARN, err := s.listenerTarget(p)
	if err != nil {
		return nil, err
	}
	tg, err := s.tg(tgARN)
	if err != nil {
		return nil, err
	}
	if tg.Protocol != proto {
		return nil, errf(400, "IncompatibleProtocols", "The listener protocol '%s' is not compatible with the target group protocol '%s'", proto, tg.Protocol)
	}
	if tg.VpcID != lb.VpcID {
		return nil, elbValidation("The target group '%s' is in VPC '%s', the load balancer in VPC '%s'", tg.Name, tg.VpcID, lb.VpcID)
	}
	if other := s.tgLoadBalancers(tgARN); len(other) > 0 && other[0] != lbARN {
		return nil, errf(400, "TargetGroupAssociationLimit", "The following target groups cannot be associated with more than one load balancer: %s", tgARN)
	}
	tags, err := elbTags(p)
	if err != nil {
		return nil, err
	}
	for _, l := range e.Listeners {
		if l.LoadBalancer == lbARN && l.Port == port {
			if l.Protocol == proto && l.TargetGroup == tgARN {
				return listenersAnswer(l), nil // idempotent
			}
			return nil, errf(400, "DuplicateListener", "A listener already exists on port %d of this load balancer", port)
		}
	}
	lbPath := lbARN[strings.Index(lbARN, ":loadbalancer/")+len(":loadbalancer/"):] // net/<name>/<id>
	l := &elbListener{ARN: fmt.Sprintf("arn:aws:%s:%s:%s:listener/%s/%s", elbService, s.St.Region, s.St.Account, lbPath, randFrom(hexDigits, 16)),
		LoadBalancer: lbARN, Port: port, Protocol: proto, TargetGroup: tgARN, Tags: tags}
	e.Listeners[l.ARN] = l
	s.touchTargetGroups(tgARN)
	lb.Gen++
	return listenersAnswer(l), nil
}

func listenersAnswer(ls ...*elbListener) any {
	out := make([]xmlListener, 0, len(ls))
	for _, l := range ls {
		out = append(out, listenerWire(l))
	}
	return &struct {
		Listeners []xmlListener `xml:"Listeners>member"`
	}{out}
}

func (s *Server) elbDescribeListeners(p params) (any, error) {
	e := s.elb()
	arns, lbARN := elbMembers(p, "ListenerArns"), p.get("LoadBalancerArn")
	if len(arns) > 0 && lbARN != "" {
		return nil, elbValidation("Listener ARNs and a load balancer ARN cannot be specified at the same time")
	}
	if len(arns) == 0 && lbARN == "" {
		return nil, elbValidation("You must specify either listener ARNs or a load balancer ARN")
	}
	var out []*elbListener
	if lbARN != "" {
		if e.LoadBalancers[lbARN] == nil {
			return nil, lbNotFound()
		}
		for _, k := range sortedKeys(e.Listeners) {
			if l := e.Listeners[k]; l.LoadBalancer == lbARN {
				out = append(out, l)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Port < out[j].Port })
	}
	for _, a := range arns {
		l := e.Listeners[a]
		if l == nil {
			return nil, listenerNotFound()
		}
		out = append(out, l)
	}
	return listenersAnswer(out...), nil
}

func (s *Server) elbDeleteListener(p params) (any, error) {
	e := s.elb()
	arn, err := p.required("ListenerArn")
	if err != nil {
		return nil, err
	}
	l := e.Listeners[arn]
	if l == nil {
		return nil, listenerNotFound()
	}
	delete(e.Listeners, arn)
	if lb := e.LoadBalancers[l.LoadBalancer]; lb != nil {
		lb.Gen++
	}
	s.touchTargetGroups(l.TargetGroup)
	return &struct{}{}, nil
}

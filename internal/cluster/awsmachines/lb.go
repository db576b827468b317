package awsmachines

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
)

// The Network Load Balancer in front of the API servers: the balancer, the control planes'
// target group and the listener, through Elastic Load Balancing v2.

func (x *exec) elbTags() []elbtypes.Tag {
	t := x.Tags()
	t[awsnet.TagResource] = x.Res.Key()
	t["Name"] = awsnet.NameTag(x.Name, *x.Res)
	var out []elbtypes.Tag
	for _, k := range slices.Sorted(maps.Keys(t)) {
		out = append(out, elbtypes.Tag{Key: aws.String(k), Value: aws.String(t[k])})
	}
	return out
}

// lbName is the balancer's or target group's name on AWS (32 characters at most).
func lbName(clusterName, name string) string {
	n := "nuv-" + name
	if !strings.Contains(name, clusterName) {
		n = "nuv-" + clusterName + "-" + name
	}
	if len(n) > 32 {
		n = n[:32]
	}
	return strings.TrimRight(n, "-")
}

func (x *exec) loadBalancer(ctx context.Context, _ cluster.Change) error {
	f := x.Res.Fields
	if x.Res.ID == "" {
		var subnets []string
		for _, sn := range kit.ParseList(f["subnets"]) {
			id, err := x.ID(awsnet.Key(awsnet.KindSubnet, sn))
			if err != nil {
				return err
			}
			subnets = append(subnets, id)
		}
		scheme := elbtypes.LoadBalancerSchemeEnumInternetFacing
		if f["scheme"] == "internal" {
			scheme = elbtypes.LoadBalancerSchemeEnumInternal
		}
		out, err := x.s.elb.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{Name: aws.String(lbName(x.Name, x.RName)), Type: elbtypes.LoadBalancerTypeEnumNetwork,
			Scheme: scheme, Subnets: subnets, Tags: x.elbTags()})
		if err != nil {
			return x.Fail("elasticloadbalancing:CreateLoadBalancer", x.Res.Key(), err)
		}
		if len(out.LoadBalancers) == 0 {
			return fmt.Errorf("elasticloadbalancing:CreateLoadBalancer on %s returned no load balancer", x.Res.Key())
		}
		if err := x.Made(aws.ToString(out.LoadBalancers[0].LoadBalancerArn)); err != nil {
			return err
		}
	}
	_, err := x.p.waitLB(ctx, x.s, x.Res.Key(), x.Res.ID)
	return err
}

// waitLB waits until the balancer is active and returns it.
func (p *Provider) waitLB(ctx context.Context, s *session, what, arn string) (*elbtypes.LoadBalancer, error) {
	g := p.progress(what)
	delay := s.Poll
	if delay == 0 {
		delay = 5 * time.Second
	}
	deadline := time.Now().Add(15 * time.Minute)
	for {
		out, err := s.elb.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{LoadBalancerArns: []string{arn}})
		if err != nil {
			return nil, fmt.Errorf("wait for %s: elasticloadbalancing:DescribeLoadBalancers: %s", what, awsnet.APIMessage(err))
		}
		if len(out.LoadBalancers) == 1 && out.LoadBalancers[0].State != nil {
			lb := out.LoadBalancers[0]
			st := lb.State.Code
			g.Status(string(st))
			switch st {
			case elbtypes.LoadBalancerStateEnumActive:
				return &lb, nil
			case elbtypes.LoadBalancerStateEnumFailed:
				return nil, fmt.Errorf("%s failed: %s", what, aws.ToString(lb.State.Reason))
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("wait for %s: not active after %s", what, g.Elapsed().Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

func (x *exec) deleteLoadBalancer(ctx context.Context, ch cluster.Change) error {
	_, err := x.s.elb.DeleteLoadBalancer(ctx, &elb.DeleteLoadBalancerInput{LoadBalancerArn: aws.String(awsnet.ActualID(ch))})
	if !awsnet.NotFound(err) {
		return x.Fail("elasticloadbalancing:DeleteLoadBalancer", ch.Key, err)
	}
	// The balancer's network interfaces hold its subnets a little while after it is gone.
	for deadline := time.Now().Add(5 * time.Minute); ; {
		out, err := x.s.elb.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{LoadBalancerArns: []string{awsnet.ActualID(ch)}})
		if awsnet.NotFound(err) || (err == nil && len(out.LoadBalancers) == 0) {
			return nil
		}
		if err != nil {
			return x.Fail("elasticloadbalancing:DescribeLoadBalancers", ch.Key, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is still there 5 minutes after its delete", ch.Key)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(max(x.s.Poll, time.Second)):
		}
	}
}

// targetGroup makes the API's target group and registers exactly the control planes that run.
func (x *exec) targetGroup(ctx context.Context, _ cluster.Change) error {
	f := x.Res.Fields
	port, _ := strconv.Atoi(f["port"])
	if x.Res.ID == "" {
		vpc, err := x.ID(f["vpc"])
		if err != nil {
			return err
		}
		out, err := x.s.elb.CreateTargetGroup(ctx, &elb.CreateTargetGroupInput{Name: aws.String(lbName(x.Name, x.RName)), Protocol: elbtypes.ProtocolEnum(f["protocol"]),
			Port: aws.Int32(int32(port)), VpcId: aws.String(vpc), TargetType: elbtypes.TargetTypeEnumInstance,
			HealthCheckProtocol: elbtypes.ProtocolEnumTcp, HealthCheckIntervalSeconds: aws.Int32(10), HealthyThresholdCount: aws.Int32(2), UnhealthyThresholdCount: aws.Int32(2),
			Tags: x.elbTags()})
		if err != nil {
			return x.Fail("elasticloadbalancing:CreateTargetGroup", x.Res.Key(), err)
		}
		if err := x.Made(aws.ToString(out.TargetGroups[0].TargetGroupArn)); err != nil {
			return err
		}
	}
	want := map[string]bool{}
	for _, t := range kit.ParseList(f["targets"]) {
		// A target registers once its machine runs (a machine launched is waited for).
		if err := x.running(ctx, awsnet.Key(kindInstance, t)); err != nil {
			return err
		}
		id, err := x.ID(awsnet.Key(kindInstance, t))
		if err != nil {
			return err
		}
		want[id] = true
	}
	cur, err := x.s.elb.DescribeTargetHealth(ctx, &elb.DescribeTargetHealthInput{TargetGroupArn: aws.String(x.Res.ID)})
	if err != nil {
		return x.Fail("elasticloadbalancing:DescribeTargetHealth", x.Res.Key(), err)
	}
	var gone []elbtypes.TargetDescription
	for _, d := range cur.TargetHealthDescriptions {
		id := aws.ToString(d.Target.Id)
		if want[id] {
			delete(want, id)
			continue
		}
		gone = append(gone, elbtypes.TargetDescription{Id: d.Target.Id, Port: d.Target.Port})
	}
	if len(gone) > 0 {
		if _, err := x.s.elb.DeregisterTargets(ctx, &elb.DeregisterTargetsInput{TargetGroupArn: aws.String(x.Res.ID), Targets: gone}); err != nil && !awsnet.NotFound(err) {
			return x.Fail("elasticloadbalancing:DeregisterTargets", x.Res.Key(), err)
		}
	}
	if len(want) > 0 {
		var add []elbtypes.TargetDescription
		for _, id := range slices.Sorted(maps.Keys(want)) {
			add = append(add, elbtypes.TargetDescription{Id: aws.String(id), Port: aws.Int32(int32(port))})
		}
		if _, err := x.s.elb.RegisterTargets(ctx, &elb.RegisterTargetsInput{TargetGroupArn: aws.String(x.Res.ID), Targets: add}); err != nil {
			return x.Fail("elasticloadbalancing:RegisterTargets", x.Res.Key(), err)
		}
	}
	return nil
}

func (x *exec) deleteTargetGroup(ctx context.Context, ch cluster.Change) error {
	return x.EC2Retry(ctx, ch, "elasticloadbalancing:DeleteTargetGroup", func() error {
		_, err := x.s.elb.DeleteTargetGroup(ctx, &elb.DeleteTargetGroupInput{TargetGroupArn: aws.String(awsnet.ActualID(ch))})
		return err
	})
}

func (x *exec) listener(ctx context.Context, _ cluster.Change) error {
	if x.Res.ID != "" {
		return nil
	}
	f := x.Res.Fields
	lb, err := x.ID(f["loadBalancer"])
	if err != nil {
		return err
	}
	tg, err := x.ID(f["targetGroup"])
	if err != nil {
		return err
	}
	port, _ := strconv.Atoi(f["port"])
	out, err := x.s.elb.CreateListener(ctx, &elb.CreateListenerInput{LoadBalancerArn: aws.String(lb), Protocol: elbtypes.ProtocolEnum(f["protocol"]), Port: aws.Int32(int32(port)),
		DefaultActions: []elbtypes.Action{{Type: elbtypes.ActionTypeEnumForward, TargetGroupArn: aws.String(tg)}}, Tags: x.elbTags()})
	if err != nil {
		return x.Fail("elasticloadbalancing:CreateListener", x.Res.Key(), err)
	}
	return x.Made(aws.ToString(out.Listeners[0].ListenerArn))
}

func (x *exec) deleteListener(ctx context.Context, ch cluster.Change) error {
	_, err := x.s.elb.DeleteListener(ctx, &elb.DeleteListenerInput{ListenerArn: aws.String(awsnet.ActualID(ch))})
	if !awsnet.NotFound(err) {
		return x.Fail("elasticloadbalancing:DeleteListener", ch.Key, err)
	}
	return nil
}

// nlbEndpoint is the API's address through the Network Load Balancer: its DNS name where this
// machine resolves it (AWS), else its address in the first subnet (an emulated one, whose name no
// DNS serves); the certificate carries both.
func (x *exec) nlbEndpoint(ctx context.Context) (string, []string, error) {
	arn, err := x.ID(awsnet.Key(kindLoadBalancer, x.Name))
	if err != nil {
		return "", nil, err
	}
	lb, err := x.p.waitLB(ctx, x.s, awsnet.Key(kindLoadBalancer, x.Name), arn)
	if err != nil {
		return "", nil, err
	}
	dns := aws.ToString(lb.DNSName)
	var addrs []string
	for _, z := range lb.AvailabilityZones {
		for _, a := range z.LoadBalancerAddresses {
			for _, ip := range []string{aws.ToString(a.IpAddress), aws.ToString(a.PrivateIPv4Address)} {
				if ip != "" && !slices.Contains(addrs, ip) {
					addrs = append(addrs, ip)
				}
			}
		}
	}
	sans := append([]string{dns}, addrs...)
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := net.DefaultResolver.LookupHost(rctx, dns); err == nil || len(addrs) == 0 {
		return net.JoinHostPort(dns, "6443"), sans, nil
	}
	return net.JoinHostPort(addrs[0], "6443"), sans, nil
}

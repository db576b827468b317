package awsmachines

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// observeMachines finds what exists of a self-managed cluster: the network and security groups,
// the key pair and the instances by the cluster's tag, the load balancer, its target group and
// listener by name, and the bootstrap's steps from the state record, each still done while the
// machine it ran on runs (a replaced machine's steps run again).
func (p *Provider) observeMachines(ctx context.Context, c *spec.Cluster, recorded []cluster.Resource) ([]cluster.Resource, error) {
	s, err := p.session(ctx, c, sectionOf(c))
	if err != nil {
		return nil, err
	}
	name := c.Metadata.Name
	o, rec := awsnet.NewObservation(name, recorded)
	o.Rules = observedRules
	if err := s.ObserveNetwork(ctx, o, rec); err != nil {
		return nil, err
	}
	kps, err := s.EC2.DescribeKeyPairs(ctx, &ec2.DescribeKeyPairsInput{Filters: awsnet.TagFilter(name)})
	if err != nil {
		return nil, fmt.Errorf("ec2:DescribeKeyPairs: %s", awsnet.APIMessage(err))
	}
	for _, kp := range kps.KeyPairs {
		k, n := o.ResourceKey(awsnet.TagsOf(kp.Tags), kindKeyPair, aws.ToString(kp.KeyPairId))
		o.Add(cluster.Resource{Kind: k, Name: n, ID: aws.ToString(kp.KeyPairId), Fields: map[string]string{"algorithm": string(kp.KeyType)}})
	}
	infos, running, err := s.observeInstances(ctx, o)
	if err != nil {
		return nil, err
	}
	for _, r := range recorded {
		// A machine terminated by a roll that stopped before its replacement was launched, or
		// lost behind nuv's back: its replacement is launched at its address.
		if _, there := infos[r.Key()]; r.Kind == kindInstance && !there {
			if a := awsnet.OrDefault(r.Fields[fieldAddress], r.Fields[fieldPrivateIP]); a != "" {
				p.remember(name, addressKey(r.Key()), a)
			}
		}
	}
	if err := s.observeLB(ctx, o, c); err != nil {
		return nil, err
	}
	joined := observeBootstrap(o, infos, running, recorded)
	initDone := slices.ContainsFunc(o.Out, func(r cluster.Resource) bool { return r.Kind == kindKubeadmInit })
	if err := s.observePodNet(ctx, o, infos, recorded, joined); err != nil {
		return nil, err
	}
	if _, err := os.Stat(p.KubeconfigPath(name)); err == nil && initDone {
		o.Add(cluster.Resource{Kind: kindKubeconfig, Name: name, ID: p.KubeconfigPath(name), Fields: map[string]string{"path": "clusters/" + name + ".kubeconfig"},
			DependsOn: []string{awsnet.Key(kindKubeadmInit, "control-plane-0")}})
	}
	if err := s.Sweep(ctx, o); err != nil {
		return nil, err
	}
	o.Remember(&p.ids)
	return o.Out, nil
}

// observeInstances finds the cluster's instances by its tag (with their images' names) and
// returns them by instance key, and the IDs of those that run (or are pending) by instance key;
// one in another state is broken: it is replaced.
func (s *session) observeInstances(ctx context.Context, o *awsnet.Observation) (map[string]machineInfo, map[string]string, error) {
	infos, err := s.clusterInstances(ctx, o.Name)
	if err != nil {
		return nil, nil, err
	}
	images := map[string]string{}
	var ids []string
	for _, in := range infos {
		if id := aws.ToString(in.inst.ImageId); id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		out, err := s.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: ids})
		if err != nil && !strings.Contains(awsnet.APICode(err), "NotFound") {
			return nil, nil, fmt.Errorf("ec2:DescribeImages: %s", awsnet.APIMessage(err))
		}
		if out != nil {
			for _, im := range out.Images {
				images[aws.ToString(im.ImageId)] = aws.ToString(im.Name)
			}
		}
	}
	running := map[string]string{} // instance key -> id, of machines that run
	for _, k := range slices.Sorted(maps.Keys(infos)) {
		in := infos[k]
		var sgs []string
		for _, g := range in.inst.SecurityGroups {
			sgs = append(sgs, o.Ref(aws.ToString(g.GroupId)))
		}
		slices.Sort(sgs)
		img := images[aws.ToString(in.inst.ImageId)]
		if img == "" {
			img = aws.ToString(in.inst.ImageId)
		}
		subnet, kp := o.Ref(aws.ToString(in.inst.SubnetId)), awsnet.Key(kindKeyPair, aws.ToString(in.inst.KeyName))
		r := cluster.Resource{Kind: kindInstance, Name: strings.TrimPrefix(k, kindInstance+"/"), ID: in.id, Fields: map[string]string{
			"role": in.role, "instanceType": string(in.inst.InstanceType), "subnet": subnet, "image": img,
			"keyPair": kp, "securityGroups": strings.Join(sgs, ","), fieldPrivateIP: in.ip,
		}, DependsOn: append([]string{subnet, kp}, sgs...)}
		switch in.state {
		case string(ec2types.InstanceStateNameRunning), string(ec2types.InstanceStateNamePending):
			running[k] = in.id
		default:
			r.Broken = "it is " + in.state + ", not running: it is replaced"
		}
		o.Add(r)
	}
	return infos, running, nil
}

// observeBootstrap adds the bootstrap's steps from the record, each still done while the machine
// it ran on runs (kubeadm init and the pod network while a control plane runs), and returns the
// instance keys whose join holds.
func observeBootstrap(o *awsnet.Observation, infos map[string]machineInfo, running map[string]string, recorded []cluster.Resource) map[string]bool {
	cpRuns := false
	for k, id := range running {
		if infos[k].role == RoleControlPlane && id != "" {
			cpRuns = true
		}
	}
	initDone := false
	for _, r := range recorded {
		if r.Kind == kindKubeadmInit && r.ID != "" && cpRuns {
			initDone = true
		}
	}
	joined := map[string]bool{} // instance keys whose join holds
	for _, r := range recorded {
		keep := false
		switch r.Kind {
		case kindHAProxy:
			keep = r.ID != "" && running[awsnet.Key(kindInstance, r.Name)] == r.ID
		case kindEtcdMember, kindKubeadmJoin:
			keep = r.ID != "" && running[r.Fields["instance"]] == r.ID
		case kindKubeadmInit:
			keep = initDone
		case kindCNI:
			keep = initDone && r.ID != ""
		}
		if keep {
			o.Add(cluster.Resource{Kind: r.Kind, Name: r.Name, ID: r.ID, Fields: r.Fields, DependsOn: r.DependsOn})
			if r.Kind == kindKubeadmJoin {
				joined[r.Fields["instance"]] = true
			}
		}
	}
	return joined
}

// observeLB finds the API's Network Load Balancer, target group and listener by their names
// (marked Foreign when they lack the cluster's tag).
func (s *session) observeLB(ctx context.Context, o *awsnet.Observation, c *spec.Cluster) error {
	name := c.Metadata.Name
	lbs, err := s.elb.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{Names: []string{lbName(name, name)}})
	if err != nil && !awsnet.NotFound(err) {
		return fmt.Errorf("elasticloadbalancing:DescribeLoadBalancers: %s", awsnet.APIMessage(err))
	}
	ours := func(arn string) (bool, error) {
		out, err := s.elb.DescribeTags(ctx, &elb.DescribeTagsInput{ResourceArns: []string{arn}})
		if err != nil {
			return false, fmt.Errorf("elasticloadbalancing:DescribeTags: %s", awsnet.APIMessage(err))
		}
		for _, d := range out.TagDescriptions {
			for _, t := range d.Tags {
				if aws.ToString(t.Key) == awsnet.TagCluster && aws.ToString(t.Value) == name {
					return true, nil
				}
			}
		}
		return false, nil
	}
	var lbArn string
	if lbs != nil {
		for _, lb := range lbs.LoadBalancers {
			arn := aws.ToString(lb.LoadBalancerArn)
			mine, err := ours(arn)
			if err != nil {
				return err
			}
			if !mine {
				o.Out = append(o.Out, cluster.Resource{Kind: kindLoadBalancer, Name: name, ID: arn, Foreign: true})
				continue
			}
			var subs []string
			for _, z := range lb.AvailabilityZones {
				_, sn, _ := strings.Cut(o.Ref(aws.ToString(z.SubnetId)), "/")
				subs = append(subs, sn)
			}
			slices.Sort(subs)
			var deps []string
			for _, sn := range subs {
				deps = append(deps, awsnet.Key(awsnet.KindSubnet, sn))
			}
			o.Add(cluster.Resource{Kind: kindLoadBalancer, Name: name, ID: arn, Fields: map[string]string{"type": string(lb.Type), "scheme": string(lb.Scheme),
				"subnets": strings.Join(subs, ",")}, DependsOn: deps})
			lbArn = arn
		}
	}
	tgName := name + "-api"
	tgs, err := s.elb.DescribeTargetGroups(ctx, &elb.DescribeTargetGroupsInput{Names: []string{lbName(name, tgName)}})
	if err != nil && !awsnet.NotFound(err) {
		return fmt.Errorf("elasticloadbalancing:DescribeTargetGroups: %s", awsnet.APIMessage(err))
	}
	if tgs != nil {
		for _, tg := range tgs.TargetGroups {
			arn := aws.ToString(tg.TargetGroupArn)
			mine, err := ours(arn)
			if err != nil {
				return err
			}
			if !mine {
				o.Out = append(o.Out, cluster.Resource{Kind: kindTargetGroup, Name: tgName, ID: arn, Foreign: true})
				continue
			}
			th, err := s.elb.DescribeTargetHealth(ctx, &elb.DescribeTargetHealthInput{TargetGroupArn: aws.String(arn)})
			if err != nil {
				return fmt.Errorf("elasticloadbalancing:DescribeTargetHealth: %s", awsnet.APIMessage(err))
			}
			var targets []string
			deps := []string{o.Ref(aws.ToString(tg.VpcId))}
			for _, d := range th.TargetHealthDescriptions {
				tk := o.Ref(aws.ToString(d.Target.Id))
				_, n, _ := strings.Cut(tk, "/")
				targets = append(targets, n)
				deps = append(deps, tk)
			}
			slices.Sort(targets)
			o.Add(cluster.Resource{Kind: kindTargetGroup, Name: tgName, ID: arn, Fields: map[string]string{"protocol": string(tg.Protocol),
				"port": strconv.Itoa(int(aws.ToInt32(tg.Port))), "vpc": o.Ref(aws.ToString(tg.VpcId)), "targets": strings.Join(targets, ",")}, DependsOn: deps})
		}
	}
	if lbArn != "" {
		ls, err := s.elb.DescribeListeners(ctx, &elb.DescribeListenersInput{LoadBalancerArn: aws.String(lbArn)})
		if err != nil && !awsnet.NotFound(err) {
			return fmt.Errorf("elasticloadbalancing:DescribeListeners: %s", awsnet.APIMessage(err))
		}
		if ls != nil {
			for _, l := range ls.Listeners {
				tg := ""
				for _, a := range l.DefaultActions {
					tg = o.Ref(aws.ToString(a.TargetGroupArn))
				}
				o.Add(cluster.Resource{Kind: kindListener, Name: "api", ID: aws.ToString(l.ListenerArn), Fields: map[string]string{"protocol": string(l.Protocol),
					"port": strconv.Itoa(int(aws.ToInt32(l.Port))), "loadBalancer": awsnet.Key(kindLoadBalancer, name), "targetGroup": tg},
					DependsOn: []string{awsnet.Key(kindLoadBalancer, name), tg}})
			}
		}
	}
	return nil
}

// observedRules lists a group's ingress as the plan writes it: one rule per port range and
// source, sorted, groups by their keys.
func observedRules(o *awsnet.Observation, perms []ec2types.IpPermission) string {
	var rs []string
	for _, p := range splitPerms(perms) {
		src := ""
		if len(p.IpRanges) > 0 {
			src = aws.ToString(p.IpRanges[0].CidrIp)
		} else if len(p.UserIdGroupPairs) > 0 {
			src = o.Ref(aws.ToString(p.UserIdGroupPairs[0].GroupId))
		}
		proto := aws.ToString(p.IpProtocol)
		if proto == "-1" {
			rs = append(rs, "all:"+src)
			continue
		}
		from, to := aws.ToInt32(p.FromPort), aws.ToInt32(p.ToPort)
		ports := strconv.Itoa(int(from))
		if to != from {
			ports += "-" + strconv.Itoa(int(to))
		}
		rs = append(rs, proto+":"+ports+":"+src)
	}
	slices.Sort(rs)
	return strings.Join(rs, ",")
}

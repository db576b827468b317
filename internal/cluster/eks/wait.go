package eks

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
)

// The waits, each an SDK waiter whose polls report the resource's status and the elapsed time.

func (s *session) delays(minDelay, maxDelay *time.Duration) {
	if s.poll > 0 {
		*minDelay, *maxDelay = s.poll, 2*s.poll
	}
}

// reporting wraps an SDK waiter's Retryable so each poll reports the status read from its output
// (status returns "" when the output names no resource).
func reporting[I, O any](prev func(context.Context, *I, *O, error) (bool, error), g *progress, status func(*O) string) func(context.Context, *I, *O, error) (bool, error) {
	return func(ctx context.Context, in *I, out *O, err error) (bool, error) {
		if out != nil {
			if st := status(out); st != "" {
				g.status(st)
			}
		}
		return prev(ctx, in, out, err)
	}
}

// The status each wait reports.
func clusterStatus(o *eks.DescribeClusterOutput) string {
	if o.Cluster == nil {
		return ""
	}
	return string(o.Cluster.Status)
}

func nodegroupStatus(o *eks.DescribeNodegroupOutput) string {
	if o.Nodegroup == nil {
		return ""
	}
	return string(o.Nodegroup.Status)
}

func addonStatus(o *eks.DescribeAddonOutput) string {
	if o.Addon == nil {
		return ""
	}
	return string(o.Addon.Status)
}

func natStatus(o *ec2.DescribeNatGatewaysOutput) string {
	if len(o.NatGateways) == 0 {
		return ""
	}
	return string(o.NatGateways[0].State)
}

func vpcStatus(o *ec2.DescribeVpcsOutput) string {
	if len(o.Vpcs) == 0 {
		return ""
	}
	return string(o.Vpcs[0].State)
}

func subnetStatus(o *ec2.DescribeSubnetsOutput) string {
	if len(o.Subnets) == 0 {
		return ""
	}
	return string(o.Subnets[0].State)
}

func waitErr(what string, g *progress, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("wait for %s (%s, last status %s): %w", what, g.Elapsed().Round(time.Second), g.Last(), err)
}

func (p *Provider) waitCluster(ctx context.Context, s *session, name string, active bool) (*eks.DescribeClusterOutput, error) {
	in := &eks.DescribeClusterInput{Name: aws.String(name)}
	what := "eks-cluster/" + name
	g := p.progress(what)
	if !active {
		err := eks.NewClusterDeletedWaiter(s.eks, func(o *eks.ClusterDeletedWaiterOptions) {
			s.delays(&o.MinDelay, &o.MaxDelay)
			o.Retryable = reporting(o.Retryable, g, clusterStatus)
		}).Wait(ctx, in, 40*time.Minute)
		return nil, waitErr(what+" to be deleted", g, err)
	}
	out, err := eks.NewClusterActiveWaiter(s.eks, func(o *eks.ClusterActiveWaiterOptions) {
		s.delays(&o.MinDelay, &o.MaxDelay)
		o.Retryable = reporting(o.Retryable, g, clusterStatus)
	}).WaitForOutput(ctx, in, 40*time.Minute)
	return out, waitErr(what+" to be ACTIVE", g, err)
}

func (p *Provider) waitNodegroup(ctx context.Context, s *session, cl, ng string, active bool) error {
	in := &eks.DescribeNodegroupInput{ClusterName: aws.String(cl), NodegroupName: aws.String(ng)}
	what := "node-group/" + ng
	g := p.progress(what)
	if !active {
		err := eks.NewNodegroupDeletedWaiter(s.eks, func(o *eks.NodegroupDeletedWaiterOptions) {
			s.delays(&o.MinDelay, &o.MaxDelay)
			o.Retryable = reporting(o.Retryable, g, nodegroupStatus)
		}).Wait(ctx, in, 40*time.Minute)
		return waitErr(what+" to be deleted", g, err)
	}
	err := eks.NewNodegroupActiveWaiter(s.eks, func(o *eks.NodegroupActiveWaiterOptions) {
		s.delays(&o.MinDelay, &o.MaxDelay)
		o.Retryable = reporting(o.Retryable, g, nodegroupStatus)
	}).Wait(ctx, in, 40*time.Minute)
	return waitErr(what+" to be ACTIVE", g, err)
}

func (p *Provider) waitAddon(ctx context.Context, s *session, cl, addon string, active bool) error {
	in := &eks.DescribeAddonInput{ClusterName: aws.String(cl), AddonName: aws.String(addon)}
	what := "addon/" + addon
	g := p.progress(what)
	if !active {
		err := eks.NewAddonDeletedWaiter(s.eks, func(o *eks.AddonDeletedWaiterOptions) {
			s.delays(&o.MinDelay, &o.MaxDelay)
			o.Retryable = reporting(o.Retryable, g, addonStatus)
		}).Wait(ctx, in, 20*time.Minute)
		return waitErr(what+" to be deleted", g, err)
	}
	err := eks.NewAddonActiveWaiter(s.eks, func(o *eks.AddonActiveWaiterOptions) {
		s.delays(&o.MinDelay, &o.MaxDelay)
		o.Retryable = reporting(o.Retryable, g, addonStatus)
	}).Wait(ctx, in, 20*time.Minute)
	return waitErr(what+" to be ACTIVE", g, err)
}

// waitUpdate waits for an EKS update (version, config, node group, add-on) to be Successful with
// DescribeUpdate's waiter (the SDK names it after certificate authority updates; it reads the
// status of any update).
func (p *Provider) waitUpdate(ctx context.Context, s *session, what, cl, id, ng, addon string) error {
	in := &eks.DescribeUpdateInput{Name: aws.String(cl), UpdateId: aws.String(id)}
	if ng != "" {
		in.NodegroupName = aws.String(ng)
	}
	if addon != "" {
		in.AddonName = aws.String(addon)
	}
	g := p.progress(what)
	err := eks.NewCertificateAuthorityUpdateCompleteWaiter(s.eks, func(o *eks.CertificateAuthorityUpdateCompleteWaiterOptions) {
		s.delays(&o.MinDelay, &o.MaxDelay)
		prev := o.Retryable
		o.Retryable = func(ctx context.Context, in *eks.DescribeUpdateInput, out *eks.DescribeUpdateOutput, err error) (bool, error) {
			if out != nil && out.Update != nil {
				g.status(string(out.Update.Status))
				if out.Update.Status == "Failed" && len(out.Update.Errors) > 0 {
					return false, fmt.Errorf("update %s failed: %s", id, aws.ToString(out.Update.Errors[0].ErrorMessage))
				}
			}
			return prev(ctx, in, out, err)
		}
	}).Wait(ctx, in, 60*time.Minute)
	return waitErr(what, g, err)
}

func (p *Provider) waitNAT(ctx context.Context, s *session, id string, available bool) error {
	in := &ec2.DescribeNatGatewaysInput{NatGatewayIds: []string{id}}
	what := "nat-gateway " + id
	g := p.progress(what)
	if !available {
		err := ec2.NewNatGatewayDeletedWaiter(s.ec2, func(o *ec2.NatGatewayDeletedWaiterOptions) {
			s.delays(&o.MinDelay, &o.MaxDelay)
			o.Retryable = reporting(o.Retryable, g, natStatus)
		}).Wait(ctx, in, 20*time.Minute)
		return waitErr(what+" to be deleted", g, err)
	}
	err := ec2.NewNatGatewayAvailableWaiter(s.ec2, func(o *ec2.NatGatewayAvailableWaiterOptions) {
		s.delays(&o.MinDelay, &o.MaxDelay)
		o.Retryable = reporting(o.Retryable, g, natStatus)
	}).Wait(ctx, in, 20*time.Minute)
	return waitErr(what+" to be available", g, err)
}

func (p *Provider) waitVPC(ctx context.Context, s *session, id string) error {
	g := p.progress("vpc " + id)
	err := ec2.NewVpcAvailableWaiter(s.ec2, func(o *ec2.VpcAvailableWaiterOptions) {
		s.delays(&o.MinDelay, &o.MaxDelay)
		o.Retryable = reporting(o.Retryable, g, vpcStatus)
	}).Wait(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{id}}, 10*time.Minute)
	return waitErr("vpc "+id+" to be available", g, err)
}

func (p *Provider) waitSubnet(ctx context.Context, s *session, id string) error {
	g := p.progress("subnet " + id)
	err := ec2.NewSubnetAvailableWaiter(s.ec2, func(o *ec2.SubnetAvailableWaiterOptions) {
		s.delays(&o.MinDelay, &o.MaxDelay)
		o.Retryable = reporting(o.Retryable, g, subnetStatus)
	}).Wait(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{id}}, 10*time.Minute)
	return waitErr("subnet "+id+" to be available", g, err)
}

// retryWhile repeats f while it fails with one of codes (AWS's eventual consistency: a role just
// made that EKS cannot assume yet, a subnet whose network interfaces are still going), for at most
// limit; the last error is returned.
func (p *Provider) retryWhile(ctx context.Context, s *session, limit time.Duration, f func() error, retryable func(error) bool) error {
	deadline := time.Now().Add(limit)
	delay := s.poll
	if delay == 0 {
		delay = 5 * time.Second
	}
	for {
		err := f()
		if err == nil || !retryable(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

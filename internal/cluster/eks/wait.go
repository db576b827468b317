package eks

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
)

// The waits, each an SDK waiter whose polls report the resource's status and the elapsed time.

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

func (p *Provider) waitCluster(ctx context.Context, s *session, name string, active bool) (*eks.DescribeClusterOutput, error) {
	in := &eks.DescribeClusterInput{Name: aws.String(name)}
	what := "eks-cluster/" + name
	g := p.progress(what)
	if !active {
		err := eks.NewClusterDeletedWaiter(s.eks, func(o *eks.ClusterDeletedWaiterOptions) {
			s.Delays(&o.MinDelay, &o.MaxDelay)
			o.Retryable = awsnet.Reporting(o.Retryable, g, clusterStatus)
		}).Wait(ctx, in, 40*time.Minute)
		return nil, awsnet.WaitErr(what+" to be deleted", g, err)
	}
	out, err := eks.NewClusterActiveWaiter(s.eks, func(o *eks.ClusterActiveWaiterOptions) {
		s.Delays(&o.MinDelay, &o.MaxDelay)
		o.Retryable = awsnet.Reporting(o.Retryable, g, clusterStatus)
	}).WaitForOutput(ctx, in, 40*time.Minute)
	return out, awsnet.WaitErr(what+" to be ACTIVE", g, err)
}

func (p *Provider) waitNodegroup(ctx context.Context, s *session, cl, ng string, active bool) error {
	in := &eks.DescribeNodegroupInput{ClusterName: aws.String(cl), NodegroupName: aws.String(ng)}
	what := "node-group/" + ng
	g := p.progress(what)
	if !active {
		err := eks.NewNodegroupDeletedWaiter(s.eks, func(o *eks.NodegroupDeletedWaiterOptions) {
			s.Delays(&o.MinDelay, &o.MaxDelay)
			o.Retryable = awsnet.Reporting(o.Retryable, g, nodegroupStatus)
		}).Wait(ctx, in, 40*time.Minute)
		return awsnet.WaitErr(what+" to be deleted", g, err)
	}
	err := eks.NewNodegroupActiveWaiter(s.eks, func(o *eks.NodegroupActiveWaiterOptions) {
		s.Delays(&o.MinDelay, &o.MaxDelay)
		o.Retryable = awsnet.Reporting(o.Retryable, g, nodegroupStatus)
	}).Wait(ctx, in, 40*time.Minute)
	return awsnet.WaitErr(what+" to be ACTIVE", g, err)
}

func (p *Provider) waitAddon(ctx context.Context, s *session, cl, addon string, active bool) error {
	in := &eks.DescribeAddonInput{ClusterName: aws.String(cl), AddonName: aws.String(addon)}
	what := "addon/" + addon
	g := p.progress(what)
	if !active {
		err := eks.NewAddonDeletedWaiter(s.eks, func(o *eks.AddonDeletedWaiterOptions) {
			s.Delays(&o.MinDelay, &o.MaxDelay)
			o.Retryable = awsnet.Reporting(o.Retryable, g, addonStatus)
		}).Wait(ctx, in, 20*time.Minute)
		return awsnet.WaitErr(what+" to be deleted", g, err)
	}
	err := eks.NewAddonActiveWaiter(s.eks, func(o *eks.AddonActiveWaiterOptions) {
		s.Delays(&o.MinDelay, &o.MaxDelay)
		o.Retryable = awsnet.Reporting(o.Retryable, g, addonStatus)
	}).Wait(ctx, in, 20*time.Minute)
	return awsnet.WaitErr(what+" to be ACTIVE", g, err)
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
		s.Delays(&o.MinDelay, &o.MaxDelay)
		prev := o.Retryable
		o.Retryable = func(ctx context.Context, in *eks.DescribeUpdateInput, out *eks.DescribeUpdateOutput, err error) (bool, error) {
			if out != nil && out.Update != nil {
				g.Status(string(out.Update.Status))
				if out.Update.Status == "Failed" && len(out.Update.Errors) > 0 {
					return false, fmt.Errorf("update %s failed: %s", id, aws.ToString(out.Update.Errors[0].ErrorMessage))
				}
			}
			return prev(ctx, in, out, err)
		}
	}).Wait(ctx, in, 60*time.Minute)
	return awsnet.WaitErr(what, g, err)
}

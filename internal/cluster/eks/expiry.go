package eks

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

var _ cluster.Expirer = (*Provider)(nil)

// Tagged lists the EKS clusters tagged nuv.dev/cluster=<their name> in the environment's account
// and region, with the marks their tags carry (nuv.dev/expires-at, nuv.dev/owner). Every
// cluster's VPC is the first thing an apply makes and the last a delete removes, so a cluster is
// found by its VPC too: one whose apply died before its EKS cluster was made is found all the
// same. The VPCs of the self-managed provider's clusters are told apart by what else carries the
// cluster's tag (awsnet.SelfManagedClusters; an apply that died before either left a VPC alone,
// which this provider reports: either provider's delete removes it). A VPC whose EKS cluster
// exists is that cluster's: the EKS cluster's own tags decide, so one whose nuv tag was taken off
// is left alone.
func (p *Provider) Tagged(ctx context.Context) ([]cluster.Tagged, error) {
	return awsnet.InEnvironment(ctx, p.getenv, p.envSession, p.tagged)
}

func (p *Provider) tagged(ctx context.Context, s *session) ([]cluster.Tagged, error) {
	var out []cluster.Tagged
	found := map[string]bool{}
	pg := eks.NewListClustersPaginator(s.eks, &eks.ListClustersInput{})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("eks:ListClusters: %s", awsnet.APIMessage(err))
		}
		for _, n := range page.Clusters {
			// an EKS cluster's own tags decide, never its VPC's: one without nuv's tag
			// (a foreign one, or one whose tag was taken off) is not listed
			found[n] = true
			d, err := s.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(n)})
			if awsnet.APICode(err) == "ResourceNotFoundException" {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("eks:DescribeCluster %s: %s", n, awsnet.APIMessage(err))
			}
			if d.Cluster.Tags[awsnet.TagCluster] != n {
				continue
			}
			m, err := kit.MarksOf(d.Cluster.Tags)
			out = append(out, cluster.Tagged{Name: n, Marks: m, Where: s.Config.Region, Err: err})
		}
	}
	vpcs, err := s.TaggedVPCs(ctx, found, false)
	if err != nil {
		return nil, err
	}
	return append(out, vpcs...), nil
}

// Mark writes c.Marks (nuv.dev/expires-at, nuv.dev/owner) on the cluster's EKS cluster, its node
// groups and every EC2 resource tagged nuv.dev/cluster=<name> (the VPC, subnets, gateways, route
// tables, security groups, addresses); a mark c lacks is removed. Its IAM roles keep the marks
// they were made with.
func (p *Provider) Mark(ctx context.Context, c *spec.Cluster) error {
	name := c.Metadata.Name
	s, err := p.session(ctx, c, sectionOf(c))
	if err != nil {
		return err
	}
	want, gone := awsnet.MarkChanges(c)
	var arns []string
	if d, err := s.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)}); err == nil && d.Cluster.Tags[awsnet.TagCluster] == name {
		arns = append(arns, aws.ToString(d.Cluster.Arn))
		ngs, err := s.eks.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: aws.String(name)})
		if err != nil {
			return fmt.Errorf("eks:ListNodegroups %s: %s", name, awsnet.APIMessage(err))
		}
		for _, ng := range ngs.Nodegroups {
			nd, err := s.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(name), NodegroupName: aws.String(ng)})
			if err != nil {
				return fmt.Errorf("eks:DescribeNodegroup %s/%s: %s", name, ng, awsnet.APIMessage(err))
			}
			arns = append(arns, aws.ToString(nd.Nodegroup.NodegroupArn))
		}
	} else if err != nil && awsnet.APICode(err) != "ResourceNotFoundException" {
		return fmt.Errorf("eks:DescribeCluster %s: %s", name, awsnet.APIMessage(err))
	}
	for _, arn := range arns {
		if len(want) > 0 {
			if _, err := s.eks.TagResource(ctx, &eks.TagResourceInput{ResourceArn: aws.String(arn), Tags: want}); err != nil {
				return fmt.Errorf("eks:TagResource %s: %s", arn, awsnet.APIMessage(err))
			}
		}
		if len(gone) > 0 {
			if _, err := s.eks.UntagResource(ctx, &eks.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: gone}); err != nil {
				return fmt.Errorf("eks:UntagResource %s: %s", arn, awsnet.APIMessage(err))
			}
		}
	}
	return s.MarkEC2(ctx, name, want, gone)
}

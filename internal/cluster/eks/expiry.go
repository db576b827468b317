package eks

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

var _ cluster.Expirer = (*Provider)(nil)

// Tagged lists the clusters of this provider tagged nuv.dev/cluster=<their name> in the
// environment's account and region, with the marks their tags carry (nuv.dev/expires-at,
// nuv.dev/owner). Every cluster's VPC is the first thing an apply makes and the last a delete
// removes, so a cluster is found by its VPC too: one whose apply died before its EKS cluster or
// its machines were made is found all the same. The two providers of this package tell their
// VPCs apart by what else carries the cluster's tag: a self-managed cluster's security group of
// its machines or its key pair (an apply that died before either left a VPC alone, which the eks
// provider reports: either provider's delete removes it). A VPC whose EKS cluster exists is that
// cluster's: the EKS cluster's own tags decide, so one whose nuv tag was taken off is left alone.
func (p *Provider) Tagged(ctx context.Context) ([]cluster.Tagged, error) {
	if !p.configured() {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	s, err := p.session(ctx, &spec.Cluster{}, Section{})
	if err != nil {
		return nil, err
	}
	var out []cluster.Tagged
	found := map[string]bool{}
	if !p.selfManaged {
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
	}
	selfManaged, err := s.selfManagedClusters(ctx)
	if err != nil {
		return nil, err
	}
	pg := ec2.NewDescribeVpcsPaginator(s.EC2, &ec2.DescribeVpcsInput{Filters: []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{awsnet.TagCluster}}}})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("ec2:DescribeVpcs: %s", awsnet.APIMessage(err))
		}
		for _, v := range page.Vpcs {
			t := awsnet.TagsOf(v.Tags)
			n := t[awsnet.TagCluster]
			// the cluster's own VPC (not one of spec.eks.vpcID's, which nuv only tags)
			if n == "" || t[awsnet.TagResource] != awsnet.Key(awsnet.KindVPC, n) || found[n] || selfManaged[n] != p.selfManaged {
				continue
			}
			m, err := kit.MarksOf(t)
			out = append(out, cluster.Tagged{Name: n, Marks: m, Where: s.Config.Region, Err: err})
			found[n] = true
		}
	}
	return out, nil
}

// selfManagedClusters are the names of the clusters whose machines' security group or key pair
// carries nuv's tags: what only a self-managed cluster has.
func (s *session) selfManagedClusters(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	sgs := ec2.NewDescribeSecurityGroupsPaginator(s.EC2, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + awsnet.TagResource), Values: []string{awsnet.Key(awsnet.KindSG, "machines")}}}})
	for sgs.HasMorePages() {
		page, err := sgs.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("ec2:DescribeSecurityGroups: %s", awsnet.APIMessage(err))
		}
		for _, g := range page.SecurityGroups {
			if n := awsnet.TagsOf(g.Tags)[awsnet.TagCluster]; n != "" {
				out[n] = true
			}
		}
	}
	kps, err := s.EC2.DescribeKeyPairs(ctx, &ec2.DescribeKeyPairsInput{Filters: []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{awsnet.TagCluster}}}})
	if err != nil {
		return nil, fmt.Errorf("ec2:DescribeKeyPairs: %s", awsnet.APIMessage(err))
	}
	for _, k := range kps.KeyPairs {
		t := awsnet.TagsOf(k.Tags)
		if n := t[awsnet.TagCluster]; n != "" && t[awsnet.TagResource] == awsnet.Key(kindKeyPair, "nuv-"+n) {
			out[n] = true
		}
	}
	return out, nil
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
	want := kit.MarkTags(c.Marks)
	var gone []string
	for _, k := range []string{kit.TagExpiresAt, kit.TagOwner} {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
		}
	}
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
	var ids []string
	pg := ec2.NewDescribeTagsPaginator(s.EC2, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{
		{Name: aws.String("key"), Values: []string{awsnet.TagCluster}}, {Name: aws.String("value"), Values: []string{name}}}})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("ec2:DescribeTags: %s", awsnet.APIMessage(err))
		}
		for _, t := range page.Tags {
			if !slices.Contains(ids, aws.ToString(t.ResourceId)) {
				ids = append(ids, aws.ToString(t.ResourceId))
			}
		}
	}
	for i := 0; i < len(ids); i += 100 {
		batch := ids[i:min(i+100, len(ids))]
		if len(want) > 0 {
			var tags []ec2types.Tag
			for _, k := range slices.Sorted(maps.Keys(want)) {
				tags = append(tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(want[k])})
			}
			if _, err := s.EC2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: batch, Tags: tags}); err != nil && !awsnet.NotFound(err) {
				return fmt.Errorf("ec2:CreateTags on %d resources of %s: %s", len(batch), name, awsnet.APIMessage(err))
			}
		}
		if len(gone) > 0 {
			var tags []ec2types.Tag
			for _, k := range gone {
				tags = append(tags, ec2types.Tag{Key: aws.String(k)})
			}
			if _, err := s.EC2.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: batch, Tags: tags}); err != nil && !awsnet.NotFound(err) {
				return fmt.Errorf("ec2:DeleteTags on %d resources of %s: %s", len(batch), name, awsnet.APIMessage(err))
			}
		}
	}
	return nil
}

package awsnet

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// What both AWS providers do alike: whether to look at all, how long a listing may take, the
// clusters found by their VPCs, their marks on EC2 resources, adoption and pricing.

// Configured reports whether this environment (read with getenv) names an AWS account to look in
// (credentials, a profile or an endpoint): without one, List and Status find nothing instead of
// probing the SDK's whole chain (instance metadata included) on every `nuv cluster list`.
func Configured(getenv func(string) string) bool {
	for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		if getenv(k) != "" {
			return true
		}
	}
	return false
}

// ListTimeout bounds List and Status: an unreachable endpoint (an emulator that is down) makes a
// row of `nuv cluster list` say so instead of holding the listing through every retry.
const ListTimeout = 15 * time.Second

// InEnvironment is how a provider's List and Tagged begin: with no AWS configured (Configured)
// they find nothing (nil, nil); else f runs, bounded by ListTimeout, with the session open makes
// for the environment's account and region.
func InEnvironment[S, T any](ctx context.Context, getenv func(string) string, open func(context.Context) (S, error), f func(context.Context, S) ([]T, error)) ([]T, error) {
	if !Configured(getenv) {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ListTimeout)
	defer cancel()
	s, err := open(ctx)
	if err != nil {
		return nil, err
	}
	return f(ctx, s)
}

// SpecKey is what a cached resolution of a spec depends on: its name, region, version, zones,
// VPC network, the provider's section and the node groups' instance types.
func SpecKey(c *spec.Cluster, section string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%s|%v|%s|%v", c.Metadata.Name, c.Spec.Region, c.Spec.KubernetesVersion, c.Spec.Zones, c.Spec.Networking.VPCCIDR, c.Section(section))
	for _, g := range c.Spec.NodeGroups {
		b.WriteString("|" + g.InstanceType)
	}
	return b.String()
}

// InstanceTypeOf is a node group's instance type (m6i.large when the spec sets none).
func InstanceTypeOf(g spec.NodeGroup) string { return OrDefault(g.InstanceType, "m6i.large") }

// Self-managed clusters' parts that tell their VPCs from EKS clusters': the machines' security
// group and the SSH key pair.
const (
	MachinesSecurityGroup = KindSG + "/machines"
	KindKeyPair           = "key-pair"
)

// SelfManagedClusters are the names of the clusters whose machines' security group or key pair
// carries nuv's tags: what only a self-managed cluster has.
func (s *Session) SelfManagedClusters(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	sgs := ec2.NewDescribeSecurityGroupsPaginator(s.EC2, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + TagResource), Values: []string{MachinesSecurityGroup}}}})
	for sgs.HasMorePages() {
		page, err := sgs.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("ec2:DescribeSecurityGroups: %s", APIMessage(err))
		}
		for _, g := range page.SecurityGroups {
			if n := TagsOf(g.Tags)[TagCluster]; n != "" {
				out[n] = true
			}
		}
	}
	kps, err := s.EC2.DescribeKeyPairs(ctx, &ec2.DescribeKeyPairsInput{Filters: []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{TagCluster}}}})
	if err != nil {
		return nil, fmt.Errorf("ec2:DescribeKeyPairs: %s", APIMessage(err))
	}
	for _, k := range kps.KeyPairs {
		t := TagsOf(k.Tags)
		if n := t[TagCluster]; n != "" && t[TagResource] == Key(KindKeyPair, "nuv-"+n) {
			out[n] = true
		}
	}
	return out, nil
}

// TaggedVPCs lists the clusters found by their own VPCs (tagged nuv.dev/cluster=NAME and
// nuv.dev/resource=vpc/NAME), with the marks their tags carry: those of self-managed clusters
// (SelfManagedClusters) when selfManaged is set, the others when not; found are the names already
// listed, skipped and added to.
func (s *Session) TaggedVPCs(ctx context.Context, found map[string]bool, selfManaged bool) ([]cluster.Tagged, error) {
	sm, err := s.SelfManagedClusters(ctx)
	if err != nil {
		return nil, err
	}
	var out []cluster.Tagged
	pg := ec2.NewDescribeVpcsPaginator(s.EC2, &ec2.DescribeVpcsInput{Filters: []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{TagCluster}}}})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("ec2:DescribeVpcs: %s", APIMessage(err))
		}
		for _, v := range page.Vpcs {
			t := TagsOf(v.Tags)
			n := t[TagCluster]
			// the cluster's own VPC (not one of spec.eks.vpcID's, which nuv only tags)
			if n == "" || t[TagResource] != Key(KindVPC, n) || found[n] || sm[n] != selfManaged {
				continue
			}
			m, err := kit.MarksOf(t)
			out = append(out, cluster.Tagged{Name: n, Marks: m, Where: s.Config.Region, Err: err})
			found[n] = true
		}
	}
	return out, nil
}

// MarkChanges are the marks of c to write (nuv.dev/expires-at, nuv.dev/owner) and the mark keys
// to remove (those c lacks).
func MarkChanges(c *spec.Cluster) (want map[string]string, gone []string) {
	want = kit.MarkTags(c.Marks)
	for _, k := range []string{kit.TagExpiresAt, kit.TagOwner} {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
		}
	}
	return want, gone
}

// MarkEC2 writes the marks want on every EC2 resource tagged nuv.dev/cluster=NAME and removes
// the keys gone from them.
func (s *Session) MarkEC2(ctx context.Context, name string, want map[string]string, gone []string) error {
	var ids []string
	pg := ec2.NewDescribeTagsPaginator(s.EC2, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{
		{Name: aws.String("key"), Values: []string{TagCluster}}, {Name: aws.String("value"), Values: []string{name}}}})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("ec2:DescribeTags: %s", APIMessage(err))
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
			if _, err := s.EC2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: batch, Tags: tags}); err != nil && !NotFound(err) {
				return fmt.Errorf("ec2:CreateTags on %d resources of %s: %s", len(batch), name, APIMessage(err))
			}
		}
		if len(gone) > 0 {
			var tags []ec2types.Tag
			for _, k := range gone {
				tags = append(tags, ec2types.Tag{Key: aws.String(k)})
			}
			if _, err := s.EC2.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: batch, Tags: tags}); err != nil && !NotFound(err) {
				return fmt.Errorf("ec2:DeleteTags on %d resources of %s: %s", len(batch), name, APIMessage(err))
			}
		}
	}
	return nil
}

// Adopt describes, as a spec of provider, a cluster nuv made whose state record is gone: one
// whose observation (observe, with no record) finds anything of the cluster's. region opens the
// environment's session and returns its region; configured is Configured's answer.
func Adopt(ctx context.Context, name, provider string, configured bool, region func(context.Context, *spec.Cluster) (string, error),
	observe func(context.Context, *spec.Cluster, []cluster.Resource) ([]cluster.Resource, error)) (*spec.Cluster, error) {
	if !configured {
		return nil, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	ctx, cancel := context.WithTimeout(ctx, ListTimeout)
	defer cancel()
	c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: name}, Spec: spec.Spec{Provider: provider}}
	// An AWS that cannot be asked is not a reason to stop another provider from adopting the name.
	r, err := region(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("%q: %w (the eks provider could not look: %v)", name, cluster.ErrNotFound, err)
	}
	c.Spec.Region = r
	rs, err := observe(ctx, c, nil)
	if err != nil {
		return nil, fmt.Errorf("%q: %w (the eks provider could not look: %v)", name, cluster.ErrNotFound, err)
	}
	for _, r := range rs {
		if !r.Foreign {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
}

// PricedMachine is the pricing of a machine of c (cluster.Priced) without its type and count: AWS
// in c's region (else the environment's, read with getenv) through endpoint.
func PricedMachine(c *spec.Cluster, getenv func(string) string, endpoint string) cluster.Machines {
	region := c.Spec.Region
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
		if region == "" {
			region = getenv(k)
		}
	}
	return cluster.Machines{Cloud: "aws", Region: region, Endpoint: endpoint}
}

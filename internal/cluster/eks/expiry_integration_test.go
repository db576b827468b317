package eks_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// eksGC is the AWS emulator as clustertest.GCByTag drives it: the marks are the EKS cluster's tags.
type eksGC struct{ w *world }

func (g eksGC) Provider() string { return "eks" }
func (g eksGC) Spec(t *testing.T, name, ttl string) string {
	return g.w.Spec(name, `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: `+name+`}
spec:
  provider: eks
  ttl: `+ttl+`
  kubernetesVersion: "1.35"
  nodeGroups:
  - {name: web, count: 1, instanceType: m6i.large}
`)
}
func (g eksGC) Nuv(t *testing.T, home string, args ...string) (string, string, int) {
	return g.w.Nuv([]string{"NUV_HOME=" + home}, args...)
}
func (g eksGC) arn(t *testing.T, name string) (string, map[string]string, bool) {
	out, err := g.w.EKS.DescribeCluster(context.Background(), &eks.DescribeClusterInput{Name: aws.String(name)})
	if err != nil {
		return "", nil, false
	}
	return aws.ToString(out.Cluster.Arn), out.Cluster.Tags, true
}
func (g eksGC) Marks(t *testing.T, name string) (spec.Marks, bool) {
	_, tags, ok := g.arn(t, name)
	if !ok {
		return spec.Marks{}, false
	}
	m, err := kit.MarksOf(tags)
	if err != nil {
		t.Fatal(err)
	}
	// The VPC carries the same marks.
	if vm, err := kit.MarksOf(g.vpcTags(t, name)); err != nil || vm.Owner != m.Owner || (vm.ExpiresAt == nil) != (m.ExpiresAt == nil) || m.ExpiresAt != nil && !vm.ExpiresAt.Equal(*m.ExpiresAt) {
		t.Errorf("the VPC of %s carries %+v (%v), its EKS cluster %+v", name, vm, err, m)
	}
	return m, true
}
func (g eksGC) Expire(t *testing.T, name string, at time.Time) {
	arn, _, _ := g.arn(t, name)
	v := at.Format(time.RFC3339)
	if _, err := g.w.EKS.TagResource(context.Background(), &eks.TagResourceInput{ResourceArn: aws.String(arn), Tags: map[string]string{kit.TagExpiresAt: v}}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.w.EC2.CreateTags(context.Background(), &ec2.CreateTagsInput{Resources: []string{g.vpc(t, name)}, Tags: []ec2types.Tag{{Key: aws.String(kit.TagExpiresAt), Value: aws.String(v)}}}); err != nil {
		t.Fatal(err)
	}
}

// vpc is the id of the cluster's VPC.
func (g eksGC) vpc(t *testing.T, name string) string {
	out, err := g.w.EC2.DescribeVpcs(context.Background(), &ec2.DescribeVpcsInput{Filters: []ec2types.Filter{{Name: aws.String("tag:" + kit.TagCluster), Values: []string{name}}}})
	if err != nil || len(out.Vpcs) != 1 {
		t.Fatalf("the VPC of %s: %v (%d found)", name, err, len(out.Vpcs))
	}
	return aws.ToString(out.Vpcs[0].VpcId)
}

// vpcTags are the tags of the cluster's VPC.
func (g eksGC) vpcTags(t *testing.T, name string) map[string]string {
	out, err := g.w.EC2.DescribeVpcs(context.Background(), &ec2.DescribeVpcsInput{VpcIds: []string{g.vpc(t, name)}})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, tg := range out.Vpcs[0].Tags {
		m[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
	}
	return m
}
func (g eksGC) Tag(t *testing.T, name string, on bool) {
	arn, _, _ := g.arn(t, name)
	var err error
	if on {
		_, err = g.w.EKS.TagResource(context.Background(), &eks.TagResourceInput{ResourceArn: aws.String(arn), Tags: map[string]string{kit.TagCluster: name}})
	} else {
		_, err = g.w.EKS.UntagResource(context.Background(), &eks.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: []string{kit.TagCluster}})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationEKSGCByTag: clusters that expire, in the AWS emulator (clustertest.GCByTag): the
// expiry and owner as tags of the EKS cluster and its VPC, moved by extend; a cluster whose
// record was lost found by tag and deleted once its expiry passed, by one of two concurrent gcs;
// another store's cluster, and one without nuv's tag, left alone.
func TestIntegrationEKSGCByTag(t *testing.T) {
	if testing.Short() {
		t.Skip("makes two emulated EKS clusters (local control planes); skipped under -short")
	}
	clustertest.GCByTag(t, eksGC{newWorld(t)})
}

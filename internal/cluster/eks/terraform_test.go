package eks

import (
	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awstest"
	"regexp"
	"strings"
	"testing"
)

// TestTerraformKarpenterManifests: the karpenter groups of the withKarpenter spec become one
// EC2NodeClass and one NodePool each (package karpenter's mapping, written once for all groups),
// with a kubernetes provider that authenticates through nuv -eks-token; nothing of them is written
// as a managed node group. The whole module is TestTerraformGolden's karpenter golden file.
func TestTerraformKarpenterManifests(t *testing.T) {
	e := awstest.StartEmulator(t, 0)
	p := New(t.TempDir(), "nuv", e.Getenv, nil)
	files, err := newEngine(t, p).Terraform(awstest.Parse(t, withKarpenter))
	if err != nil {
		t.Fatal(err)
	}
	main := string(files["main.tf"])
	for _, want := range []string{
		`resource "kubernetes_manifest" "karpenter_ec2nodeclass_burst" {`, `resource "kubernetes_manifest" "karpenter_nodepool_burst" {`,
		`resource "kubernetes_manifest" "karpenter_nodepool_batch" {`,
		`depends_on = [aws_eks_cluster.kp, aws_iam_role.nuv-kp-nodes, kubernetes_manifest.karpenter_ec2nodeclass_burst]`,
		`values   = ["m6i.large", "c6i.xlarge"]`, `nodes = 20`, `replicas = 2`,
		`provider "kubernetes" {`, `args        = ["-eks-token", "--cluster", "kp"]`, `source  = "hashicorp/kubernetes"`,
		`name            = "nuv"`,
	} {
		if !strings.Contains(main, want) {
			t.Errorf("main.tf lacks %q", want)
		}
	}
	if n := strings.Count(main, "# Karpenter node groups:"); n != 1 {
		t.Errorf("the Karpenter note is written %d times, want once", n)
	}
	if regexp.MustCompile(`aws_eks_node_group" "(burst|batch)"`).MatchString(main) {
		t.Error("a karpenter group was also written as a managed node group")
	}
}

// TestKarpenterExistingVPC: in an existing VPC a Karpenter group's node class names the spec's
// subnets by id, and its security-group selector (the cluster's own group, known only once the
// cluster exists) is left out of what a plan compares.
func TestKarpenterExistingVPC(t *testing.T) {
	e := awstest.StartEmulator(t, 0)
	p := New(t.TempDir(), "nuv", e.Getenv, nil)
	vpc, subnets := existingNetwork(t, p)
	doc := strings.NewReplacer("vpc-0123456789abcdef0", vpc, "subnet-0aaa", subnets[0], "subnet-0bbb", subnets[1]).Replace(existingVPC)
	c := awstest.Parse(t, doc)
	if errs := p.Validate(c); len(errs) > 0 {
		t.Fatal(errs)
	}
	rs, err := p.Desired(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Key() != "karpenter/burst" {
			continue
		}
		if got, want := r.Fields["nodeclass.subnetSelectorTerms"], "id="+subnets[0]+"; id="+subnets[1]; got != want {
			t.Errorf("subnet selector %q, want %q", got, want)
		}
		if _, ok := r.Fields["nodeclass.securityGroupTerms"]; ok {
			t.Errorf("the security-group selector is compared: %q", r.Fields["nodeclass.securityGroupTerms"])
		}
		return
	}
	t.Fatal("no karpenter/burst resource")
}

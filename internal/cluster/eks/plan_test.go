package eks

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awstest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen/tfgentest"
)

var update = flag.Bool("update", false, "rewrite the golden plan files")

// threeGroups is a spec with three managed node groups (on demand, spot with a taint, a pinned
// add-on), logging and a private endpoint: the spec of the plan golden file and the benchmark.
const threeGroups = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: shop}
spec:
  provider: eks
  kubernetesVersion: "1.35"
  zones: [us-east-1a, us-east-1b, us-east-1c]
  networking: {vpcCIDR: 10.20.0.0/16, serviceCIDR: 172.20.0.0/16}
  tags: {team: platform}
  nodeGroups:
  - {name: system, count: 2, instanceType: m6i.large, labels: {role: system}}
  - {name: web, min: 1, count: 3, max: 6, instanceType: c6i.xlarge, spot: true, taints: ["dedicated=web:NoSchedule"], diskSize: 50}
  - {name: batch, count: 0, max: 4, instanceType: r6i.2xlarge}
  eks:
    nat: perAZ
    endpointAccess: {public: true, private: true, publicCIDRs: [203.0.113.0/24]}
    logging: [api, audit]
    addons: {coredns: v1.12.3-eksbuild.1, aws-ebs-csi-driver: default}
`

// withKarpenter has a managed node group and two Karpenter groups: a dynamic spot pool over two
// instance types with a label, a taint and a disk size, and a static pool of two nodes.
const withKarpenter = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: kp}
spec:
  provider: eks
  kubernetesVersion: "1.35"
  zones: [us-east-1a, us-east-1b]
  tags: {team: platform}
  nodeGroups:
  - {name: system, count: 2, instanceType: m6i.large}
  - {name: burst, manager: karpenter, max: 20, spot: true, instanceType: "m6i.large,c6i.xlarge", labels: {tier: burst}, taints: ["burst=true:NoSchedule"], diskSize: 80}
  - {name: batch, manager: karpenter, count: 2, max: 2, instanceType: r6i.2xlarge}
  eks: {nat: single}
`

// existingVPC puts the cluster in a VPC and subnets that exist already, with a Karpenter group
// (whose node class names the subnets by id).
const existingVPC = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: lab}
spec:
  provider: eks
  region: us-east-1
  nodeGroups:
  - {name: workers, count: 2}
  - {name: burst, manager: karpenter, max: 4}
  eks:
    vpcId: vpc-0123456789abcdef0
    subnetIds: [subnet-0aaa, subnet-0bbb]
    addons: {kube-proxy: none}
`

func newEngine(t *testing.T, p *Provider) *engine.Engine {
	return &engine.Engine{Providers: map[string]cluster.Provider{Name: p}, Store: state.Dir{Path: t.TempDir()}}
}

// TestPlanGolden plans a new 3-node-group cluster against the emulator: every resource in
// dependency order, the versions EKS reports (the default add-ons' and the pinned one).
func TestPlanGolden(t *testing.T) {
	e := awstest.StartEmulator(t, 0)
	p := New(t.TempDir(), "/usr/local/bin/nuv", e.Getenv, nil)
	plan, err := newEngine(t, p).Plan(context.Background(), awstest.Parse(t, threeGroups))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	engine.WritePlan(&b, plan)
	awstest.Golden(t, *update, "plan-3-groups.txt", b.Bytes())
}

// TestPlanGoldenKarpenter plans a new cluster with Karpenter groups: each is one karpenter/GROUP
// resource whose fields are its NodePool's and EC2NodeClass's (requirements, limits, replicas,
// labels, taints, the node class), not a managed node group's sizes.
func TestPlanGoldenKarpenter(t *testing.T) {
	e := awstest.StartEmulator(t, 0)
	p := New(t.TempDir(), "/usr/local/bin/nuv", e.Getenv, nil)
	plan, err := newEngine(t, p).Plan(context.Background(), awstest.Parse(t, withKarpenter))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	engine.WritePlan(&b, plan)
	awstest.Golden(t, *update, "plan-karpenter.txt", b.Bytes())
}

// TestTerraformGolden writes the Terraform module of two specs (a new network with a NAT
// gateway per zone; an existing VPC) and checks them against golden files and terraform fmt.
func TestTerraformGolden(t *testing.T) {
	e := awstest.StartEmulator(t, 0)
	p := New(t.TempDir(), "/usr/local/bin/nuv", e.Getenv, nil)
	eng := newEngine(t, p)
	// The existing network of the second spec, made in the emulator; its ids are random, so the
	// module is compared with them replaced by the spec's placeholders.
	vpc, subnets := existingNetwork(t, p)
	ids := strings.NewReplacer("vpc-0123456789abcdef0", vpc, "subnet-0aaa", subnets[0], "subnet-0bbb", subnets[1])
	back := strings.NewReplacer(vpc, "vpc-0123456789abcdef0", subnets[0], "subnet-0aaa", subnets[1], "subnet-0bbb")
	for name, doc := range map[string]string{"three-groups": threeGroups, "existing-vpc": ids.Replace(existingVPC), "karpenter": withKarpenter} {
		t.Run(name, func(t *testing.T) {
			files, err := eng.Terraform(awstest.Parse(t, doc))
			if err != nil {
				t.Fatal(err)
			}
			for n, b := range files {
				files[n] = []byte(back.Replace(string(b)))
			}
			tfgentest.Check(t, filepath.Join("testdata", "terraform", name), files)
		})
	}
}

// TestValidateAgainstAWS: what only the API can answer is refused at plan time with the field
// path: a version EKS does not offer, an unknown instance type, a zone of another region, an
// add-on version EKS does not have; bad credentials are one message naming the chain.
func TestValidateAgainstAWS(t *testing.T) {
	e := awstest.StartEmulator(t, 0)
	for _, tc := range []struct {
		name, edit string
		want       []string
	}{
		{"version", `kubernetesVersion: "1.35"=>kubernetesVersion: "1.29"`, []string{`spec.yaml:6: spec.kubernetesVersion: "1.29" is not offered by EKS in us-east-1 (offered: 1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36)`}},
		{"patch version", `kubernetesVersion: "1.35"=>kubernetesVersion: "1.35.2"`, []string{`spec.kubernetesVersion: "1.35.2": EKS versions are MAJOR.MINOR`}},
		{"instance type", `instanceType: c6i.xlarge=>instanceType: c6i.huge`, []string{`spec.yaml:12: spec.nodeGroups[1].instanceType: "c6i.huge" is not an EC2 instance type in us-east-1`}},
		{"zone", `us-east-1c]=>eu-west-1c]`, []string{`spec.zones[2]: "eu-west-1c" is not a zone of us-east-1`}},
		{"addon", `coredns: v1.12.3-eksbuild.1=>coredns: v9.9.9`, []string{`spec.eks.addons.coredns: version "v9.9.9" of coredns is not offered for Kubernetes 1.35`}},
		{"overlap", `serviceCIDR: 172.20.0.0/16=>serviceCIDR: 10.20.128.0/20`, []string{`spec.networking.serviceCIDR: 10.20.128.0/20 overlaps the VPC network 10.20.0.0/16`}},
		{"invalid cidr", `vpcCIDR: 10.20.0.0/16=>vpcCIDR: 10.16.0.0/12`, []string{`spec.networking.vpcCIDR: 10.16.0.0/12: an EKS VPC that nuv carves into subnets is a /16 to a /24`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, repl, _ := strings.Cut(tc.edit, "=>")
			doc := strings.Replace(threeGroups, old, repl, 1)
			if doc == threeGroups {
				t.Fatalf("edit %q changed nothing", tc.edit)
			}
			p := New(t.TempDir(), "nuv", e.Getenv, nil)
			_, err := newEngine(t, p).Plan(context.Background(), awstest.Parse(t, doc))
			if err == nil {
				t.Fatal("plan accepted the spec")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%v\nwant it to contain %q", err, w)
				}
			}
		})
	}
	t.Run("credentials", func(t *testing.T) {
		t.Setenv("AWS_SECRET_ACCESS_KEY", "not-the-emulators-secret-000000000000000")
		p := New(t.TempDir(), "nuv", e.Getenv, nil)
		_, err := newEngine(t, p).Plan(context.Background(), awstest.Parse(t, threeGroups))
		want := "the AWS credentials from EnvConfigCredentials were refused by " + e.URL + " (sts:GetCallerIdentity): SignatureDoesNotMatch"
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)") {
			t.Fatalf("error %v\nwant %q and the chain", err, want)
		}
		t.Setenv("AWS_ACCESS_KEY_ID", "")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "")
		_, err = newEngine(t, New(t.TempDir(), "nuv", e.Getenv, nil)).Plan(context.Background(), awstest.Parse(t, threeGroups))
		if err == nil || !strings.Contains(err.Error(), "no AWS credentials: tried the environment") {
			t.Fatalf("no credentials: %v", err)
		}
	})
}

// TestExampleSpec: the example the README points at (clusters/specs/eks.yaml) plans against the
// emulator.
func TestExampleSpec(t *testing.T) {
	e := awstest.StartEmulator(t, 0)
	cs, err := spec.ReadFile(filepath.Join("..", "..", "..", "clusters", "specs", "eks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := newEngine(t, New(t.TempDir(), "nuv", e.Getenv, nil)).Plan(context.Background(), cs[0])
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	engine.WritePlan(&b, plan)
	if !strings.Contains(b.String(), "+ create node-group/apps") || plan.Count("create") != 20 {
		t.Fatalf("plan of the example:\n%s", b.String())
	}
}

// TestObserveByRecordedID: a VPC whose tags were removed by hand is still found through the ID
// the state record holds (and keeps its key); without the record it is not nuv's.
func TestObserveByRecordedID(t *testing.T) {
	e := awstest.StartEmulator(t, 0)
	c := awstest.Parse(t, strings.ReplaceAll(existingVPC, "vpcId: vpc-0123456789abcdef0\n    subnetIds: [subnet-0aaa, subnet-0bbb]\n", ""))
	delete(c.Spec.Sections, "eks")
	p := New(t.TempDir(), "nuv", e.Getenv, nil)
	ctx := context.Background()
	ss, err := p.session(ctx, c, sectionOf(c))
	if err != nil {
		t.Fatal(err)
	}
	out, err := ss.EC2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(out.Vpc.VpcId)
	rs, err := p.Observe(ctx, c, []cluster.Resource{{Kind: awsnet.KindVPC, Name: "lab", ID: id}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Key() != "vpc/lab" || rs[0].ID != id || rs[0].Fields["cidr"] != "10.0.0.0/16" {
		t.Fatalf("observed with the record: %+v", rs)
	}
	if rs, err = p.Observe(ctx, c, nil); err != nil || len(rs) != 0 {
		t.Fatalf("observed without the record: %+v %v", rs, err)
	}
}

// existingNetwork makes a VPC with two subnets in two zones in the emulator.
func existingNetwork(t *testing.T, p *Provider) (string, []string) {
	t.Helper()
	ctx := context.Background()
	ss, err := p.session(ctx, awstest.Parse(t, existingVPC), Section{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := ss.EC2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.1.0.0/16")})
	if err != nil {
		t.Fatal(err)
	}
	var subnets []string
	for i, z := range []string{"us-east-1a", "us-east-1b"} {
		sn, err := ss.EC2.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: v.Vpc.VpcId, CidrBlock: aws.String(fmt.Sprintf("10.1.%d.0/24", i)), AvailabilityZone: aws.String(z)})
		if err != nil {
			t.Fatal(err)
		}
		subnets = append(subnets, aws.ToString(sn.Subnet.SubnetId))
	}
	return aws.ToString(v.Vpc.VpcId), subnets
}

// TestExistingNetworkRefusals: a VPC or subnet that does not exist, or a subnet of another VPC, is
// refused at plan time with its path.
func TestExistingNetworkRefusals(t *testing.T) {
	e := awstest.StartEmulator(t, 0)
	p := New(t.TempDir(), "nuv", e.Getenv, nil)
	vpc, subnets := existingNetwork(t, p)
	other, others := existingNetwork(t, p)
	for _, tc := range []struct{ vpc, s0, s1, want string }{
		{"vpc-0000000000000000f", subnets[0], subnets[1], "spec.eks.vpcId: vpc-0000000000000000f does not exist in us-east-1"},
		{vpc, subnets[0], "subnet-00000000000000001", "spec.eks.subnetIds[1]: subnet-00000000000000001 does not exist in us-east-1"},
		{vpc, others[0], subnets[1], "spec.eks.subnetIds[0]: " + others[0] + " is in " + other + ", not in the spec's VPC " + vpc},
		{vpc, subnets[0], subnets[0], "spec.eks.subnetIds: the subnets are all in one zone; EKS needs two"},
	} {
		doc := strings.NewReplacer("vpc-0123456789abcdef0", tc.vpc, "subnet-0aaa", tc.s0, "subnet-0bbb", tc.s1).Replace(existingVPC)
		_, err := newEngine(t, New(t.TempDir(), "nuv", e.Getenv, nil)).Plan(context.Background(), awstest.Parse(t, doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v\nwant %q", err, tc.want)
		}
	}
}

// TestValidateKarpenter: `nuv cluster plan` refuses what a Karpenter group cannot be (through
// package karpenter's Validate, with field paths and spec lines) and checks each of a group's
// comma-separated instance types against EC2; a valid edit of the withKarpenter spec plans.
func TestValidateKarpenter(t *testing.T) {
	e := awstest.StartEmulator(t, 0)
	const burst = `max: 20, spot: true, instanceType: "m6i.large,c6i.xlarge"`
	for _, tc := range []struct {
		name, edit string
		want       []string // empty: the plan succeeds
	}{
		{"no max", burst + "=>spot: true", []string{`spec.yaml:11: spec.nodeGroups[1].max: required for a Karpenter group: it becomes the NodePool's limits.nodes`}},
		{"min without count", burst + "=>min: 2, " + burst, []string{`spec.nodeGroups[1].min: a Karpenter NodePool (karpenter.sh/v1) has no minimum size`}},
		{"unknown type in a list", `"m6i.large,c6i.xlarge"=>"m6i.large,c6i.huge"`, []string{`spec.yaml:11: spec.nodeGroups[1].instanceType: "c6i.huge" is not an EC2 instance type in us-east-1`}},
		{"malformed type", `"m6i.large,c6i.xlarge"=>"m6i.large,large"`, []string{`spec.nodeGroups[1].instanceType: "large" is not an EC2 instance type (family.size`}},
		{"type twice", `"m6i.large,c6i.xlarge"=>"m6i.large, m6i.large"`, []string{`spec.nodeGroups[1].instanceType: "m6i.large" is listed twice`}},
		{"karpenter label", `labels: {tier: burst}=>labels: {karpenter.sh/capacity-type: spot}`, []string{`spec.nodeGroups[1].labels.karpenter.sh/capacity-type: label domain "karpenter.sh" is Karpenter's`}},
		{"reserved tag", `tags: {team: platform}=>tags: {team: platform, "karpenter.sh/nodepool": x}`, []string{`spec.tags.karpenter.sh/nodepool: tag "karpenter.sh/nodepool" is reserved by Karpenter`}},
		{"three types", `"m6i.large,c6i.xlarge"=>"m6i.large,c6i.xlarge,r6i.large"`, nil},
		{"managed group keeps one type", `{name: system, count: 2, instanceType: m6i.large}=>{name: system, count: 2, instanceType: "m6i.large,c6i.large"}`, []string{`spec.nodeGroups[0].instanceType: "m6i.large,c6i.large" is not an EC2 instance type`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, repl, _ := strings.Cut(tc.edit, "=>")
			doc := strings.Replace(withKarpenter, old, repl, 1)
			if doc == withKarpenter {
				t.Fatalf("edit %q changed nothing", tc.edit)
			}
			p := New(t.TempDir(), "nuv", e.Getenv, nil)
			plan, err := newEngine(t, p).Plan(context.Background(), awstest.Parse(t, doc))
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range plan.Changes {
					if c.Key == "karpenter/burst" && strings.Contains(c.Desired.Fields["nodepool.requirements"], "values=[m6i.large c6i.xlarge r6i.large]") {
						return
					}
				}
				t.Fatalf("no karpenter/burst over three types in the plan: %+v", plan.Changes)
				return
			}
			if err == nil {
				t.Fatal("plan accepted the spec")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%v\nlacks %q", err, w)
				}
			}
		})
	}
}

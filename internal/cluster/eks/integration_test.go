package eks_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awsworld"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// asNuv makes this test binary run as nuv: `nuv cluster ...` runs as its own process (so a
// failpoint can kill it with SIGKILL) and the kubeconfigs' exec credential is this binary too.
const asNuv = "NUV_EKS_TEST_AS_NUV"

func TestMain(m *testing.M) { clustertest.ActAsNuv(m, asNuv) }

// world is awstest's world with the tests' helpers.
type world struct{ *awsworld.World }

func newWorld(t *testing.T) *world { t.Helper(); return newWorldIn(t, "") }

// newWorldIn is newWorld with an emulator serving region ("": the emulator's default).
func newWorldIn(t *testing.T, region string) *world {
	t.Helper()
	return &world{awsworld.NewWorld(t, asNuv, region)}
}

// groupNodes waits until every listed group has its node count (all Ready) on the cluster behind
// kubeconfig, authenticated by the exec credential, and returns the nodes by group.
func groupNodes(t *testing.T, kubeconfig string, want map[string]int) map[string][]corev1.Node {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	deadline := time.Now().Add(90 * time.Second)
	for {
		list, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list nodes through the kubeconfig's exec credential: %v", err)
		}
		got := map[string][]corev1.Node{}
		ready := map[string]int{}
		for _, n := range list.Items {
			g := n.Labels["eks.amazonaws.com/nodegroup"]
			got[g] = append(got[g], n)
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready[g]++
				}
			}
		}
		ok := len(got) == len(want)
		for g, n := range want {
			ok = ok && len(got[g]) == n && ready[g] == n
		}
		if ok {
			return got
		}
		if time.Now().After(deadline) {
			summary := map[string]int{}
			for g, ns := range got {
				summary[g] = len(ns)
			}
			t.Fatalf("nodes by group %v (ready %v), want %v", summary, ready, want)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func lifecycleSpec(version string, web int, withBatch bool) string {
	s := fmt.Sprintf(`apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: lc}
spec:
  provider: eks
  kubernetesVersion: "%s"
  tags: {team: qa}
  nodeGroups:
  - {name: web, min: 1, count: %d, max: 5, instanceType: m6i.large, labels: {tier: web}}
`, version, web)
	if withBatch {
		s += "  - {name: batch, count: 1, instanceType: c6i.large, spot: true, taints: [\"batch=true:NoSchedule\"]}\n"
	}
	return s + "  eks: {nat: single, logging: [api]}\n"
}

var idRE = regexp.MustCompile(` \((arn:aws:[^)]*|vpc-[0-9a-f]+|subnet-[0-9a-f]+|[a-z]+-[0-9a-f]{8,})\)`)

// TestIntegrationEKSLifecycle is kOps' lifecycle test through `nuv cluster` against the emulator:
// a plan that lists every resource; an apply killed (kill -9) after a few steps and resumed by the
// next apply with no resource made twice, under throttling on every third call of every AWS
// operation; a plan with no changes; a scale that plans exactly that change and brings nodes; a
// version upgrade of the control plane, then the node groups and add-ons; a delete after which
// nothing tagged remains.
func TestIntegrationEKSLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("makes an emulated EKS cluster (a local control plane); skipped under -short")
	}
	w := newWorld(t)
	t.Cleanup(func() { w.Nuv(nil, "cluster", "delete", "--yes", "lc") })
	f := w.Spec("lc", lifecycleSpec("1.35", 2, true))

	out, errs, code := w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
	for _, want := range []string{"+ create vpc/lc", "+ create subnet/private-us-east-1a", "+ create subnet/public-us-east-1b", "+ create internet-gateway/lc",
		"+ create elastic-ip/nat-us-east-1a", "+ create nat-gateway/us-east-1a", "+ create route-table/public", "+ create route-table/private",
		"+ create security-group/lc", "+ create iam-role/nuv-lc-cluster", "+ create iam-role/nuv-lc-nodes", "+ create eks-cluster/lc",
		"+ create kubeconfig/lc", "+ create node-group/web", "+ create node-group/batch", "+ create addon/coredns", "+ create addon/kube-proxy",
		"+ create addon/vpc-cni", "Plan: 20 to create, 0 to update, 0 to replace, 0 to delete; 0 unchanged."} {
		if code != 2 || !strings.Contains(out, want) {
			t.Fatalf("plan of a new cluster: exit %d, want 2 and %q\n%s%s", code, want, out, errs)
		}
	}
	if got := w.Tagged("lc"); len(got) != 0 {
		t.Fatalf("a plan made something: %v", got)
	}

	// kill -9 after the fifth recorded step (a subnet), then resume with throttling everywhere.
	_, errs, code = w.Nuv([]string{"NUV_FAILPOINT_KILL_AFTER_STEP=5"}, "cluster", "apply", "--yes", "-f", f)
	if code != -1 {
		t.Fatalf("apply with the failpoint: exit %d, want killed\n%s", code, errs)
	}
	if c := awsworld.Count(w.Tagged("lc")); c["vpc"] != 1 || c["subnet"] != 4 || c["role"] != 0 {
		t.Fatalf("after the kill: %v", w.Tagged("lc"))
	}
	rec := awsworld.ReadRecord(t, w.Home, "lc")
	if rec.Phase != state.Creating || len(rec.Resources) != 5 {
		t.Fatalf("record after the kill: phase %s, %d resources", rec.Phase, len(rec.Resources))
	}
	out, _, code = w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "Plan: 15 to create, 0 to update, 0 to replace, 0 to delete; 5 unchanged.") {
		t.Fatalf("plan after the kill: exit %d\n%s", code, out)
	}
	w.Faults(map[string]any{"operation": "ec2:*", "kind": "throttle", "every": 3},
		map[string]any{"operation": "eks:*", "kind": "throttle", "every": 3},
		map[string]any{"operation": "iam:*", "kind": "throttle", "every": 3})
	t0 := time.Now()
	out, errs, code = w.Nuv(nil, "cluster", "apply", "--yes", "-f", f)
	if code != 0 || !strings.Contains(out, "cluster lc: 15 created") {
		t.Fatalf("resumed apply: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("resumed apply under throttling: %s", time.Since(t0).Round(100*time.Millisecond))
	fired := 0
	for _, fl := range w.Faults() {
		fired += int(fl["fired"].(float64))
	}
	if fired < 10 {
		t.Fatalf("throttling fired %d times; the test means it to hit every third call", fired)
	}
	w.ClearFaults()
	if !strings.Contains(errs, "waiting for eks-cluster/lc: CREATING") {
		t.Errorf("no wait progress for the cluster on stderr:\n%s", errs)
	}
	if c := awsworld.Count(w.Tagged("lc")); c["vpc"] != 1 || c["subnet"] != 4 || c["internet-gateway"] != 1 || c["natgateway"] != 1 || c["elastic-ip"] != 1 ||
		c["route-table"] != 2 || c["security-group"] != 1 || c["role"] != 2 || c["eks-cluster"] != 1 {
		t.Fatalf("after the resumed apply, one of each: %v", c)
	}
	kubeconfig := filepath.Join(w.Project, "clusters", "lc.kubeconfig")
	st, err := os.Stat(kubeconfig)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig: %v %v", st, err)
	}
	kb, _ := os.ReadFile(kubeconfig)
	if !strings.Contains(string(kb), "-eks-token") || strings.Contains(string(kb), "token:") || strings.Contains(string(kb), os.Getenv("AWS_SECRET_ACCESS_KEY")) {
		t.Fatalf("kubeconfig holds a secret or no exec credential:\n%s", kb)
	}
	nodes := groupNodes(t, kubeconfig, map[string]int{"web": 2, "batch": 1})
	for _, n := range nodes["batch"] {
		if n.Labels["eks.amazonaws.com/capacityType"] != "SPOT" || n.Labels["node.kubernetes.io/instance-type"] != "c6i.large" || len(n.Spec.Taints) != 1 {
			t.Fatalf("batch node %s: %v %v", n.Name, n.Labels, n.Spec.Taints)
		}
	}

	// Converged: no changes, nothing written.
	record := filepath.Join(w.Home, "state", "lc.json")
	before, _ := os.ReadFile(record)
	out, errs, code = w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 0 || !strings.Contains(out, "no changes") {
		t.Fatalf("plan after apply: exit %d\n%s%s", code, out, errs)
	}
	if out, _, code = w.Nuv(nil, "cluster", "apply", "--yes", "-f", f); code != 0 || !strings.Contains(out, "no changes") {
		t.Fatalf("second apply: exit %d\n%s", code, out)
	}
	if after, _ := os.ReadFile(record); !bytes.Equal(before, after) {
		t.Fatal("a plan or a no-change apply rewrote the state record")
	}

	// Scale web 2 -> 4 and drop batch: the plan is exactly that.
	f = w.Spec("lc", lifecycleSpec("1.35", 4, false))
	out, errs, code = w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
	wantPlan := "cluster lc (eks):\n  ~ update node-group/web (ID)\n      desired: 2 -> 4\n  - delete node-group/batch (ID)\nPlan: 0 to create, 1 to update, 0 to replace, 1 to delete; 18 unchanged.\n"
	if got := idRE.ReplaceAllString(out, " (ID)"); code != 2 || got != wantPlan {
		t.Fatalf("plan of a scale: exit %d\n%s%s--- want\n%s", code, got, errs, wantPlan)
	}
	if out, errs, code = w.Nuv(nil, "cluster", "apply", "--yes", "-f", f); code != 0 {
		t.Fatalf("apply of the scale: exit %d\n%s%s", code, out, errs)
	}
	groupNodes(t, kubeconfig, map[string]int{"web": 4})

	// Upgrade: the control plane, then the node group, then the add-on whose default follows the version.
	f = w.Spec("lc", lifecycleSpec("1.36", 4, false))
	out, errs, code = w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
	got := idRE.ReplaceAllString(out, " (ID)")
	wantPlan = "cluster lc (eks):\n  ~ update eks-cluster/lc (ID)\n      version: 1.35 -> 1.36\n  ~ update node-group/web (ID)\n      version: 1.35 -> 1.36\n" +
		"  ~ update addon/kube-proxy (ID)\n      version: v1.35.0-eksbuild.3 -> v1.36.0-eksbuild.1\nPlan: 0 to create, 3 to update, 0 to replace, 0 to delete; 16 unchanged.\n"
	if code != 2 || got != wantPlan {
		t.Fatalf("plan of an upgrade: exit %d\n%s%s--- want\n%s", code, got, errs, wantPlan)
	}
	if out, errs, code = w.Nuv(nil, "cluster", "apply", "--yes", "-f", f); code != 0 {
		t.Fatalf("apply of the upgrade: exit %d\n%s%s", code, out, errs)
	}
	d, err := w.EKS.DescribeNodegroup(context.Background(), &eks.DescribeNodegroupInput{ClusterName: aws.String("lc"), NodegroupName: aws.String("web")})
	if err != nil || aws.ToString(d.Nodegroup.Version) != "1.36" {
		t.Fatalf("node group after the upgrade: %v %v", d, err)
	}
	if _, _, code = w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after the upgrade: exit %d", code)
	}

	// Delete: dependents first, each waited for; nothing tagged is left, nor state or kubeconfig.
	t0 = time.Now()
	out, errs, code = w.Nuv(nil, "cluster", "delete", "--yes", "lc")
	if code != 0 {
		t.Fatalf("delete: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("delete: %s", time.Since(t0).Round(100*time.Millisecond))
	if got := w.Tagged("lc"); len(got) != 0 {
		t.Fatalf("tagged resources left after delete: %v", got)
	}
	if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
		t.Fatalf("kubeconfig left: %v", err)
	}
	if _, err := os.Stat(record); !os.IsNotExist(err) {
		t.Fatalf("state record left: %v", err)
	}
}

// TestIntegrationEKSRefusals: an IAM permission error stops the apply naming the operation and
// the resource (and what was made is deleted by the next delete); a VPC of the same name nuv
// did not make is a conflict in the plan and never touched.
func TestIntegrationEKSRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("serves the AWS emulator; skipped under -short")
	}
	w := newWorld(t)
	f := w.Spec("denied", strings.ReplaceAll(lifecycleSpec("1.35", 1, false), "{name: lc}", "{name: denied}"))
	w.Faults(map[string]any{"operation": "iam:CreateRole", "kind": "access-denied", "resource": "nuv-denied-cluster"})
	_, errs, code := w.Nuv(nil, "cluster", "apply", "--yes", "-f", f)
	want := "iam:CreateRole on role nuv-denied-cluster: AccessDenied: User: arn:aws:iam::"
	if code != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, "is not authorized to perform: iam:CreateRole on resource: nuv-denied-cluster") {
		t.Fatalf("apply without iam:CreateRole: exit %d, want 1 and %q\n%s", code, want, errs)
	}
	if rec := awsworld.ReadRecord(t, w.Home, "denied"); rec.Phase != state.CreationFailed || !strings.Contains(rec.Error, "iam:CreateRole") {
		t.Fatalf("record: %s %q", rec.Phase, rec.Error)
	}
	w.ClearFaults()
	// The record lost too (a store that went away): delete finds what is tagged with the name.
	if out, errs, code := w.Nuv(nil, "cluster", "state", "rm", "denied"); code != 0 {
		t.Fatalf("state rm: exit %d\n%s%s", code, out, errs)
	}
	if out, _, code := w.Nuv(nil, "cluster", "delete", "--yes", "denied", "--dry-run"); code != 0 || !strings.Contains(out, "- delete vpc/denied") || !strings.Contains(out, "- delete nat-gateway/us-east-1a") {
		t.Fatalf("delete --dry-run without a record: exit %d\n%s", code, out)
	}
	if out, errs, code := w.Nuv(nil, "cluster", "delete", "--yes", "denied"); code != 0 {
		t.Fatalf("delete of the failed create without its record: exit %d\n%s%s", code, out, errs)
	}
	if got := w.Tagged("denied"); len(got) != 0 {
		t.Fatalf("left after delete: %v", got)
	}

	// Someone else's VPC named like the cluster: a conflict, left alone.
	ctx := context.Background()
	vpc, err := w.EC2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.9.0.0/16"), TagSpecifications: []ec2types.TagSpecification{{
		ResourceType: ec2types.ResourceTypeVpc, Tags: []ec2types.Tag{{Key: aws.String("Name"), Value: aws.String("theirs")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	f = w.Spec("theirs", strings.ReplaceAll(lifecycleSpec("1.35", 1, false), "{name: lc}", "{name: theirs}"))
	out, _, code := w.Nuv(nil, "cluster", "plan", "-f", f)
	if code != 0 || !strings.Contains(out, "! conflict vpc/theirs") {
		t.Fatalf("plan with a foreign VPC: exit %d\n%s", code, out)
	}
	_, errs, code = w.Nuv(nil, "cluster", "apply", "--yes", "-f", f)
	if code == 0 || !strings.Contains(errs, "vpc/theirs exist(s) but nuv did not make them") {
		t.Fatalf("apply with a foreign VPC: exit %d\n%s", code, errs)
	}
	if _, err := w.EC2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{aws.ToString(vpc.Vpc.VpcId)}}); err != nil {
		t.Fatalf("the foreign VPC: %v", err)
	}
	if got := w.Tagged("theirs"); len(got) != 0 {
		t.Fatalf("apply made something despite the conflict: %v", got)
	}
}

// TestIntegrationEKSExistingVPC: a cluster in a VPC and subnets nuv did not make uses them, and
// its delete removes what nuv made (roles, cluster, node group, add-ons) and leaves the network.
func TestIntegrationEKSExistingVPC(t *testing.T) {
	if testing.Short() {
		t.Skip("makes an emulated EKS cluster (a local control plane); skipped under -short")
	}
	w := newWorld(t)
	ctx := context.Background()
	vpc, err := w.EC2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.7.0.0/16")})
	if err != nil {
		t.Fatal(err)
	}
	var subnets []string
	for i, z := range []string{"us-east-1a", "us-east-1b"} {
		sn, err := w.EC2.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.Vpc.VpcId, CidrBlock: aws.String(fmt.Sprintf("10.7.%d.0/24", i)), AvailabilityZone: aws.String(z)})
		if err != nil {
			t.Fatal(err)
		}
		subnets = append(subnets, aws.ToString(sn.Subnet.SubnetId))
	}
	t.Cleanup(func() { w.Nuv(nil, "cluster", "delete", "--yes", "lab") })
	f := w.Spec("lab", fmt.Sprintf(`apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: lab}
spec:
  provider: eks
  nodeGroups:
  - {name: workers, count: 1}
  eks: {vpcId: %s, subnetIds: [%s, %s], addons: {kube-proxy: none, coredns: none}}
`, aws.ToString(vpc.Vpc.VpcId), subnets[0], subnets[1]))
	out, errs, code := w.Nuv(nil, "cluster", "apply", "--yes", "-f", f)
	if code != 0 || !strings.Contains(out, "cluster lab: 6 created") {
		t.Fatalf("apply in an existing VPC: exit %d\n%s%s", code, out, errs)
	}
	d, err := w.EKS.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("lab")})
	if err != nil || strings.Join(d.Cluster.ResourcesVpcConfig.SubnetIds, ",") != strings.Join(subnets, ",") {
		t.Fatalf("cluster subnets: %v %v", d, err)
	}
	if _, _, code := w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after apply: exit %d", code)
	}
	if out, errs, code := w.Nuv(nil, "cluster", "delete", "--yes", "lab"); code != 0 {
		t.Fatalf("delete: exit %d\n%s%s", code, out, errs)
	}
	if got := w.Tagged("lab"); len(got) != 0 {
		t.Fatalf("left after delete: %v", got)
	}
	left, err := w.EC2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: subnets})
	if err != nil || len(left.Subnets) != 2 {
		t.Fatalf("the existing subnets after delete: %v %v", left, err)
	}
}

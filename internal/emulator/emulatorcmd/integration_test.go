package emulatorcmd_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/app"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"github.com/nuv-dev/nuv/internal/eksauth"
	awsemu "github.com/nuv-dev/nuv/internal/emulator/aws"
	"github.com/nuv-dev/nuv/internal/emulator/emulatorcmd"
)

// asNuv makes this test binary run as nuv itself: the emulator's detached process and the
// kubeconfig's exec credential plugin are this binary re-executed with it set. `emulator ...`
// runs as nuv-emulator (Main) runs it, anything else as nuv's full program.
const asNuv = "NUV_EMULATORCMD_TEST_AS_NUV"

func TestMain(m *testing.M) {
	if os.Getenv(asNuv) == "1" {
		if len(os.Args) > 1 && os.Args[1] == "emulator" {
			os.Exit(emulatorcmd.Main(context.Background(), append([]string{"nuv"}, os.Args[1:]...)))
		}
		os.Exit(app.Main(context.Background(), append([]string{"nuv"}, os.Args[1:]...)))
	}
	os.Exit(m.Run())
}

// nuv runs one nuv command line in-process and returns its stdout: `emulator ...` as
// nuv-emulator runs it (the full program hands it over), anything else as the full program.
func nuv(t testing.TB, args ...string) (string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &cli.Env{Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, Log: cli.NewLogger(&errb, 0), Exe: exe, Getenv: os.Getenv, Dir: t.TempDir()}
	run := app.RunEnv
	if len(args) > 0 && args[0] == "emulator" {
		run = emulatorcmd.RunEnv
	}
	err = run(context.Background(), env, append([]string{"nuv"}, args...))
	if err != nil {
		return out.String(), fmt.Errorf("nuv %s: %w\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

func freePort(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// exports reads `export K=V` lines.
func exports(s string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		k, v, _ := strings.Cut(strings.TrimPrefix(l, "export "), "=")
		m[k] = v
	}
	return m
}

func ok[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestIntegrationEmulatorEKS is the whole path: `nuv emulator up`, an EKS cluster created through
// the AWS SDK becomes ACTIVE on a real control plane, a kubeconfig whose exec credential is
// `nuv -eks-token` reaches it as a cluster admin, node groups appear and scale as nodes, the
// emulator survives a kill -9 during creation and a restart without losing anything, and deleting the cluster removes its control plane.
func TestIntegrationEmulatorEKS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a local cluster behind an emulated EKS cluster; skipped under -short")
	}
	ctx := context.Background()
	home := t.TempDir()
	exe, _ := os.Executable()
	t.Setenv("NUV_HOME", home)
	t.Setenv("NUV_EMULATOR_PORT", freePort(t))
	t.Setenv("NUV_AZURE_EMULATOR_PORT", freePort(t))
	t.Setenv("NUV_EMULATOR_DELAY", "300ms")
	t.Setenv(asNuv, "1")
	emuDir := awsemu.Dir(home)
	t.Cleanup(func() {
		if _, err := nuv(t, "emulator", "down"); err != nil {
			t.Errorf("emulator down: %v", err)
		}
		p := local.Provider{Home: emuDir, Project: emuDir}
		names, _ := p.Names()
		for _, n := range names {
			t.Logf("removing leftover control plane %s", n)
			_ = p.Delete(context.Background(), n)
		}
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(emuDir, "emulator.log"))
			t.Logf("emulator log:\n%s", b)
		}
	})

	endpoint := strings.TrimSpace(ok[string](t)(nuv(t, "emulator", "up")))
	if _, err := nuv(t, "emulator", "up"); err != nil { // idempotent
		t.Fatal(err)
	}
	if st := ok[string](t)(nuv(t, "emulator", "status")); !strings.Contains(st, "running at "+endpoint) {
		t.Fatalf("status: %s", st)
	}
	vars := exports(ok[string](t)(nuv(t, "emulator", "env")))
	if vars["AWS_ENDPOINT_URL"] != endpoint || !strings.HasPrefix(vars["AWS_ACCESS_KEY_ID"], "AKIA") || len(vars["AWS_SECRET_ACCESS_KEY"]) != 40 {
		t.Fatalf("env: %v", vars)
	}
	for k, v := range vars {
		t.Setenv(k, v) // the exec credential plugin finds them in its environment
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(home, "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "none"))
	cfg := ok[aws.Config](t)(config.LoadDefaultConfig(ctx))
	ec, ic, kc := ec2.NewFromConfig(cfg), iam.NewFromConfig(cfg), eks.NewFromConfig(cfg)

	// What the eks provider makes before a cluster: roles and a network.
	trust := func(svc string) *string {
		return aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"` + svc + `"},"Action":"sts:AssumeRole"}]}`)
	}
	clusterRole := ok[*iam.CreateRoleOutput](t)(ic.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("demo-cluster"), AssumeRolePolicyDocument: trust("eks.amazonaws.com")})).Role
	nodeRole := ok[*iam.CreateRoleOutput](t)(ic.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("demo-nodes"), AssumeRolePolicyDocument: trust("ec2.amazonaws.com")})).Role
	vpc := ok[*ec2.CreateVpcOutput](t)(ec.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")})).Vpc
	var subnets []string
	for i, az := range []string{"us-east-1a", "us-east-1b"} {
		sn := ok[*ec2.CreateSubnetOutput](t)(ec.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.VpcId, CidrBlock: aws.String(fmt.Sprintf("10.0.%d.0/24", i)), AvailabilityZone: aws.String(az)}))
		subnets = append(subnets, aws.ToString(sn.Subnet.SubnetId))
	}

	const name = "Demo_Cluster"
	created := ok[*eks.CreateClusterOutput](t)(kc.CreateCluster(ctx, &eks.CreateClusterInput{Name: aws.String(name), Version: aws.String("1.35"), RoleArn: clusterRole.Arn,
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: subnets}, Tags: map[string]string{"nuv.dev/cluster": "demo"}})).Cluster
	if created.Status != ekstypes.ClusterStatusCreating {
		t.Fatalf("new cluster is %s, want CREATING", created.Status)
	}
	_, err := kc.CreateCluster(ctx, &eks.CreateClusterInput{Name: aws.String(name), RoleArn: clusterRole.Arn, ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: subnets}})
	var inUse *ekstypes.ResourceInUseException
	if !errors.As(err, &inUse) {
		t.Fatalf("second CreateCluster: %v, want ResourceInUseException", err)
	}
	// kill -9 of the emulator while the control plane is being created: the next start finishes it.
	time.Sleep(2 * time.Second)
	proc := ok[awsemu.Process](t)(awsemu.ReadProcess(emuDir))
	if err := syscall.Kill(proc.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100 && syscall.Kill(proc.PID, 0) == nil; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	ok[string](t)(nuv(t, "emulator", "up"))
	if got := ok[*eks.DescribeClusterOutput](t)(kc.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)})).Cluster.Status; got != ekstypes.ClusterStatusCreating {
		t.Fatalf("after kill -9 and restart the cluster is %s, want still CREATING", got)
	}
	t0 := time.Now()
	waitActive := func() *ekstypes.Cluster {
		t.Helper()
		out, err := eks.NewClusterActiveWaiter(kc, func(o *eks.ClusterActiveWaiterOptions) { o.MinDelay, o.MaxDelay = time.Second, 2*time.Second }).
			WaitForOutput(ctx, &eks.DescribeClusterInput{Name: aws.String(name)}, 5*time.Minute)
		if err != nil {
			t.Fatalf("cluster never ACTIVE: %v", err)
		}
		return out.Cluster
	}
	c := waitActive()
	t.Logf("EKS cluster ACTIVE after %.1fs (endpoint %s)", time.Since(t0).Seconds(), aws.ToString(c.Endpoint))
	if !strings.HasPrefix(aws.ToString(c.Endpoint), "https://127.0.0.1:") || c.CertificateAuthority == nil || aws.ToString(c.Version) != "1.35" ||
		c.ResourcesVpcConfig.ClusterSecurityGroupId == nil || aws.ToString(c.ResourcesVpcConfig.VpcId) != aws.ToString(vpc.VpcId) {
		t.Fatalf("active cluster: %+v", c)
	}

	// A kubeconfig as EKS users have it: the CA from DescribeCluster, nuv as exec credential plugin.
	kubeconfig := filepath.Join(t.TempDir(), "demo.kubeconfig")
	ca := ok[[]byte](t)(base64.StdEncoding.DecodeString(aws.ToString(c.CertificateAuthority.Data)))
	kcfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: demo
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: demo
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: %s
      args: ["-eks-token", "--cluster", %q]
      interactiveMode: Never
contexts:
- name: demo
  context: {cluster: demo, user: demo}
current-context: demo
`, aws.ToString(c.Endpoint), base64.StdEncoding.EncodeToString(ca), exe, name)
	if err := os.WriteFile(kubeconfig, []byte(kcfg), 0o600); err != nil {
		t.Fatal(err)
	}
	rc := ok[*rest.Config](t)(clientcmd.BuildConfigFromFlags("", kubeconfig))
	cs := kubernetes.NewForConfigOrDie(rc)
	review := ok[*authv1.SelfSubjectReview](t)(cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authv1.SelfSubjectReview{}, metav1.CreateOptions{}))
	if u := review.Status.UserInfo; !strings.HasPrefix(u.Username, "arn:aws:iam::") || !contains(u.Groups, "system:masters") {
		t.Fatalf("the exec credential authenticates as %+v; want the caller's ARN in system:masters", u)
	}
	ok[*corev1.NodeList](t)(cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}))

	// A token made for another cluster is refused by this one.
	other := ok[eksauth.Token](t)(eksauth.NewToken(ctx, cfg, "other-cluster"))
	bad := rest.CopyConfig(rc)
	bad.ExecProvider, bad.BearerToken = nil, other.Token
	if _, err := kubernetes.NewForConfigOrDie(bad).CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("a token for another cluster: %v, want Unauthorized", err)
	}

	// A managed node group becomes nodes; scaling adds and removes them.
	ng := ok[*eks.CreateNodegroupOutput](t)(kc.CreateNodegroup(ctx, &eks.CreateNodegroupInput{ClusterName: aws.String(name), NodegroupName: aws.String("ng-a"),
		NodeRole: nodeRole.Arn, Subnets: subnets, InstanceTypes: []string{"m6i.large"}, CapacityType: ekstypes.CapacityTypesSpot,
		ScalingConfig: &ekstypes.NodegroupScalingConfig{MinSize: aws.Int32(1), MaxSize: aws.Int32(5), DesiredSize: aws.Int32(2)},
		Labels:        map[string]string{"team": "web"}, Taints: []ekstypes.Taint{{Key: aws.String("dedicated"), Value: aws.String("web"), Effect: ekstypes.TaintEffectNoSchedule}}})).Nodegroup
	if ng.Status != ekstypes.NodegroupStatusCreating {
		t.Fatalf("new node group is %s", ng.Status)
	}
	if err := eks.NewNodegroupActiveWaiter(kc, func(o *eks.NodegroupActiveWaiterOptions) { o.MinDelay, o.MaxDelay = time.Second, 2*time.Second }).
		Wait(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(name), NodegroupName: aws.String("ng-a")}, 2*time.Minute); err != nil {
		t.Fatalf("node group never ACTIVE: %v", err)
	}
	groupNodes := func(want int) []corev1.Node {
		t.Helper()
		var nodes []corev1.Node
		deadline := time.Now().Add(time.Minute)
		for {
			list := ok[*corev1.NodeList](t)(cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "eks.amazonaws.com/nodegroup=ng-a"}))
			nodes = list.Items
			ready := 0
			for _, n := range nodes {
				for _, c := range n.Status.Conditions {
					if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
			if len(nodes) == want && ready == want {
				return nodes
			}
			if time.Now().After(deadline) {
				t.Fatalf("node group ng-a has %d node(s), %d Ready; want %d", len(nodes), ready, want)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	for _, n := range groupNodes(2) {
		if n.Spec.ProviderID != "aws:///us-east-1a/i-"+n.Name || n.Labels["team"] != "web" || n.Labels["eks.amazonaws.com/capacityType"] != "SPOT" ||
			n.Labels["node.kubernetes.io/instance-type"] != "m6i.large" || len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Effect != corev1.TaintEffectNoSchedule {
			t.Fatalf("node %s: providerID %s labels %v taints %v", n.Name, n.Spec.ProviderID, n.Labels, n.Spec.Taints)
		}
	}
	scale := func(desired int32) {
		t.Helper()
		u := ok[*eks.UpdateNodegroupConfigOutput](t)(kc.UpdateNodegroupConfig(ctx, &eks.UpdateNodegroupConfigInput{ClusterName: aws.String(name), NodegroupName: aws.String("ng-a"),
			ScalingConfig: &ekstypes.NodegroupScalingConfig{DesiredSize: aws.Int32(desired)}})).Update
		waitUpdate(t, kc, name, aws.ToString(u.Id), "ng-a", "")
		groupNodes(int(desired))
	}
	scale(3)
	scale(1)
	_, err = kc.UpdateNodegroupConfig(ctx, &eks.UpdateNodegroupConfigInput{ClusterName: aws.String(name), NodegroupName: aws.String("ng-a"),
		ScalingConfig: &ekstypes.NodegroupScalingConfig{DesiredSize: aws.Int32(9)}})
	var inval *ekstypes.InvalidParameterException
	if !errors.As(err, &inval) || !strings.Contains(err.Error(), "greater than maximum") {
		t.Fatalf("scaling past maxSize: %v", err)
	}

	// Add-ons at the default version for 1.35, a control plane upgrade, tags.
	addon := ok[*eks.CreateAddonOutput](t)(kc.CreateAddon(ctx, &eks.CreateAddonInput{ClusterName: aws.String(name), AddonName: aws.String("coredns")})).Addon
	if aws.ToString(addon.AddonVersion) != "v1.12.4-eksbuild.1" {
		t.Fatalf("coredns default for 1.35: %s", aws.ToString(addon.AddonVersion))
	}
	if err := eks.NewAddonActiveWaiter(kc, func(o *eks.AddonActiveWaiterOptions) { o.MinDelay, o.MaxDelay = time.Second, 2*time.Second }).
		Wait(ctx, &eks.DescribeAddonInput{ClusterName: aws.String(name), AddonName: aws.String("coredns")}, time.Minute); err != nil {
		t.Fatal(err)
	}
	up := ok[*eks.UpdateClusterVersionOutput](t)(kc.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String(name), Version: aws.String("1.36")})).Update
	waitUpdate(t, kc, name, aws.ToString(up.Id), "", "")
	if v := aws.ToString(waitActive().Version); v != "1.36" {
		t.Fatalf("version after the upgrade: %s", v)
	}
	nv := ok[*eks.UpdateNodegroupVersionOutput](t)(kc.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: aws.String(name), NodegroupName: aws.String("ng-a")})).Update
	waitUpdate(t, kc, name, aws.ToString(nv.Id), "ng-a", "")
	if v := aws.ToString(ok[*eks.DescribeNodegroupOutput](t)(kc.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(name), NodegroupName: aws.String("ng-a")})).Nodegroup.Version); v != "1.36" {
		t.Fatalf("node group version after its update: %s", v)
	}
	lu := ok[*eks.UpdateClusterConfigOutput](t)(kc.UpdateClusterConfig(ctx, &eks.UpdateClusterConfigInput{Name: aws.String(name),
		Logging: &ekstypes.Logging{ClusterLogging: []ekstypes.LogSetup{{Types: []ekstypes.LogType{ekstypes.LogTypeApi, ekstypes.LogTypeAudit}, Enabled: aws.Bool(true)}}}})).Update
	waitUpdate(t, kc, name, aws.ToString(lu.Id), "", "")
	eu := ok[*eks.UpdateClusterConfigOutput](t)(kc.UpdateClusterConfig(ctx, &eks.UpdateClusterConfigInput{Name: aws.String(name),
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{EndpointPrivateAccess: aws.Bool(true)}})).Update
	waitUpdate(t, kc, name, aws.ToString(eu.Id), "", "")
	c = waitActive()
	if !aws.ToBool(c.Logging.ClusterLogging[0].Enabled) || len(c.Logging.ClusterLogging[0].Types) != 2 || !c.ResourcesVpcConfig.EndpointPrivateAccess {
		t.Fatalf("logging %+v, private endpoint %v after the config updates", c.Logging.ClusterLogging, c.ResourcesVpcConfig.EndpointPrivateAccess)
	}
	if ids := ok[*eks.ListUpdatesOutput](t)(kc.ListUpdates(ctx, &eks.ListUpdatesInput{Name: aws.String(name)})).UpdateIds; len(ids) != 3 {
		t.Fatalf("cluster updates: %v", ids)
	}
	ok[*eks.CreateAddonOutput](t)(kc.CreateAddon(ctx, &eks.CreateAddonInput{ClusterName: aws.String(name), AddonName: aws.String("vpc-cni"), AddonVersion: aws.String("v1.19.6-eksbuild.7")}))
	if err := eks.NewAddonActiveWaiter(kc, func(o *eks.AddonActiveWaiterOptions) { o.MinDelay, o.MaxDelay = time.Second, 2*time.Second }).
		Wait(ctx, &eks.DescribeAddonInput{ClusterName: aws.String(name), AddonName: aws.String("vpc-cni")}, time.Minute); err != nil {
		t.Fatal(err)
	}
	au := ok[*eks.UpdateAddonOutput](t)(kc.UpdateAddon(ctx, &eks.UpdateAddonInput{ClusterName: aws.String(name), AddonName: aws.String("vpc-cni"), AddonVersion: aws.String("v1.20.4-eksbuild.2")})).Update
	waitUpdate(t, kc, name, aws.ToString(au.Id), "", "vpc-cni")
	if v := aws.ToString(ok[*eks.DescribeAddonOutput](t)(kc.DescribeAddon(ctx, &eks.DescribeAddonInput{ClusterName: aws.String(name), AddonName: aws.String("vpc-cni")})).Addon.AddonVersion); v != "v1.20.4-eksbuild.2" {
		t.Fatalf("vpc-cni after its update: %s", v)
	}
	if as := ok[*eks.ListAddonsOutput](t)(kc.ListAddons(ctx, &eks.ListAddonsInput{ClusterName: aws.String(name)})).Addons; len(as) != 2 {
		t.Fatalf("add-ons: %v", as)
	}
	if cv := ok[*eks.DescribeClusterVersionsOutput](t)(kc.DescribeClusterVersions(ctx, &eks.DescribeClusterVersionsInput{})).ClusterVersions; len(cv) != len(awsemu.EKSVersions) || !cv[0].DefaultVersion {
		t.Fatalf("cluster versions: %+v", cv)
	}
	if cl := ok[*eks.ListClustersOutput](t)(kc.ListClusters(ctx, &eks.ListClustersInput{})).Clusters; len(cl) != 1 || cl[0] != name {
		t.Fatalf("clusters: %v", cl)
	}
	ok[*eks.TagResourceOutput](t)(kc.TagResource(ctx, &eks.TagResourceInput{ResourceArn: c.Arn, Tags: map[string]string{"team": "web", "tmp": "x"}}))
	ok[*eks.UntagResourceOutput](t)(kc.UntagResource(ctx, &eks.UntagResourceInput{ResourceArn: c.Arn, TagKeys: []string{"tmp"}}))
	if tags := ok[*eks.ListTagsForResourceOutput](t)(kc.ListTagsForResource(ctx, &eks.ListTagsForResourceInput{ResourceArn: c.Arn})).Tags; len(tags) != 2 || tags["team"] != "web" {
		t.Fatalf("tags: %v", tags)
	}

	// The emulator restarts (same port: the control plane's webhook points there) with everything.
	ok[string](t)(nuv(t, "emulator", "down"))
	if _, err := kc.ListClusters(ctx, &eks.ListClustersInput{}); err == nil {
		t.Fatal("the emulator still answers after down")
	}
	ok[string](t)(nuv(t, "emulator", "up"))
	if ngs := ok[*eks.ListNodegroupsOutput](t)(kc.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: aws.String(name)})).Nodegroups; len(ngs) != 1 {
		t.Fatalf("node groups after restart: %v", ngs)
	}
	// A fresh token (the API server caches accepted ones for 30s): the restarted webhook validates it.
	fresh := rest.CopyConfig(rc)
	fresh.ExecProvider, fresh.BearerToken = nil, ok[eksauth.Token](t)(eksauth.NewToken(ctx, cfg, name)).Token
	if _, err := kubernetes.NewForConfigOrDie(fresh).CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("the cluster after the emulator's restart: %v", err)
	}

	// Deleting: refused while a node group exists, then node group, add-on and cluster go.
	_, err = kc.DeleteCluster(ctx, &eks.DeleteClusterInput{Name: aws.String(name)})
	if !errors.As(err, &inUse) {
		t.Fatalf("DeleteCluster with a node group: %v, want ResourceInUseException", err)
	}
	ok[*eks.DeleteNodegroupOutput](t)(kc.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: aws.String(name), NodegroupName: aws.String("ng-a")}))
	if err := eks.NewNodegroupDeletedWaiter(kc, func(o *eks.NodegroupDeletedWaiterOptions) { o.MinDelay, o.MaxDelay = time.Second, 2*time.Second }).
		Wait(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(name), NodegroupName: aws.String("ng-a")}, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	groupNodes(0)
	for _, a := range []string{"coredns", "vpc-cni"} {
		ok[*eks.DeleteAddonOutput](t)(kc.DeleteAddon(ctx, &eks.DeleteAddonInput{ClusterName: aws.String(name), AddonName: aws.String(a)}))
		if err := eks.NewAddonDeletedWaiter(kc, func(o *eks.AddonDeletedWaiterOptions) { o.MinDelay, o.MaxDelay = time.Second, 2*time.Second }).
			Wait(ctx, &eks.DescribeAddonInput{ClusterName: aws.String(name), AddonName: aws.String(a)}, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	t1 := time.Now()
	ok[*eks.DeleteClusterOutput](t)(kc.DeleteCluster(ctx, &eks.DeleteClusterInput{Name: aws.String(name)}))
	if err := eks.NewClusterDeletedWaiter(kc, func(o *eks.ClusterDeletedWaiterOptions) { o.MinDelay, o.MaxDelay = time.Second, 2*time.Second }).
		Wait(ctx, &eks.DescribeClusterInput{Name: aws.String(name)}, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("EKS cluster deleted in %.1fs", time.Since(t1).Seconds())
	if _, err := os.Stat(localkube.StateDir(emuDir, awsemu.LocalName(name))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the control plane's state is still there: %v", err)
	}
	if _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		t.Fatal("the deleted cluster's endpoint still answers")
	}
	sgs := ok[*ec2.DescribeSecurityGroupsOutput](t)(ec.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})).SecurityGroups
	if len(sgs) != 1 { // the VPC's default group; the cluster security group went with the cluster
		t.Fatalf("security groups left: %d", len(sgs))
	}

	// The aws CLI sees the same emulator.
	if _, err := exec.LookPath("aws"); err != nil {
		t.Fatal("the aws CLI is needed (hack/test.sh installs it)")
	}
	out, err := exec.Command("aws", "eks", "list-clusters", "--endpoint-url", endpoint, "--output", "text").CombinedOutput()
	if err != nil || strings.Contains(string(out), name) {
		t.Fatalf("aws eks list-clusters: %v %s", err, out)
	}
}

// waitUpdate polls DescribeUpdate until the update succeeded.
func waitUpdate(t testing.TB, kc *eks.Client, cluster, id, ng, addon string) {
	t.Helper()
	in := &eks.DescribeUpdateInput{Name: aws.String(cluster), UpdateId: aws.String(id)}
	if ng != "" {
		in.NodegroupName = aws.String(ng)
	}
	if addon != "" {
		in.AddonName = aws.String(addon)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		u, err := kc.DescribeUpdate(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		switch u.Update.Status {
		case ekstypes.UpdateStatusSuccessful:
			return
		case ekstypes.UpdateStatusFailed, ekstypes.UpdateStatusCancelled:
			t.Fatalf("update %s: %s %+v", id, u.Update.Status, u.Update.Errors)
		}
		if time.Now().After(deadline) {
			t.Fatalf("update %s still %s", id, u.Update.Status)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

package allkubes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	acs "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/nuv-dev/nuv/internal/cluster/gke"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	emulator "github.com/nuv-dev/nuv/internal/emulator/aws"
	"github.com/nuv-dev/nuv/internal/emulator/azure"
	"github.com/nuv-dev/nuv/internal/emulator/gcp"
	"github.com/nuv-dev/nuv/internal/report"
)

// The four clusters of the four-cloud matrix, each as small as its cloud allows: a local cluster
// of 1 node, an EKS cluster with one managed node group of 2, an AKS cluster with one system pool
// of 1 and a zonal GKE cluster with one node pool of 1. The cloud ones are what a user of each
// cloud writes (region, VM size or machine type); the emulators make them real control planes.
const fourCloudsSpecs = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: m-local}
spec:
  provider: local
  nodeGroups:
  - {name: workers, count: 1}
---
apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: m-eks}
spec:
  provider: eks
  region: us-east-1
  kubernetesVersion: "1.35"
  nodeGroups:
  - {name: workers, count: 2, instanceType: m6i.large}
  eks: {nat: none}
---
apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: m-aks}
spec:
  provider: aks
  region: eastus
  kubernetesVersion: "1.35"
  nodeGroups:
  - {name: system, count: 1, instanceType: Standard_D2s_v3}
  aks: {resourceGroup: m-aks-rg}
---
apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: m-gke}
spec:
  provider: gke
  kubernetesVersion: "1.35"
  nodeGroups:
  - {name: workers, count: 1, instanceType: e2-standard-2}
  gke: {project: nuv-emulator, location: us-central1-a}
`

// fourCloudTypes is each cluster's expected type, and the emulator its cell must name.
var fourCloudTypes = []struct{ name, typ, emulated string }{
	{"m-local", "local", ""},
	{"m-eks", "eks", "aws"},
	{"m-aks", "aks", "azure"},
	{"m-gke", "gke", "gcp"},
}

// clouds is a NUV_HOME with nuv's three cloud emulators running on free loopback ports, a project
// that deploys the repository's operator, and the nuv binary the commands run as.
type clouds struct {
	t       testing.TB
	exe     string
	home    string
	project string
	env     []string          // the children's environment (emulator env included)
	vars    map[string]string // what `nuv emulator env` printed
}

// startClouds starts the three emulators (`nuv emulator up`) with a short operation delay and
// reads `nuv emulator env`; cleanup deletes whatever cluster is left, then stops them.
func startClouds(t testing.TB, exe string) *clouds {
	t.Helper()
	home := t.TempDir()
	c := &clouds{t: t, exe: exe, home: home, project: testProject(t, nil)}
	c.env = []string{"NUV_HOME=" + home, "NUV_PROJECT=" + c.project,
		"NUV_EMULATOR_PORT=" + freePort(t), "NUV_AZURE_EMULATOR_PORT=" + freePort(t), "NUV_EMULATOR_GCP_PORT=" + freePort(t),
		"NUV_EMULATOR_DELAY=200ms",
		// nothing of the machine's own cloud configuration, selection or shell
		"AWS_CONFIG_FILE=" + filepath.Join(home, "no-aws-config"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "no-aws-credentials"),
		"AWS_PROFILE=", "AWS_SESSION_TOKEN=", "AWS_EC2_METADATA_DISABLED=true", "CLOUDSDK_CONFIG=" + filepath.Join(home, "gcloud"),
		"AZURE_CONFIG_DIR=" + filepath.Join(home, "azure"),
		"KUBECONFIG=", "NUV_CLUSTER=", "KUBE=", "DETECT_FORCE=", "WHISK=", "WHISK_STORAGE_CLASS=", "MY_OPERATOR_IMAGE=", "TAG="}
	t.Cleanup(func() {
		for _, k := range fourCloudTypes {
			if _, err := os.Stat(filepath.Join(c.project, "clusters", k.name+".kubeconfig")); err == nil {
				c.nuv("cluster", "delete", "--yes", k.name)
			}
		}
		c.nuv("emulator", "down")
		// Control planes an unfinished test left behind the emulators.
		for _, dir := range c.emulatorDirs() {
			p := local.Provider{Home: dir, Project: dir}
			names, err := p.Names()
			if err != nil {
				t.Errorf("clean-up: list control planes of %s: %v", dir, err)
			}
			for _, n := range names {
				t.Logf("removing leftover control plane %s of %s", n, dir)
				if err := p.Delete(context.Background(), n); err != nil {
					t.Errorf("clean-up: delete control plane %s of %s: %v", n, dir, err)
				}
			}
		}
	})
	c.must("emulator", "up")
	out := c.must("emulator", "env")
	c.vars = map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if kv, ok := strings.CutPrefix(sc.Text(), "export "); ok {
			k, v, _ := strings.Cut(kv, "=")
			c.vars[k] = v
			c.env = append(c.env, kv)
		}
	}
	for _, k := range []string{"AWS_ENDPOINT_URL", "NUV_AZURE_RESOURCE_MANAGER", gke.EndpointEnv} {
		if c.vars[k] == "" {
			t.Fatalf("`nuv emulator env` printed no %s:\n%s", k, out)
		}
	}
	return c
}

// emulatorDirs are where the AWS, Azure and GKE emulators keep the local control planes of their
// clusters (the homes of their local providers).
func (c *clouds) emulatorDirs() []string {
	aws := emulator.Dir(c.home)
	return []string{aws, azure.Dir(c.home), filepath.Join(gcp.Dir(aws), "clusters")}
}

// nuv runs one nuv command in the project; it does not fail the test.
func (c *clouds) nuv(args ...string) (string, int) {
	cmd := exec.Command(c.exe, args...)
	cmd.Dir = c.project
	cmd.Env = append(os.Environ(), c.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Errorf("nuv %s: %v", strings.Join(args, " "), err)
		code = -1
	}
	return out.String(), code
}

// must runs one nuv command and fails the test unless it exits 0.
func (c *clouds) must(args ...string) string {
	c.t.Helper()
	out, code := c.nuv(args...)
	if code != 0 {
		c.t.Fatalf("nuv %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// writeSpecs writes the four clusters' spec file into the project.
func (c *clouds) writeSpecs() string {
	f := filepath.Join(c.project, "clusters", "specs", "matrix.yaml")
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte(fourCloudsSpecs), 0o644); err != nil {
		c.t.Fatal(err)
	}
	return f
}

// applyAll runs `nuv cluster apply -f F --only NAME` for the four clusters at once (the engine
// locks each cluster on its own, so independent clusters are created in parallel) and returns how
// long each took.
func (c *clouds) applyAll(f string) map[string]time.Duration {
	c.t.Helper()
	took := map[string]time.Duration{}
	outs := map[string]string{}
	codes := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, k := range fourCloudTypes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			out, code := c.nuv("cluster", "apply", "--yes", "-f", f, "--only", k.name)
			mu.Lock()
			took[k.name], outs[k.name], codes[k.name] = time.Since(t0), out, code
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, k := range fourCloudTypes {
		c.t.Logf("nuv cluster apply --only %s (%.1fs): exit %d\n%s", k.name, took[k.name].Seconds(), codes[k.name], outs[k.name])
		if codes[k.name] != 0 {
			c.t.Fatalf("apply of %s failed", k.name)
		}
	}
	return took
}

// leftovers lists what any emulator still holds after the deletes: EKS clusters and resources
// tagged nuv.dev/cluster in the AWS emulator, resource groups and managed clusters in the Azure
// one, clusters in the GKE one, and the control planes behind any of them.
func (c *clouds) leftovers() []string {
	c.t.Helper()
	ctx := context.Background()
	var out []string
	// AWS
	awsCfg := aws.Config{Region: c.vars["AWS_REGION"], BaseEndpoint: aws.String(c.vars["AWS_ENDPOINT_URL"]),
		Credentials: credentials.NewStaticCredentialsProvider(c.vars["AWS_ACCESS_KEY_ID"], c.vars["AWS_SECRET_ACCESS_KEY"], "")}
	cls, err := eks.NewFromConfig(awsCfg).ListClusters(ctx, &eks.ListClustersInput{})
	if err != nil {
		c.t.Fatalf("AWS emulator: list EKS clusters: %v", err)
	}
	for _, n := range cls.Clusters {
		out = append(out, "aws eks-cluster "+n)
	}
	tags, err := ec2.NewFromConfig(awsCfg).DescribeTags(ctx, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{{Name: aws.String("key"), Values: []string{"nuv.dev/cluster"}}}})
	if err != nil {
		c.t.Fatalf("AWS emulator: describe tags: %v", err)
	}
	for _, tg := range tags.Tags {
		out = append(out, "aws "+string(tg.ResourceType)+" "+aws.ToString(tg.ResourceId))
	}
	// Azure, with exactly what `nuv emulator env` printed
	hc, err := azure.Client(filepath.Dir(c.vars["NUV_AZURE_CA_FILE"]))
	if err != nil {
		c.t.Fatal(err)
	}
	ep := c.vars["NUV_AZURE_RESOURCE_MANAGER"]
	co := azcore.ClientOptions{Transport: hc, Cloud: cloud.Configuration{ActiveDirectoryAuthorityHost: c.vars["AZURE_AUTHORITY_HOST"],
		Services: map[cloud.ServiceName]cloud.ServiceConfiguration{cloud.ResourceManager: {Endpoint: ep, Audience: ep}}}}
	cred, err := azidentity.NewClientSecretCredential(c.vars["AZURE_TENANT_ID"], c.vars["AZURE_CLIENT_ID"], c.vars["AZURE_CLIENT_SECRET"],
		&azidentity.ClientSecretCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: true})
	if err != nil {
		c.t.Fatal(err)
	}
	sub := c.vars["AZURE_SUBSCRIPTION_ID"]
	groups, err := armresources.NewResourceGroupsClient(sub, cred, &arm.ClientOptions{ClientOptions: co})
	if err != nil {
		c.t.Fatal(err)
	}
	for pg := groups.NewListPager(nil); pg.More(); {
		page, err := pg.NextPage(ctx)
		if err != nil {
			c.t.Fatalf("Azure emulator: list resource groups: %v", err)
		}
		for _, g := range page.Value {
			out = append(out, "azure resource-group "+*g.Name)
		}
	}
	mcs, err := acs.NewManagedClustersClient(sub, cred, &arm.ClientOptions{ClientOptions: co})
	if err != nil {
		c.t.Fatal(err)
	}
	for pg := mcs.NewListPager(nil); pg.More(); {
		page, err := pg.NextPage(ctx)
		if err != nil {
			c.t.Fatalf("Azure emulator: list managed clusters: %v", err)
		}
		for _, m := range page.Value {
			out = append(out, "azure managed-cluster "+*m.Name)
		}
	}
	// GKE, through the Go client with the emulator's ADC
	conn, err := gke.Connect(ctx, func(k string) string { return c.vars[k] })
	if err != nil {
		c.t.Fatalf("GKE emulator: %v", err)
	}
	defer conn.Client.Close()
	l, err := conn.Client.ListClusters(ctx, &containerpb.ListClustersRequest{Parent: "projects/" + c.vars["CLOUDSDK_CORE_PROJECT"] + "/locations/-"})
	if err != nil {
		c.t.Fatalf("GKE emulator: list clusters: %v", err)
	}
	for _, gc := range l.Clusters {
		out = append(out, "gcp cluster "+gc.Name)
	}
	// The control planes behind them
	for _, dir := range c.emulatorDirs() {
		names, err := (&local.Provider{Home: dir, Project: dir}).Names()
		if err != nil {
			c.t.Fatalf("control planes under %s: %v", dir, err)
		}
		for _, n := range names {
			out = append(out, "control plane "+n+" under "+dir)
		}
	}
	sort.Strings(out)
	return out
}

// matrixRun is one `nuv all-kubes -- dtest` over the four clusters: its wall time and report.
type matrixRun struct {
	wall   time.Duration
	dir    string
	report *report.Report
}

// allKubesDtest runs `nuv all-kubes -- dtest` and reads its report (failing unless it exits 0).
func (c *clouds) allKubesDtest() matrixRun {
	c.t.Helper()
	t0 := time.Now()
	out, code := c.nuv("all-kubes", "--timeout", "5m", "--", "dtest")
	wall := time.Since(t0)
	c.t.Logf("nuv all-kubes -- dtest (%.1fs): exit %d\n%s", wall.Seconds(), code, out)
	m := reportLine.FindStringSubmatch(out)
	if code != 0 || m == nil {
		c.t.Fatalf("all-kubes -- dtest: exit %d, report line %v", code, m)
	}
	b, err := os.ReadFile(filepath.Join(m[1], report.JSONFile))
	if err != nil {
		c.t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		c.t.Fatalf("report.json: %v", err)
	}
	return matrixRun{wall: wall, dir: m[1], report: &r}
}

// TestIntegrationAllKubesFourClouds is issue 13's matrix: nuv's AWS, Azure and GKE emulators on
// free loopback ports, one local, one EKS, one AKS and one GKE cluster created from one spec file
// by `nuv cluster apply -f` (in parallel), `nuv kube list` detecting local, eks, aks and gke,
// `nuv all-kubes -- dtest` deploying the operator and each type's instance file on all four, one
// report of four passed cells each naming its type and, for the cloud ones, the emulator that made
// it; then `nuv cluster delete` of all four and nothing left in any emulator.
func TestIntegrationAllKubesFourClouds(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three cloud emulators and four control planes; skipped under -short")
	}
	c := startClouds(t, buildNuv(t))
	f := c.writeSpecs()
	plan := c.must("cluster", "plan", "-f", f)
	for _, k := range fourCloudTypes {
		if !strings.Contains(plan, k.name) {
			t.Fatalf("the plan of the four new clusters does not name %s:\n%s", k.name, plan)
		}
	}
	c.applyAll(f)

	list := c.must("kube", "list", "--timeout", "15s") // detection: a loaded machine answers slower than the daily 1 s
	t.Logf("nuv kube list:\n%s", list)
	for _, k := range fourCloudTypes {
		m := regexp.MustCompile(`(?m)^\s*\*?\s*\d+\s+` + regexp.QuoteMeta(k.name) + `\s+(\S+)`).FindStringSubmatch(list)
		if m == nil || m[1] != k.typ {
			t.Errorf("kube list: %s detected as %v, want %s", k.name, m, k.typ)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	r := c.allKubesDtest()
	checkReport(t, r.dir, []string{"m-local", "m-eks", "m-aks", "m-gke"})
	cells := byCluster(r.report)
	table, err := os.ReadFile(filepath.Join(r.dir, report.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range fourCloudTypes {
		x, ok := cells[k.name]
		if !ok {
			t.Errorf("no cell for %s", k.name)
			continue
		}
		if x.Status != report.Passed || x.Type != k.typ || x.Platform == nil {
			t.Errorf("cell %s: %s type %s platform %+v: %s", k.name, x.Status, x.Type, x.Platform, x.Message)
			continue
		}
		wantProvider, wantSource := k.typ, k.typ+" emulated by "+k.emulated
		if k.emulated == "" {
			wantProvider, wantSource = "local", "local"
		}
		if x.Platform.Provider != wantProvider || x.Platform.Emulated != k.emulated || x.Platform.Source() != wantSource {
			t.Errorf("cell %s ran on %q (provider %q, emulated %q), want %q", k.name, x.Platform.Source(), x.Platform.Provider, x.Platform.Emulated, wantSource)
		}
		if k.emulated != "" && !strings.Contains(string(table), wantSource) {
			t.Errorf("index.html does not say %q", wantSource)
		}
		// the operator deployed and the instance file of the cell's type applied
		var phases []string
		for _, s := range x.Steps {
			phases = append(phases, s.Name+":"+string(s.Status))
		}
		if got := strings.Join(phases, " "); !strings.Contains(got, "operator:passed") || !strings.Contains(got, "instance:passed") {
			t.Errorf("cell %s: dtest phases %s, want the operator and the instance passed", k.name, got)
		}
		log, err := os.ReadFile(filepath.Join(r.dir, x.Log))
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join("tests", k.typ, "whisk.yaml"); !strings.Contains(string(log), want) {
			t.Errorf("cell %s: its log does not name %s (the instance file of type %s):\n%s", k.name, want, k.typ, log)
		}
	}

	for _, k := range fourCloudTypes {
		c.must("cluster", "delete", "--yes", k.name)
	}
	if left := c.leftovers(); len(left) > 0 {
		t.Fatalf("left in the emulators after deleting the four clusters:\n%s", strings.Join(left, "\n"))
	}
}

// freePort is a loopback port free now (the emulator that is given it binds it shortly after).
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

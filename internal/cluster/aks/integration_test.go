package aks_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	acs "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/aks"
	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/emulator/azure"
	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// azureEnv serves an Azure emulator (real local clusters behind its managed clusters) for the
// test and returns the environment that points the provider at it.
func azureEnv(t testing.TB) (map[string]string, *azure.Server, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs local control planes behind the emulated AKS clusters; skipped under -short")
	}
	return serveEmulator(t)
}

// serveEmulator serves an Azure emulator for a test that makes no managed cluster.
func serveEmulator(t testing.TB) (map[string]string, *azure.Server, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := azure.New(azure.Options{Dir: dir, Delay: 300 * time.Millisecond, Log: localtest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	addr := clustertest.Serve(t, func(ctx context.Context, ln net.Listener) error { return azure.Serve(ctx, ln, s) })
	t.Cleanup(func() { // before the emulator stops: whatever a failed test left behind its clusters
		b := azure.NewLocalBackend(dir, nil)
		names, err := b.Provider.Names()
		if err != nil {
			t.Errorf("clean-up: list control planes: %v", err)
		}
		for _, n := range names {
			if err := b.Delete(context.Background(), n); err != nil {
				t.Errorf("clean-up: delete control plane %s: %v", n, err)
			}
		}
	})
	p := azure.Process{Addr: addr, Dir: dir}
	env := map[string]string{}
	for _, kv := range azure.Env(p, s.Credentials()) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env, s, p.URL()
}

func aksSpec(userCount int, version, userSize string) string {
	return `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: az1}
spec:
  provider: aks
  region: eastus
  kubernetesVersion: "` + version + `"
  nodeGroups:
  - {name: system, count: 1, instanceType: Standard_D2s_v3}
  - name: user
    count: ` + itoa(userCount) + `
    instanceType: ` + userSize + `
    labels: {tier: app}
    taints: ["dedicated=app:NoSchedule"]
  aks: {resourceGroup: az1-rg, networkPlugin: azure}
`
}

func itoa(i int) string { return string(rune('0' + i)) }

func decode(t testing.TB, body string) *spec.Cluster {
	t.Helper()
	cs, err := spec.Decode("aks.yaml", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return cs[0]
}

func planText(p *cluster.Plan) string {
	var b bytes.Buffer
	engine.WritePlan(&b, p)
	return b.String()
}

// nodes lists "name pool providerID-prefix" of the cluster behind kubeconfig.
func nodes(t *testing.T, kubeconfig string) []string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	l, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range l.Items {
		if !strings.HasPrefix(n.Spec.ProviderID, "azure:///subscriptions/") || n.Labels["kubernetes.azure.com/cluster"] == "" {
			t.Errorf("node %s: providerID %q, labels %v: not an AKS node", n.Name, n.Spec.ProviderID, n.Labels)
		}
		out = append(out, n.Labels["kubernetes.azure.com/agentpool"]+":"+n.Labels["node.kubernetes.io/instance-type"]+":"+n.Labels["tier"])
	}
	sort.Strings(out)
	return out
}

// TestIntegrationLifecycle is the kOps-style lifecycle of an AKS cluster against the emulator:
// plan, an interrupted create resumed, plan with no changes, scale a pool, a failure in the middle
// of a long-running operation surfaced and resumed, an upgrade, bad input refused at plan time,
// delete, nothing left.
func TestIntegrationLifecycle(t *testing.T) {
	env, srv, url := azureEnv(t)
	project := t.TempDir()
	p := &aks.Provider{Project: project, Log: localtest.Logger(t), Getenv: func(k string) string { return env[k] }, Poll: 200 * time.Millisecond}
	e := &engine.Engine{Providers: map[string]cluster.Provider{"aks": p}, Store: state.Dir{Path: filepath.Join(t.TempDir(), "state")}}
	ctx := context.Background()

	c := decode(t, aksSpec(1, "1.35", "Standard_D4s_v3"))
	plan, err := e.Plan(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, ch := range plan.Changes {
		keys = append(keys, string(ch.Action)+" "+ch.Key)
	}
	if got, want := strings.Join(keys, "; "), "create resource-group/az1-rg; create managed-cluster/az1; create agent-pool/user; create kubeconfig/az1"; got != want {
		t.Fatalf("plan of a new cluster:\n%s\nwant %s", planText(plan), want)
	}

	// A create interrupted after the managed cluster (step 2) is finished by the next apply.
	actx, cancel := context.WithCancel(ctx)
	e.AfterStep = func(step int, ch cluster.Change) {
		if step == 2 {
			cancel()
		}
	}
	if _, err := e.Apply(actx, c, engine.ApplyOptions{}); err == nil {
		t.Fatal("the interrupted apply succeeded")
	}
	e.AfterStep = nil
	rec, err := e.Store.Load(ctx, "az1")
	if err != nil || rec.Phase != state.CreationFailed && rec.Phase != state.Creating {
		t.Fatalf("record after the interruption: %+v, %v", rec, err)
	}
	plan, err = e.Apply(ctx, c, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Count(cluster.Create) != 2 || plan.Count(cluster.Replace) != 0 {
		t.Fatalf("the resumed apply should create the pool and kubeconfig only:\n%s", planText(plan))
	}
	kc := filepath.Join(project, "clusters", "az1.kubeconfig")
	if st, err := os.Stat(kc); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig %s: %v %v", kc, st, err)
	}
	if got := strings.Join(nodes(t, kc), " "); got != "system:Standard_D2s_v3: user:Standard_D4s_v3:app" {
		t.Fatalf("nodes: %s", got)
	}

	plan, err = e.Plan(ctx, c)
	if err != nil || !plan.Empty() {
		t.Fatalf("plan after apply: %v\n%s", err, planText(plan))
	}

	// Scale the user pool: the plan shows exactly that.
	c = decode(t, aksSpec(3, "1.35", "Standard_D4s_v3"))
	plan, err = e.Plan(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if got := planText(plan); len(plan.Changes) != 1 || !strings.Contains(got, "agent-pool/user") || !strings.Contains(got, "count: 1 -> 3") {
		t.Fatalf("plan of a scale:\n%s", got)
	}

	// A failure in the middle of the pool's operation is surfaced with the operation named...
	postFault(t, env, url, `{"operation":"AgentPools_CreateOrUpdate","kind":"lro-failure","count":1}`)
	_, err = e.Apply(ctx, c, engine.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "AgentPools_CreateOrUpdate") || !strings.Contains(err.Error(), "injected failure in the middle") {
		t.Fatalf("apply with a failing operation: %v", err)
	}
	// ... and the next apply resumes it.
	plan, err = e.Apply(ctx, c, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := planText(plan); !strings.Contains(got, "state: Failed -> Succeeded") {
		t.Fatalf("the apply after the failure:\n%s", got)
	}
	if got := strings.Join(nodes(t, kc), " "); got != "system:Standard_D2s_v3: user:Standard_D4s_v3:app user:Standard_D4s_v3:app user:Standard_D4s_v3:app" {
		t.Fatalf("nodes after scaling: %s", got)
	}

	// Upgrade: the control plane and the pools.
	c = decode(t, aksSpec(3, "1.36", "Standard_D4s_v3"))
	plan, err = e.Apply(ctx, c, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := planText(plan); !strings.Contains(got, "version: 1.35 -> 1.36") {
		t.Fatalf("upgrade plan:\n%s", got)
	}
	if plan, err = e.Plan(ctx, c); err != nil || !plan.Empty() {
		t.Fatalf("plan after the upgrade: %v\n%s", err, planText(plan))
	}

	// A VM size is fixed on a pool: the plan replaces the pool, the apply makes it again.
	c = decode(t, aksSpec(2, "1.36", "Standard_D8s_v3"))
	plan, err = e.Apply(ctx, c, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := planText(plan); len(plan.Changes) != 1 || !strings.Contains(got, "-/+ replace agent-pool/user") || !strings.Contains(got, "vmSize: Standard_D4s_v3 -> Standard_D8s_v3") {
		t.Fatalf("plan of a new VM size:\n%s", got)
	}
	if got := strings.Join(nodes(t, kc), " "); got != "system:Standard_D2s_v3: user:Standard_D8s_v3:app user:Standard_D8s_v3:app" {
		t.Fatalf("nodes after the replacement: %s", got)
	}

	// What the service does not offer is refused at plan time, with the field path.
	for _, tc := range []struct{ body, want string }{
		{aksSpec(2, "1.20", "Standard_D8s_v3"), "spec.kubernetesVersion"},
		{aksSpec(2, "1.36", "Standard_Z99"), "spec.nodeGroups[1].instanceType"},
		{strings.Replace(aksSpec(2, "1.36", "Standard_D8s_v3"), "eastus", "atlantis", 1), "spec.region"},
		{strings.Replace(aksSpec(2, "1.36", "Standard_D8s_v3"), "region: eastus", "region: westus\n  zones: [\"1\"]", 1), "spec.zones[0]"},
	} {
		_, err := e.Plan(ctx, decode(t, tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "aks.yaml:") {
			t.Errorf("plan of a spec with a bad %s: %v", tc.want, err)
		}
	}

	if _, err := e.Delete(ctx, "az1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kc); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("kubeconfig left: %v", err)
	}
	left, err := p.Observe(ctx, c, nil)
	if err != nil || len(left) > 0 {
		t.Errorf("left after delete: %v %v", left, err)
	}
	_ = srv
}

func caDir(env map[string]string) string { return filepath.Dir(env["NUV_AZURE_CA_FILE"]) }

func postFault(t *testing.T, env map[string]string, url, body string) {
	t.Helper()
	hc, err := azure.Client(caDir(env))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(adminRequest(t, env, url, http.MethodPost, strings.NewReader(body)))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("inject fault %s: %v %v", body, resp, err)
	}
	resp.Body.Close()
}

// groupsClient is an SDK client of the emulator's resource groups, as another Azure user.
func groupsClient(t *testing.T, env map[string]string) *armresources.ResourceGroupsClient {
	t.Helper()
	cred, opts := sdkClient(t, env)
	g, err := armresources.NewResourceGroupsClient(env["AZURE_SUBSCRIPTION_ID"], cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// clustersClient is an SDK client of the emulator's managed clusters, as another Azure user.
func clustersClient(t *testing.T, env map[string]string) *acs.ManagedClustersClient {
	t.Helper()
	cred, opts := sdkClient(t, env)
	c, err := acs.NewManagedClustersClient(env["AZURE_SUBSCRIPTION_ID"], cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func sdkClient(t *testing.T, env map[string]string) (azcore.TokenCredential, *arm.ClientOptions) {
	t.Helper()
	hc, err := azure.Client(caDir(env))
	if err != nil {
		t.Fatal(err)
	}
	cfg := cloud.Configuration{ActiveDirectoryAuthorityHost: env["AZURE_AUTHORITY_HOST"],
		Services: map[cloud.ServiceName]cloud.ServiceConfiguration{cloud.ResourceManager: {Endpoint: env["NUV_AZURE_RESOURCE_MANAGER"], Audience: env["NUV_AZURE_RESOURCE_MANAGER"]}}}
	co := azcore.ClientOptions{Cloud: cfg, Transport: hc}
	cred, err := azidentity.NewClientSecretCredential(env["AZURE_TENANT_ID"], env["AZURE_CLIENT_ID"], env["AZURE_CLIENT_SECRET"],
		&azidentity.ClientSecretCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: true})
	if err != nil {
		t.Fatal(err)
	}
	return cred, &arm.ClientOptions{ClientOptions: co}
}

// adminRequest is a request to the emulator's /_nuv/faults with its admin token.
func adminRequest(t *testing.T, env map[string]string, url, method string, body io.Reader) *http.Request {
	t.Helper()
	tok, err := emucore.ReadAdminToken(caDir(env))
	if err != nil {
		t.Fatal(err)
	}
	req, err := emucore.NewAdminRequest(context.Background(), method, url+"/_nuv/faults", tok, body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func clearFaults(t *testing.T, env map[string]string, url string) {
	t.Helper()
	hc, err := azure.Client(caDir(env))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(adminRequest(t, env, url, http.MethodDelete, nil))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("clear faults: %v %v", resp, err)
	}
	resp.Body.Close()
}

package gcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/nuv-dev/nuv/internal/cluster/gke"
	"github.com/nuv-dev/nuv/internal/emulator/gcp"
)

// TestAuth: the Go client gets a token through ADC's service account flow against the emulator's
// token endpoint; no token, a foreign token, an expired token and a wrong key are refused as
// Google refuses them.
func TestAuth(t *testing.T) {
	e := startEmulator(t, "", gcp.Options{TokenLifetime: 2 * time.Second})
	ctx := context.Background()
	if _, err := e.Conn.Client.ListClusters(ctx, &containerpb.ListClustersRequest{Parent: e.loc("-")}); err != nil {
		t.Fatalf("list with an ADC token: %v", err)
	}
	for _, tc := range []struct{ name, header, want string }{
		{"none", "", "no bearer token"},
		{"foreign", "Bearer ya29.a0AfH6SMBx", "not issued by this emulator"},
	} {
		code, body := rest(t, e, http.MethodGet, "/v1/"+e.loc("-")+"/clusters", tc.header, "")
		if code != 401 || !strings.Contains(body, `"UNAUTHENTICATED"`) || !strings.Contains(body, tc.want) || !strings.Contains(body, "Expected OAuth 2 access token") {
			t.Errorf("%s: %d %s", tc.name, code, body)
		}
	}
	tok := token(t, e)
	time.Sleep(2100 * time.Millisecond)
	code, body := rest(t, e, http.MethodGet, "/v1/"+e.loc("-")+"/clusters", "Bearer "+tok, "")
	if code != 401 || !strings.Contains(body, "expired") {
		t.Errorf("expired token: %d %s", code, body)
	}
	// The client library refreshes its token: it keeps working.
	if _, err := e.Conn.Client.ListClusters(ctx, &containerpb.ListClustersRequest{Parent: e.loc("-")}); err != nil {
		t.Errorf("list after the first token expired: %v", err)
	}

	// A key file with another key (a deleted key) is refused by the token endpoint, and the
	// provider's credential check names the file.
	other := startEmulator(t, "", gcp.Options{})
	bad := map[string]string{}
	for k, v := range e.Env {
		bad[k] = v
	}
	b, _ := os.ReadFile(other.Env["GOOGLE_APPLICATION_CREDENTIALS"])
	var f map[string]any
	_ = json.Unmarshal(b, &f)
	mine, _ := os.ReadFile(e.Env["GOOGLE_APPLICATION_CREDENTIALS"])
	var m map[string]any
	_ = json.Unmarshal(mine, &m)
	m["private_key"] = f["private_key"]
	b, _ = json.Marshal(m)
	bad["GOOGLE_APPLICATION_CREDENTIALS"] = filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(bad["GOOGLE_APPLICATION_CREDENTIALS"], b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := gke.Connect(ctx, func(k string) string { return bad[k] })
	if err == nil || !strings.Contains(err.Error(), "GOOGLE_APPLICATION_CREDENTIALS="+bad["GOOGLE_APPLICATION_CREDENTIALS"]) || !strings.Contains(err.Error(), "Invalid JWT Signature") {
		t.Errorf("wrong key: %v", err)
	}
	_, err = gke.Connect(ctx, func(k string) string { return map[string]string{"HOME": t.TempDir()}[k] })
	if err == nil || !strings.Contains(err.Error(), "tried GOOGLE_APPLICATION_CREDENTIALS (unset), gcloud's application default credentials") {
		t.Errorf("no credentials: %v", err)
	}
	if fi, err := os.Stat(e.Env["GOOGLE_APPLICATION_CREDENTIALS"]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials file: %v %v", fi.Mode(), err)
	}
}

// token gets an access token from the emulator through ADC.
func token(t testing.TB, e *testEmulator) string {
	t.Helper()
	creds, _, err := gke.Credentials(context.Background(), e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := creds.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tok.Value
}

// rest calls the REST API and returns the status and body.
func rest(t testing.TB, e *testEmulator, method, path, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestErrors: what GKE refuses, the emulator refuses with GKE's codes, in gRPC and in REST.
func TestErrors(t *testing.T) {
	e := startEmulator(t, "", gcp.Options{})
	ctx := context.Background()
	c := e.Conn.Client
	pool := func(mt string) []*containerpb.NodePool {
		return []*containerpb.NodePool{{Name: "p", InitialNodeCount: 1, Config: &containerpb.NodeConfig{MachineType: mt}}}
	}
	for _, tc := range []struct {
		name string
		call func() error
		code codes.Code
		msg  string
	}{
		{"get missing", func() error {
			_, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: e.loc("us-central1-a") + "/clusters/nope"})
			return err
		}, codes.NotFound, "Not found: projects/" + e.Project + "/locations/us-central1-a/clusters/nope."},
		{"bad zone", func() error {
			_, err := c.GetServerConfig(ctx, &containerpb.GetServerConfigRequest{Name: e.loc("us-central1-z")})
			return err
		}, codes.InvalidArgument, `Location "us-central1-z" does not exist`},
		{"other project", func() error {
			_, err := c.ListClusters(ctx, &containerpb.ListClustersRequest{Parent: "projects/someone-else/locations/-"})
			return err
		}, codes.PermissionDenied, "Permission 'container.clusters.list' denied on resource '//container.googleapis.com/projects/someone-else/locations/-'"},
		{"bad machine type", func() error {
			_, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: e.loc("us-central1-a"), Cluster: &containerpb.Cluster{Name: "a", NodePools: pool("e2-huge-3")}})
			return err
		}, codes.InvalidArgument, `Invalid machine type "e2-huge-3"`},
		{"machine type not in zone", func() error {
			_, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: e.loc("asia-east1-a"), Cluster: &containerpb.Cluster{Name: "a", NodePools: pool("c3-standard-4")}})
			return err
		}, codes.InvalidArgument, `Machine type "c3-standard-4" is not available in zone "asia-east1-a"`},
		{"bad version", func() error {
			_, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: e.loc("us-central1-a"), Cluster: &containerpb.Cluster{Name: "a", InitialClusterVersion: "1.20", NodePools: pool("")}})
			return err
		}, codes.InvalidArgument, `Master version "1.20" is unsupported`},
		{"version not in channel", func() error {
			_, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: e.loc("us-central1"), Cluster: &containerpb.Cluster{Name: "a", InitialClusterVersion: "1.36",
				ReleaseChannel: &containerpb.ReleaseChannel{Channel: containerpb.ReleaseChannel_STABLE}, NodePools: pool("")}})
			return err
		}, codes.InvalidArgument, "in release channel STABLE"},
		{"no node pool", func() error {
			_, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: e.loc("us-central1-a"), Cluster: &containerpb.Cluster{Name: "a"}})
			return err
		}, codes.InvalidArgument, "initial_node_count must be greater than zero"},
		{"bad name", func() error {
			_, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: e.loc("us-central1-a"), Cluster: &containerpb.Cluster{Name: "Bad_Name", InitialNodeCount: 1}})
			return err
		}, codes.InvalidArgument, "cluster.name"},
		{"unimplemented", func() error {
			_, err := c.SetLegacyAbac(ctx, &containerpb.SetLegacyAbacRequest{Name: e.loc("us-central1-a") + "/clusters/a"})
			return err
		}, codes.Unimplemented, "method SetLegacyAbac not implemented"},
		{"unimplemented field", func() error {
			_, err := c.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: e.loc("us-central1-a") + "/clusters/a",
				Update: &containerpb.ClusterUpdate{DesiredLoggingService: "none"}})
			return err
		}, codes.Unimplemented, "nuv emulator does not implement ClusterUpdate.desired_logging_service"},
	} {
		msg := wantCode(t, tc.call(), tc.code)
		if !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: %q, want it to contain %q", tc.name, msg, tc.msg)
		}
	}
	tok := "Bearer " + token(t, e)
	for _, tc := range []struct {
		method, path string
		code         int
		status, msg  string
	}{
		{"GET", "/v1/" + e.loc("us-central1-a") + "/clusters/nope", 404, "NOT_FOUND", "Not found"},
		{"POST", "/v1/" + e.loc("us-central1-a") + "/clusters/a:setLegacyAbac", 501, "UNIMPLEMENTED", "SetLegacyAbac"},
		{"GET", "/v1/" + e.loc("us-central1") + "/serverConfig", 200, "", "validMasterVersions"},
		{"GET", "/v1/projects/" + e.Project + "/zones/us-central1-a/clusters", 200, "", "{}"},
	} {
		code, body := rest(t, e, tc.method, tc.path, tok, "")
		if code != tc.code || !strings.Contains(body, tc.status) || !strings.Contains(body, tc.msg) {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, code, body)
		}
	}
}

// TestOperationFailsMidway: an injected fault lets CreateCluster start, and its operation goes
// RUNNING, refuses other changes meanwhile (FAILED_PRECONDITION), and ends DONE with the error;
// the cluster is then in ERROR, as GKE leaves it, and can be deleted. Throttling answers
// RESOURCE_EXHAUSTED (429 in REST). Everything survives a restart of the emulator.
func TestOperationFailsMidway(t *testing.T) {
	dir := t.TempDir()
	e := startEmulator(t, dir, gcp.Options{Delay: time.Second})
	ctx := context.Background()
	c := e.Conn.Client
	e.fault(t, `[{"method":"CreateCluster","kind":"fail-operation","code":"RESOURCE_EXHAUSTED","message":"Insufficient regional quota to satisfy request: resource \"CPUS\"","count":1},
		{"method":"ListClusters","kind":"throttle","every":2,"count":1}]`)
	op, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: e.loc("us-central1-a"), Cluster: &containerpb.Cluster{Name: "doomed", InitialNodeCount: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if op.OperationType != containerpb.Operation_CREATE_CLUSTER || op.Error != nil || op.Status != containerpb.Operation_PENDING || !strings.HasPrefix(op.Name, "operation-") {
		t.Fatalf("operation: %v", op)
	}
	got, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: e.loc("us-central1-a") + "/clusters/doomed"})
	if err != nil || got.Status != containerpb.Cluster_PROVISIONING || got.NodePools[0].Name != "default-pool" || got.CurrentNodeCount != 2 {
		t.Fatalf("cluster while provisioning: %v %v", got, err)
	}
	msg := wantCode(t, func() error {
		_, err := c.DeleteCluster(ctx, &containerpb.DeleteClusterRequest{Name: e.loc("us-central1-a") + "/clusters/doomed"})
		return err
	}(), codes.FailedPrecondition)
	if msg != "Cluster is running incompatible operation "+op.Name+"." {
		t.Errorf("delete during create: %q", msg)
	}
	_, err = c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: e.loc("us-central1-a"), Cluster: &containerpb.Cluster{Name: "doomed", InitialNodeCount: 1}})
	wantCode(t, err, codes.AlreadyExists)
	seen := map[containerpb.Operation_Status]bool{}
	done := e.waitOp(t, op, seen)
	if !seen[containerpb.Operation_RUNNING] || done.Error == nil || codes.Code(done.Error.Code) != codes.ResourceExhausted || !strings.Contains(done.Error.Message, "Insufficient regional quota") || done.EndTime == "" {
		t.Fatalf("failed operation: seen %v, %v", seen, done)
	}
	got, _ = c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: e.loc("us-central1-a") + "/clusters/doomed"})
	if got.Status != containerpb.Cluster_ERROR || !strings.Contains(got.StatusMessage, "quota") {
		t.Fatalf("cluster after the failure: %v %q", got.Status, got.StatusMessage)
	}

	// Throttling: the client retries RESOURCE_EXHAUSTED only when asked; REST says 429.
	tok := "Bearer " + token(t, e)
	if code, body := rest(t, e, "GET", "/v1/"+e.loc("-")+"/clusters", tok, ""); code != 200 {
		t.Fatalf("first list: %d %s", code, body)
	}
	if code, body := rest(t, e, "GET", "/v1/"+e.loc("-")+"/clusters", tok, ""); code != 429 || !strings.Contains(body, "RESOURCE_EXHAUSTED") || !strings.Contains(body, "Quota exceeded") {
		t.Fatalf("throttled list: %d %s", code, body)
	}

	// Restart: the cluster and its operation are still there.
	e.stop()
	e2 := startEmulator(t, dir, gcp.Options{Delay: time.Second})
	ops, err := e2.Conn.Client.ListOperations(ctx, &containerpb.ListOperationsRequest{Parent: e2.loc("-")})
	if err != nil || len(ops.Operations) != 1 || ops.Operations[0].Name != op.Name || ops.Operations[0].Error == nil {
		t.Fatalf("operations after a restart: %v %v", ops, err)
	}
	del, err := e2.Conn.Client.DeleteCluster(ctx, &containerpb.DeleteClusterRequest{Name: e2.loc("us-central1-a") + "/clusters/doomed"})
	if err != nil {
		t.Fatal(err)
	}
	if d := e2.waitOp(t, del, nil); d.Error != nil {
		t.Fatalf("delete: %v", d.Error)
	}
	_, err = e2.Conn.Client.GetCluster(ctx, &containerpb.GetClusterRequest{Name: e2.loc("us-central1-a") + "/clusters/doomed"})
	wantCode(t, err, codes.NotFound)
	if fi, err := os.Stat(filepath.Join(dir, "state.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state.json: %v %v", fi.Mode(), err)
	}
}

// TestOperationResumesAfterRestart: an operation running when the emulator stops goes on after
// its restart, to the same end.
func TestOperationResumesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	e := startEmulator(t, dir, gcp.Options{Delay: 2 * time.Second})
	ctx := context.Background()
	e.fault(t, `{"method":"CreateCluster","kind":"fail-operation","code":"PERMISSION_DENIED","message":"Required 'compute.networks.get' permission for 'projects/p/global/networks/default'."}`)
	op, err := e.Conn.Client.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: e.loc("europe-west1"), Cluster: &containerpb.Cluster{Name: "r", InitialNodeCount: 1}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	e.stop()
	e2 := startEmulator(t, dir, gcp.Options{Delay: 2 * time.Second})
	got, err := e2.Conn.Client.GetOperation(ctx, &containerpb.GetOperationRequest{Name: e2.loc("europe-west1") + "/operations/" + op.Name})
	if err != nil || got.Status != containerpb.Operation_RUNNING {
		t.Fatalf("operation after the restart: %v %v", got, err)
	}
	done := e2.waitOp(t, got, nil)
	if done.Error == nil || codes.Code(done.Error.Code) != codes.PermissionDenied || !strings.Contains(done.Error.Message, "compute.networks.get") {
		t.Fatalf("resumed operation: %v", done)
	}
	c, err := e2.Conn.Client.GetCluster(ctx, &containerpb.GetClusterRequest{Name: e2.loc("europe-west1") + "/clusters/r"})
	if err != nil || c.Status != containerpb.Cluster_ERROR || len(c.Locations) != 3 {
		t.Fatalf("cluster: %v %v", c, err)
	}
}

// TestREST: the REST form of the methods gcloud and the REST client call, on a cluster whose
// creation fails (no control plane needed): create, get, operations, node pools, delete.
func TestREST(t *testing.T) {
	e := startEmulator(t, "", gcp.Options{})
	e.fault(t, `{"method":"CreateCluster","kind":"fail-operation","count":1}`)
	tok := "Bearer " + token(t, e)
	base := "/v1/" + e.loc("us-east1-b")
	var op containerpb.Operation
	code, body := rest(t, e, "POST", base+"/clusters", tok, `{"cluster":{"name":"r","nodePools":[{"name":"p","initialNodeCount":2,"config":{"machineType":"n2-standard-4"}}]}}`)
	if code != 200 || protojson.Unmarshal([]byte(body), &op) != nil || op.OperationType != containerpb.Operation_CREATE_CLUSTER {
		t.Fatalf("create: %d %s", code, body)
	}
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", base + "/clusters/r", "", 200, `"name":"r"`},
		{"GET", base + "/operations/" + op.Name, "", 200, `"operationType":"CREATE_CLUSTER"`},
		{"GET", base + "/operations", "", 200, op.Name},
		{"GET", base + "/clusters/r/nodePools", "", 200, `"machineType":"n2-standard-4"`},
		{"GET", base + "/clusters/r/nodePools/p", "", 200, `"initialNodeCount":2`},
		{"GET", base + "/clusters/r/nodePools/q", "", 404, "Not found: projects/" + e.Project + "/locations/us-east1-b/clusters/r/nodePools/q."},
		{"POST", base + "/clusters/r/nodePools/p:setSize", `{"nodeCount":3}`, 400, "Cluster is running incompatible operation " + op.Name},
		{"POST", base + "/clusters", `{"cluster":{"name":"r","initialNodeCount":1}}`, 409, "ALREADY_EXISTS"},
		{"POST", base + "/clusters", `{"cluster":{"name":"s","initialNodeCount":"many"}}`, 400, "Invalid JSON payload"},
		{"PATCH", base + "/clusters/r", "", 404, "no method PATCH"},
	} {
		code, body := rest(t, e, tc.method, tc.path, tok, tc.body)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s: %d %s, want %d and %q", tc.method, tc.path, code, body, tc.code, tc.want)
		}
	}
	e.waitOp(t, &op, nil)
	code, body = rest(t, e, "DELETE", base+"/clusters/r", tok, "")
	if code != 200 || !strings.Contains(body, `"operationType":"DELETE_CLUSTER"`) {
		t.Fatalf("delete: %d %s", code, body)
	}
}

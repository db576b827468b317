package azure

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// jsClientDir is where Azure's JavaScript SDK of testdata/jsclient/package.json is installed:
// $NUV_AZURE_JS_DIR when set, else a directory of the user's cache named by the package.json's
// digest (where hack/azure-js.sh, a stage of the test command, installs it), installed with npm
// the first time.
func jsClientDir(t *testing.T) string {
	t.Helper()
	pkg, err := os.ReadFile(filepath.Join("testdata", "jsclient", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("NUV_AZURE_JS_DIR"); d != "" {
		return d
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(pkg)
	dir := filepath.Join(cache, "nuv", "test-npm", "azure-js-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@azure", "identity")); err == nil {
		return dir
	}
	// Install next to dir, then rename: a cut install never looks complete.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), pkg, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install of Azure's JavaScript SDK (testdata/jsclient/package.json) into %s: %v\n%s", tmp, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
		if _, serr := os.Stat(filepath.Join(dir, "node_modules")); serr != nil {
			t.Fatalf("install Azure's JavaScript SDK: %v", err)
		}
	}
	return dir
}

// TestIntegrationJavaScriptSDK drives the emulator with a client nuv does not use: Azure's
// JavaScript SDK (@azure/identity, @azure/arm-resources, @azure/arm-containerservice, each at the
// api-version its release sends), configured from the emulator's cloud metadata document as a
// custom cloud is. It creates, lists and deletes a resource group (a long-running operation polled
// through the Location the emulator gives), lists Kubernetes versions and clusters, and reads
// ARM's errors as the SDK parses them.
func TestIntegrationJavaScriptSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: installs Azure's JavaScript SDK with npm (cached) and runs node")
	}
	dir := jsClientDir(t)
	e := startEmulator(t, "", 0)
	script, err := filepath.Abs(filepath.Join("testdata", "jsclient", "client.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"), "NODE_EXTRA_CA_CERTS="+CAFile(e.Dir), "EMULATOR_URL="+e.URL,
		"AZURE_TENANT_ID="+e.Creds.TenantID, "AZURE_CLIENT_ID="+e.Creds.ClientID, "AZURE_CLIENT_SECRET="+e.Creds.ClientSecret,
		"AZURE_SUBSCRIPTION_ID="+e.Creds.SubscriptionID)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	var got struct {
		Cloud string `json:"cloud"`
		Group struct {
			Name, Location, State, Tag string
		} `json:"group"`
		Groups             []string `json:"groups"`
		KubernetesVersions []string `json:"kubernetesVersions"`
		Clusters           []string `json:"clusters"`
		GetAbsent          struct {
			Status int    `json:"status"`
			Code   string `json:"code"`
		} `json:"getAbsent"`
		CreateBad struct {
			Status int    `json:"status"`
			Code   string `json:"code"`
		} `json:"createBad"`
		ExistsAfterDelete any `json:"existsAfterDelete"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	t.Logf("the JavaScript SDK saw %s", out)
	if got.Cloud != CloudName || got.Group.Name != "js-rg" || got.Group.Location != "westeurope" || got.Group.State != "Succeeded" || got.Group.Tag != "js" {
		t.Errorf("resource group through the JavaScript SDK: %s", out)
	}
	if !slices.Contains(got.Groups, "js-rg") || len(got.KubernetesVersions) == 0 || len(got.Clusters) != 0 {
		t.Errorf("lists through the JavaScript SDK: %s", out)
	}
	if got.GetAbsent.Status != 404 || got.GetAbsent.Code != "ResourceNotFound" || got.CreateBad.Status != 400 || got.CreateBad.Code != "InvalidParameter" {
		t.Errorf("ARM errors through the JavaScript SDK: %s", out)
	}
	if got.ExistsAfterDelete != false {
		t.Errorf("the group exists after its deletion was awaited: %s", out)
	}
	e.Mu.Lock()
	_, kept := e.St.Groups["js-rg"]
	e.Mu.Unlock()
	if kept {
		t.Errorf("the emulator still has the group the JavaScript SDK deleted")
	}
}

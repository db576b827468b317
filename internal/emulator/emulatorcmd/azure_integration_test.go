package emulatorcmd_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"

	"github.com/nuv-dev/nuv/internal/emulator/azure"
)

// TestIntegrationEmulatorAzure: `nuv emulator up` starts the Azure emulator beside the AWS one,
// `nuv emulator env` prints what points the Azure SDK at it (and the SDK works with exactly that),
// `nuv emulator faults --azure` injects a fault, status reports it, down stops it and its state
// stays for the next up.
func TestIntegrationEmulatorAzure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the emulators as processes; skipped under -short")
	}
	home := t.TempDir()
	t.Setenv("NUV_HOME", home)
	t.Setenv("NUV_EMULATOR_PORT", freePort(t))
	t.Setenv("NUV_AZURE_EMULATOR_PORT", freePort(t))
	t.Setenv(asNuv, "1")
	t.Cleanup(func() {
		if _, err := nuv(t, "emulator", "down"); err != nil {
			t.Errorf("emulator down: %v", err)
		}
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(azure.Dir(home), "emulator.log"))
			t.Logf("azure emulator log:\n%s", b)
		}
	})
	ok[string](t)(nuv(t, "emulator", "up"))
	if st := ok[string](t)(nuv(t, "emulator", "status")); !strings.Contains(st, "azure emulator: running at https://127.0.0.1:"+os.Getenv("NUV_AZURE_EMULATOR_PORT")) {
		t.Fatalf("status: %s", st)
	}
	vars := exports(ok[string](t)(nuv(t, "emulator", "env")))
	for _, k := range []string{"AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_SUBSCRIPTION_ID", "AZURE_AUTHORITY_HOST", "NUV_AZURE_RESOURCE_MANAGER", "NUV_AZURE_CA_FILE"} {
		if vars[k] == "" {
			t.Fatalf("env has no %s: %v", k, vars)
		}
	}
	if fi, err := os.Stat(filepath.Join(azure.Dir(home), "state.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state.json (holds the client secret): %v %v", fi, err)
	}

	// The SDK with exactly what env printed.
	hc, err := azure.Client(filepath.Dir(vars["NUV_AZURE_CA_FILE"]))
	if err != nil {
		t.Fatal(err)
	}
	ep := vars["NUV_AZURE_RESOURCE_MANAGER"]
	co := azcore.ClientOptions{Transport: hc, Cloud: cloud.Configuration{ActiveDirectoryAuthorityHost: vars["AZURE_AUTHORITY_HOST"],
		Services: map[cloud.ServiceName]cloud.ServiceConfiguration{cloud.ResourceManager: {Endpoint: ep, Audience: ep}}}}
	cred := ok[*azidentity.ClientSecretCredential](t)(azidentity.NewClientSecretCredential(vars["AZURE_TENANT_ID"], vars["AZURE_CLIENT_ID"], vars["AZURE_CLIENT_SECRET"],
		&azidentity.ClientSecretCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: true}))
	groups := ok[*armresources.ResourceGroupsClient](t)(armresources.NewResourceGroupsClient(vars["AZURE_SUBSCRIPTION_ID"], cred, &arm.ClientOptions{ClientOptions: co}))
	ctx := context.Background()
	if _, err := groups.CreateOrUpdate(ctx, "kept", armresources.ResourceGroup{Location: to.Ptr("eastus")}, nil); err != nil {
		t.Fatal(err)
	}
	ok[string](t)(nuv(t, "emulator", "faults", "--azure", "add", `{"operation":"ResourceGroups_Get","kind":"error","status":503,"code":"ServiceUnavailable","count":10}`))
	_, err = groups.Get(ctx, "kept", nil)
	var re *azcore.ResponseError
	if err == nil || !strings.Contains(err.Error(), "ServiceUnavailable") {
		t.Fatalf("get with an injected 503: %v (%T)", err, re)
	}
	if l := ok[string](t)(nuv(t, "emulator", "faults", "--azure")); !strings.Contains(l, `"fired"`) {
		t.Fatalf("faults: %s", l)
	}
	if l := ok[string](t)(nuv(t, "emulator", "faults", "--cloud", "azure")); !strings.Contains(l, `"ResourceGroups_Get"`) {
		t.Fatalf("faults --cloud azure: %s", l)
	}
	ok[string](t)(nuv(t, "emulator", "faults", "--azure", "clear"))

	// Down, up: the state (and the credentials) are kept.
	ok[string](t)(nuv(t, "emulator", "down"))
	if _, err := nuv(t, "emulator", "status"); err == nil {
		t.Fatal("status of stopped emulators succeeded")
	}
	ok[string](t)(nuv(t, "emulator", "up"))
	if _, err := groups.Get(ctx, "kept", nil); err != nil {
		t.Fatalf("after down and up: %v", err)
	}
	req, _ := http.NewRequest(http.MethodGet, ep+"/subscriptions/"+vars["AZURE_SUBSCRIPTION_ID"]+"/resourcegroups?api-version="+azure.ResourcesAPIVersion, nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a request without a token: HTTP %d, want 401", resp.StatusCode)
	}
}

package azure

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	acs "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

func TestResourceGroupsThroughSDK(t *testing.T) {
	e := startEmulator(t, "", 0)
	ctx := context.Background()
	_, err := e.Groups.Get(ctx, "rg1", nil)
	wantCode(t, err, "ResourceGroupNotFound")
	r, err := e.Groups.CreateOrUpdate(ctx, "rg1", armresources.ResourceGroup{Location: to.Ptr("East US"), Tags: map[string]*string{"nuv.dev/cluster": to.Ptr("a")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *r.Location != "eastus" || *r.Properties.ProvisioningState != "Succeeded" || *r.Tags["nuv.dev/cluster"] != "a" {
		t.Fatalf("created group %+v", r)
	}
	_, err = e.Groups.CreateOrUpdate(ctx, "rg2", armresources.ResourceGroup{Location: to.Ptr("atlantis")}, nil)
	wantCode(t, err, "LocationNotAvailableForResourceGroup")
	poller, err := e.Groups.BeginDelete(ctx, "rg1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := poller.PollUntilDone(ctx, nil); err != nil {
		t.Fatal(err)
	}
	_, err = e.Groups.Get(ctx, "rg1", nil)
	wantCode(t, err, "ResourceGroupNotFound")
}

func TestClusterErrorsThroughSDK(t *testing.T) {
	e := startEmulator(t, "", 0)
	ctx := context.Background()
	mc := func(loc, version, size string) acs.ManagedCluster {
		return acs.ManagedCluster{Location: to.Ptr(loc), Properties: &acs.ManagedClusterProperties{KubernetesVersion: to.Ptr(version),
			AgentPoolProfiles: []*acs.ManagedClusterAgentPoolProfile{{Name: to.Ptr("system"), Mode: to.Ptr(acs.AgentPoolModeSystem), Count: to.Ptr[int32](1), VMSize: to.Ptr(size)}}}}
	}
	_, err := e.Clusters.BeginCreateOrUpdate(ctx, "nope", "c", mc("eastus", "1.35", "Standard_D2s_v3"), nil)
	wantCode(t, err, "ResourceGroupNotFound")
	if _, err := e.Groups.CreateOrUpdate(ctx, "rg", armresources.ResourceGroup{Location: to.Ptr("eastus")}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, loc, version, size, code, target string
	}{
		{"version", "eastus", "1.20", "Standard_D2s_v3", "InvalidParameter", "properties.kubernetesVersion"},
		{"size", "eastus", "1.35", "Standard_Nope", "InvalidParameter", "vmSize"},
		{"size not in region", "westus", "1.35", "Standard_NC6s_v3", "InvalidParameter", "vmSize"},
		{"location", "mars", "1.35", "Standard_D2s_v3", "LocationNotAvailableForResourceType", ""},
	} {
		_, err := e.Clusters.BeginCreateOrUpdate(ctx, "rg", "c", mc(tc.loc, tc.version, tc.size), nil)
		wantCode(t, err, tc.code)
		if !strings.Contains(err.Error(), tc.target) {
			t.Errorf("%s: %v does not name %s", tc.name, err, tc.target)
		}
	}
	_, err = e.Clusters.Get(ctx, "rg", "c", nil)
	wantCode(t, err, "ResourceNotFound")
}

// rawARM sends an authenticated request to the emulator and returns the status and the error code.
func (e *testEmulator) rawARM(t *testing.T, method, path string) (int, string, string) {
	t.Helper()
	tok, err := e.Cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{e.URL + "/.default"}})
	if err != nil {
		t.Fatal(err)
	}
	return e.raw(t, method, path, "Bearer "+tok.Token)
}

func (e *testEmulator) raw(t *testing.T, method, path, auth string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(method, e.URL+path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error armError `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Error.Code, body.Error.Message
}

func TestRefusals(t *testing.T) {
	e := startEmulator(t, "", 0)
	sub := "/subscriptions/" + e.Creds.SubscriptionID
	mcs := sub + "/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters"
	k, _ := hex.DecodeString(e.St.SigningKey)
	now, tenant := time.Now(), e.St.TenantID
	iss := e.URL + "/" + tenant + "/v2.0"
	// valid is a token as the authority issues it, changed by edit.
	valid := func(edit func(*tokenClaims)) string {
		c := tokenClaims{Aud: e.URL, Iss: iss, Tid: tenant, Iat: now.Unix(), Nbf: now.Unix(), Exp: now.Add(time.Hour).Unix()}
		edit(&c)
		return signToken(k, c)
	}
	expired := valid(func(c *tokenClaims) { c.Nbf, c.Exp = now.Add(-time.Hour).Unix(), now.Add(-time.Minute).Unix() })
	otherKey := signToken([]byte("not the emulator's key"), tokenClaims{Aud: e.URL, Exp: time.Now().Add(time.Hour).Unix()})
	notYet := valid(func(c *tokenClaims) { c.Nbf = now.Add(time.Hour).Unix(); c.Exp = now.Add(2 * time.Hour).Unix() })
	noNbf := valid(func(c *tokenClaims) { c.Nbf = 0 })
	otherIssuer := valid(func(c *tokenClaims) { c.Iss = "https://login.microsoftonline.com/" + tenant + "/v2.0" })
	otherTenant := valid(func(c *tokenClaims) {
		c.Tid = "72f988bf-86f1-41af-91ab-2d7cd011db47"
		c.Iss = e.URL + "/" + c.Tid + "/v2.0"
	})
	if status, code, msg := e.raw(t, "GET", sub+"/resourcegroups?api-version="+ResourcesAPIVersion, "Bearer "+valid(func(*tokenClaims) {})); status != 200 {
		t.Fatalf("a token as the authority issues it: %d %s %s", status, code, msg)
	}
	for _, tc := range []struct {
		name, method, path, auth string
		status                   int
		code, inMessage          string
	}{
		{"no token", "GET", mcs + "?api-version=" + APIVersion, "", 401, "AuthenticationFailed", "header is missing"},
		{"expired token", "GET", mcs + "?api-version=" + APIVersion, "Bearer " + expired, 401, "ExpiredAuthenticationToken", "expiry"},
		{"foreign token", "GET", mcs + "?api-version=" + APIVersion, "Bearer " + otherKey, 401, "InvalidAuthenticationTokenTenant", "signature"},
		{"not yet valid", "GET", mcs + "?api-version=" + APIVersion, "Bearer " + notYet, 401, "InvalidAuthenticationToken", "not yet valid"},
		{"no nbf", "GET", mcs + "?api-version=" + APIVersion, "Bearer " + noNbf, 401, "InvalidAuthenticationToken", "no validity period"},
		{"other issuer", "GET", mcs + "?api-version=" + APIVersion, "Bearer " + otherIssuer, 401, "InvalidAuthenticationTokenTenant", "wrong issuer 'https://login.microsoftonline.com/"},
		{"other tenant", "GET", mcs + "?api-version=" + APIVersion, "Bearer " + otherTenant, 401, "InvalidAuthenticationTokenTenant", "wrong issuer"},
	} {
		status, code, msg := e.raw(t, tc.method, tc.path, tc.auth)
		if status != tc.status || code != tc.code || !strings.Contains(msg, tc.inMessage) {
			t.Errorf("%s: %d %s %q; want %d %s (%s)", tc.name, status, code, msg, tc.status, tc.code, tc.inMessage)
		}
	}
	for _, tc := range []struct {
		name, method, path string
		status             int
		code, inMessage    string
	}{
		{"no api-version", "GET", mcs, 400, "MissingApiVersionParameter", "api-version"},
		{"unpublished api-version", "GET", mcs + "?api-version=2019-02-02", 400, "NoRegisteredProviderFound", APIVersion},
		{"resources api-version", "GET", sub + "/resourcegroups?api-version=2025-02-01", 400, "InvalidApiVersionParameter", ResourcesAPIVersion},
		{"unimplemented", "GET", mcs + "/c/upgradeProfiles/default?api-version=" + APIVersion, 400, "UnsupportedOperation", "upgradeProfiles/default"},
		{"other subscription", "GET", "/subscriptions/00000000-0000-0000-0000-000000000000/resourcegroups?api-version=" + ResourcesAPIVersion, 404, "SubscriptionNotFound", "00000000"},
	} {
		status, code, msg := e.rawARM(t, tc.method, tc.path)
		if status != tc.status || code != tc.code || !strings.Contains(msg, tc.inMessage) {
			t.Errorf("%s: %d %s %q; want %d %s (%s)", tc.name, status, code, msg, tc.status, tc.code, tc.inMessage)
		}
	}
	// A wrong client secret is refused by the authority, as Azure AD refuses it.
	cred, _ := e.clients(t, "wrong")
	_, err := cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{e.URL + "/.default"}})
	if err == nil || !strings.Contains(err.Error(), "AADSTS7000215") {
		t.Errorf("token with a wrong secret: %v", err)
	}
}

func TestThrottlingRetriedAndStateKept(t *testing.T) {
	dir := t.TempDir()
	e := startEmulator(t, dir, 0)
	ctx := context.Background()
	if _, err := e.Groups.CreateOrUpdate(ctx, "kept", armresources.ResourceGroup{Location: to.Ptr("westeurope")}, nil); err != nil {
		t.Fatal(err)
	}
	e.Mu.Lock()
	e.Faults = []*Fault{{Operation: "ResourceGroups_Get", Kind: "throttle", FaultLimits: emucore.FaultLimits{Count: 2}}}
	e.Mu.Unlock()
	if _, err := e.Groups.Get(ctx, "kept", nil); err != nil {
		t.Fatalf("a throttled call is retried by the SDK (Retry-After): %v", err)
	}
	if f := e.FaultList(); f[0].Fired != 2 {
		t.Fatalf("throttle fired %d times, want 2", f[0].Fired)
	}
	creds := e.Creds
	e.Stop()
	e2 := startEmulatorAt(t, dir, 0, e.Addr)
	if e2.Creds != creds {
		t.Fatal("a restarted emulator has new credentials")
	}
	g, err := e2.Groups.Get(ctx, "kept", nil)
	if err != nil || *g.Location != "westeurope" {
		t.Fatalf("after a restart: %v %v", g, err)
	}
}

// TestAdminAndBodies: /_nuv/faults refuses requests without the admin token or with a body that
// is not JSON; an ARM body over the limit is answered 413 in ARM's shape, not cut.
func TestAdminAndBodies(t *testing.T) {
	e := startEmulator(t, "", 0)
	tok, err := emucore.ReadAdminToken(e.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, auth, ctype string
		status            int
	}{
		{"no token", "", "application/json", 401},
		{"form post", "", "application/x-www-form-urlencoded", 401},
		{"token, text body", "Bearer " + tok, "text/plain", 415},
	} {
		req, _ := http.NewRequest(http.MethodPost, e.URL+"/_nuv/faults", strings.NewReader(`{"operation":"*","kind":"throttle"}`))
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		req.Header.Set("Content-Type", tc.ctype)
		resp, err := e.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
	}
	if fs := e.FaultList(); len(fs) != 0 {
		t.Fatalf("refused requests injected %v", fs)
	}
	tk, err := e.Cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{e.URL + "/.default"}})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, e.URL+"/subscriptions/"+e.Creds.SubscriptionID+"/resourcegroups/big?api-version="+ResourcesAPIVersion,
		strings.NewReader(`{"location":"eastus","tags":{"a":"`+strings.Repeat("a", MaxBody)+`"}}`))
	req.Header.Set("Authorization", "Bearer "+tk.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error armError `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || body.Error.Code != "RequestEntityTooLarge" {
		t.Errorf("ARM body over the limit: %d %+v", resp.StatusCode, body.Error)
	}
}

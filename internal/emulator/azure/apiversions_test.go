package azure

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

// rawDo sends a request written by hand (ARM's REST reference) with a token got from the
// emulator's authority by a hand-written client credentials grant; it returns the status, the
// headers and the body.
func (e *testEmulator) rawDo(t *testing.T, tok, method, path, body string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// rawToken gets a token by the OAuth 2.0 client credentials grant for scope.
func (e *testEmulator) rawToken(t *testing.T, scope string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {e.Creds.ClientID}, "client_secret": {e.Creds.ClientSecret}, "scope": {scope}}
	resp, err := e.HTTP.PostForm(e.URL+"/"+e.Creds.TenantID+"/oauth2/v2.0/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || out.AccessToken == "" {
		t.Fatalf("token for %s: %d %v", scope, resp.StatusCode, err)
	}
	return out.AccessToken
}

func armErr(b []byte) armError {
	var body struct {
		Error armError `json:"error"`
	}
	_ = json.Unmarshal(b, &body)
	return body.Error
}

// TestPublishedAPIVersions: every published api-version of each type the emulator serves is
// answered; versions Azure never published are refused with ARM's code and message, naming the
// request's location; the polling URLs carry the client's api-version.
func TestPublishedAPIVersions(t *testing.T) {
	e := startEmulator(t, "", 0)
	tok := e.rawToken(t, e.URL+"/.default")
	sub := "/subscriptions/" + e.Creds.SubscriptionID
	if st, _, b := e.rawDo(t, tok, "PUT", sub+"/resourcegroups/rg?api-version=2016-09-01", `{"location":"westeurope"}`); st != 201 {
		t.Fatalf("resource group with 2016-09-01: %d %s", st, b)
	}
	for _, v := range resourcesVersions {
		if st, _, b := e.rawDo(t, tok, "GET", sub+"/resourcegroups/rg?api-version="+v, ""); st != 200 {
			t.Errorf("ResourceGroups_Get %s: %d %s", v, st, b)
		}
	}
	for _, v := range skusVersions {
		if st, _, b := e.rawDo(t, tok, "GET", sub+"/providers/Microsoft.Compute/skus?api-version="+v+"&$filter=location%20eq%20'eastus'", ""); st != 200 {
			t.Errorf("ResourceSkus_List %s: %d %s", v, st, b)
		}
	}
	mcs := sub + "/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters"
	for _, v := range aksVersions {
		paths := []string{mcs, sub + "/providers/Microsoft.ContainerService/managedClusters"}
		if v[:10] >= kubernetesVersionsSince {
			paths = append(paths, sub+"/providers/Microsoft.ContainerService/locations/westeurope/kubernetesVersions")
		}
		for _, p := range paths {
			if st, _, b := e.rawDo(t, tok, "GET", p+"?api-version="+v, ""); st != 200 {
				t.Errorf("GET %s with %s: %d %s", p, v, st, b)
			}
		}
		if v[:10] >= agentPoolsSince {
			if st, _, b := e.rawDo(t, tok, "GET", mcs+"/absent/agentPools?api-version="+v, ""); st != 404 {
				t.Errorf("AgentPools_List %s on an absent cluster: %d %s (want 404 ResourceNotFound)", v, st, b)
			}
		}
	}
	// A cluster created with an older published version and a body of that version (fields the
	// emulator does not keep, such as osType and storageProfile, are accepted), polled through the
	// URLs it is given, which carry the version the client sent.
	const old = "2019-04-01"
	st, h, b := e.rawDo(t, tok, "PUT", mcs+"/c1?api-version="+old, `{"location":"westeurope","properties":{"kubernetesVersion":"1.35","dnsPrefix":"c1",
		"agentPoolProfiles":[{"name":"np","count":1,"vmSize":"Standard_D2s_v3","osType":"Linux","storageProfile":"ManagedDisks","type":"VirtualMachineScaleSets"}]}}`)
	if st != 201 {
		t.Fatalf("PUT managed cluster with %s: %d %s", old, st, b)
	}
	if a := h.Get("Azure-AsyncOperation"); !strings.HasSuffix(a, "?api-version="+old) {
		t.Errorf("Azure-AsyncOperation %q does not carry api-version %s", a, old)
	}
	if st, _, b := e.rawDo(t, tok, "GET", strings.TrimPrefix(h.Get("Azure-AsyncOperation"), e.URL), ""); st != 200 {
		t.Errorf("polling the operation with %s: %d %s", old, st, b)
	}
	st, _, b = e.rawDo(t, tok, "DELETE", "/subscriptions/"+e.Creds.SubscriptionID+"/resourcegroups/gone?api-version=2024-11-01", "")
	if st != 404 {
		t.Errorf("deleting an absent group: %d %s", st, b)
	}
	for _, tc := range []struct {
		name, method, path, body string
		code, inMessage          string
	}{
		{"unpublished Resources version", "PUT", sub + "/resourcegroups/rg2?api-version=2021-04-02", `{"location":"eastus"}`, "InvalidApiVersionParameter", "The api-version '2021-04-02' is invalid. The supported versions are '2025-04-01,"},
		{"AKS version for a resource group", "GET", sub + "/resourcegroups/rg?api-version=2025-02-01", "", "InvalidApiVersionParameter", "2021-04-01"},
		{"unpublished AKS version, body location", "PUT", mcs + "/c2?api-version=2024-06-01", `{"location":"East US 2","properties":{}}`, "NoRegisteredProviderFound",
			"No registered resource provider found for location 'eastus2' and API version '2024-06-01' for type 'managedClusters'. The supported api-versions are '2026-10-02-preview, "},
		{"unpublished AKS version, group location", "GET", mcs + "/c1?api-version=2099-01-01", "", "NoRegisteredProviderFound", "for location 'westeurope' and API version '2099-01-01' for type 'managedClusters'"},
		{"unpublished AKS version, path location", "GET", sub + "/providers/Microsoft.ContainerService/locations/japaneast/kubernetesVersions?api-version=2019-13-01", "", "NoRegisteredProviderFound", "for location 'japaneast'"},
		{"Kubernetes versions before they were published", "GET", sub + "/providers/Microsoft.ContainerService/locations/uksouth/kubernetesVersions?api-version=2023-02-01", "", "NoRegisteredProviderFound", "for location 'uksouth' and API version '2023-02-01' for type 'locations/kubernetesVersions'"},
		{"agent pools before they were published", "GET", mcs + "/c1/agentPools?api-version=2018-03-31", "", "NoRegisteredProviderFound", "for location 'westeurope' and API version '2018-03-31' for type 'managedClusters/agentPools'"},
		{"unpublished skus version", "GET", sub + "/providers/Microsoft.Compute/skus?api-version=2020-01-01&$filter=location%20eq%20'uksouth'", "", "NoRegisteredProviderFound", "for location 'uksouth' and API version '2020-01-01' for type 'skus'"},
	} {
		st, _, b := e.rawDo(t, tok, tc.method, tc.path, tc.body)
		ae := armErr(b)
		if st != 400 || ae.Code != tc.code || !strings.Contains(ae.Message, tc.inMessage) {
			t.Errorf("%s: %d %s %q; want 400 %s (%s)", tc.name, st, ae.Code, ae.Message, tc.code, tc.inMessage)
		}
	}
	// The provider lists the versions it serves, newest first.
	st, _, b = e.rawDo(t, tok, "GET", sub+"/providers/Microsoft.ContainerService?api-version=2021-04-01", "")
	var prov struct {
		ResourceTypes []struct {
			ResourceType string   `json:"resourceType"`
			APIVersions  []string `json:"apiVersions"`
		} `json:"resourceTypes"`
	}
	if err := json.Unmarshal(b, &prov); err != nil || st != 200 || len(prov.ResourceTypes) == 0 || len(prov.ResourceTypes[0].APIVersions) != len(aksVersions) {
		t.Errorf("provider: %d %s", st, b)
	}
}

// TestCloudMetadata: /metadata/endpoints answers, without a token, one object for api-version
// 2022-09-01 (the az CLI's `cloud register`, go-azure-sdk's FromEndpoint) and a list for the older
// form (2019-05-01, 2015-01-01); its authority issues a token for its first audience, and ARM
// accepts that token.
func TestCloudMetadata(t *testing.T) {
	e := startEmulator(t, "", 0)
	type doc struct {
		Name            string `json:"name"`
		ResourceManager string `json:"resourceManager"`
		Authentication  struct {
			LoginEndpoint string   `json:"loginEndpoint"`
			Audiences     []string `json:"audiences"`
			Tenant        string   `json:"tenant"`
		} `json:"authentication"`
		Suffixes struct {
			Storage     string `json:"storage"`
			KeyVaultDNS string `json:"keyVaultDns"`
		} `json:"suffixes"`
	}
	var docs []doc
	for _, tc := range []struct {
		version string
		list    bool
	}{{"2022-09-01", false}, {"2019-05-01", true}, {"2015-01-01", true}} {
		st, _, b := e.rawDo(t, "", "GET", "/metadata/endpoints?api-version="+tc.version, "")
		if st != 200 {
			t.Fatalf("%s: %d %s", tc.version, st, b)
		}
		var d doc
		if tc.list {
			var ds []doc
			if err := json.Unmarshal(b, &ds); err != nil || len(ds) != 1 {
				t.Fatalf("%s: want a list of one cloud: %v %s", tc.version, err, b)
			}
			d = ds[0]
		} else if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: want one object: %v %s", tc.version, err, b)
		}
		docs = append(docs, d)
	}
	d := docs[0]
	if d.Name != CloudName || strings.TrimSuffix(d.ResourceManager, "/") != e.URL || strings.TrimSuffix(d.Authentication.LoginEndpoint, "/") != e.URL ||
		d.Authentication.Tenant != e.Creds.TenantID || len(d.Authentication.Audiences) == 0 || d.Suffixes.Storage == "" || d.Suffixes.KeyVaultDNS == "" {
		t.Fatalf("metadata %+v", d)
	}
	if !reflect.DeepEqual(docs[1], d) || !reflect.DeepEqual(docs[2], d) {
		t.Errorf("the forms differ: %+v %+v", docs[1], d)
	}
	if st, _, b := e.rawDo(t, "", "GET", "/metadata/endpoints", ""); st != 400 || armErr(b).Code != "MissingApiVersionParameter" {
		t.Errorf("no api-version: %d %s", st, b)
	}
	// A client uses the first audience as the resource: scope <audience>/.default (the az CLI adds
	// the slash when missing). The token carries that audience and ARM takes it.
	for _, aud := range d.Authentication.Audiences {
		scope := strings.TrimSuffix(aud, "/") + "/.default"
		tok := e.rawToken(t, scope)
		c, ae := verifyToken(mustHex(t, e.St.SigningKey), tok, aud, e.URL, e.Creds.TenantID, time.Now())
		if ae != nil || c.Aud != strings.TrimSuffix(aud, "/") {
			t.Errorf("token for %s: %+v %v", aud, c, ae)
		}
		if st, _, b := e.rawDo(t, tok, "GET", "/subscriptions/"+e.Creds.SubscriptionID+"/resourcegroups?api-version=2022-09-01", ""); st != 200 {
			t.Errorf("ARM with the token for %s: %d %s", aud, st, b)
		}
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

package azure

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// armFuzz is one emulator for a fuzz run with a token of its own authority. Its handler is called
// directly (not started: no background work, nothing makes control planes).
type armFuzz struct {
	s     *Server
	token string
	uses  int
}

func (a *armFuzz) get(t *testing.T) *armFuzz {
	if a.s != nil && a.uses < 2000 {
		a.uses++
		return a
	}
	s, err := New(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	c := s.Credentials()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.ClientID}, "client_secret": {c.ClientSecret},
		"scope": {s.BaseURL() + "/.default"}}
	req := httptest.NewRequest(http.MethodPost, "/"+c.TenantID+"/oauth2/v2.0/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %d %s", rec.Code, rec.Body.Bytes())
	}
	*a = armFuzz{s: s, token: tok.AccessToken, uses: 1}
	return a
}

// FuzzARM sends authenticated ARM requests (method, path under the emulator's subscription, JSON
// body) to the Azure emulator: it must never panic, and every answer has a status ARM uses and,
// when it has a body, well-formed JSON.
func FuzzARM(f *testing.F) {
	const mc = "resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/mc"
	f.Add(uint8(1), "resourcegroups/rg?api-version=2021-04-01", `{"location":"eastus","tags":{"a":"b"}}`)
	f.Add(uint8(1), mc+"?api-version="+APIVersion, `{"location":"eastus","properties":{"kubernetesVersion":"1.33","dnsPrefix":"mc","agentPoolProfiles":[{"name":"np","count":-1,"vmSize":"Standard_D2s_v3","mode":"System"}]}}`)
	f.Add(uint8(1), mc+"/agentPools/np2?api-version="+APIVersion, `{"properties":{"count":1e30,"nodeLabels":{"":null},"nodeTaints":["a=b:NoSchedule",""]}}`)
	f.Add(uint8(0), mc+"?api-version=1999-01-01", "")
	f.Add(uint8(2), mc+"/listClusterUserCredential?api-version="+APIVersion, "[]")
	f.Add(uint8(0), "providers/Microsoft.ContainerService/locations/eastus/kubernetesVersions?api-version="+APIVersion, "")
	srv := &armFuzz{}
	methods := []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodPatch, http.MethodHead}
	f.Fuzz(func(t *testing.T, m uint8, path, body string) {
		a := srv.get(t)
		sub := a.s.Credentials().SubscriptionID
		u, err := url.Parse("https://127.0.0.1/subscriptions/" + sub + "/" + strings.TrimPrefix(path, "/"))
		if err != nil || u.Host != "127.0.0.1" {
			return
		}
		req, err := http.NewRequest(methods[int(m)%len(methods)], u.String(), strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+a.token)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		a.s.ServeHTTP(rec, req)
		if rec.Code < 200 || rec.Code > 599 {
			t.Fatalf("status %d for %s %s", rec.Code, req.Method, path)
		}
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("internal error for %s %s %q: %s", req.Method, path, body, rec.Body.Bytes())
		}
		if b := bytes.TrimSpace(rec.Body.Bytes()); len(b) > 0 && !json.Valid(b) {
			t.Fatalf("malformed JSON answer for %s %s: %s", req.Method, path, b)
		}
	})
}

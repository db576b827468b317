package gcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzREST sends GKE REST requests (method, path, JSON body) to the GCP emulator's REST
// gateway, which routes them and decodes the body into the API's messages before it checks the
// caller: it must never panic, and every answer is Google's JSON (an error object or a message)
// with an HTTP status. Its handler is called directly (not started: nothing makes control planes).
func FuzzREST(f *testing.F) {
	f.Add(uint8(1), "v1/projects/p/locations/us-central1/clusters", `{"cluster":{"name":"c","initialClusterVersion":"1.33","nodePools":[{"name":"np","initialNodeCount":1}]}}`)
	f.Add(uint8(0), "v1/projects/p/locations/us-central1/clusters/c", "")
	f.Add(uint8(1), "v1/projects/p/locations/us-central1/clusters/c/nodePools/np:setSize", `{"nodeCount":-5}`)
	f.Add(uint8(2), "v1/projects/p/locations/-/operations/op:cancel", `{"name": 1}`)
	f.Add(uint8(3), "v1/projects/p/locations/us-central1/clusters/c", `{"update":{"desiredMasterVersion":"latest"}}`)
	f.Add(uint8(1), "v1/projects/p/zones/us-central1-a/clusters", `{"cluster":{"nodePools":[{"config":{"labels":{"":""},"taints":[{"effect":"NO_SCHEDULE"}]}}]}}`)
	s, err := New(Options{Dir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	methods := []string{http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodPut, http.MethodPatch}
	f.Fuzz(func(t *testing.T, m uint8, path, body string) {
		u, err := url.Parse("http://127.0.0.1/" + strings.TrimPrefix(path, "/"))
		if err != nil || u.Host != "127.0.0.1" || u.Path == TokenPath || strings.HasPrefix(u.Path, "/_nuv/") {
			return
		}
		req, err := http.NewRequest(methods[int(m)%len(methods)], u.String(), strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
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

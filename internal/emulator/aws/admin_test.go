package aws

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// TestAdminEndpoints: /_nuv/faults takes only requests carrying the emulator's admin token (kept
// 0600 in its directory) and JSON bodies, so neither another local user nor a web page posting
// to loopback can inject faults; the refused requests change nothing. Health stays open.
func TestAdminEndpoints(t *testing.T) {
	defer catch(t)
	e := startEmulator(t, "", 0)
	fi, err := os.Stat(filepath.Join(e.Dir, emucore.AdminTokenFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin token file: %v %v, want 0600", fi, err)
	}
	tok, err := emucore.ReadAdminToken(e.Dir)
	if err != nil {
		t.Fatal(err)
	}
	_, secret, _, _ := e.Credentials()
	const fault = `{"operation":"eks:*","kind":"access-denied"}`
	for _, tc := range []struct {
		name, method, auth, ctype string
		status                    int
	}{
		{"browser form post", "POST", "", "application/x-www-form-urlencoded", 401},
		{"no token", "POST", "", "application/json", 401},
		{"signed with the AWS credentials' secret as token", "POST", "Bearer " + secret, "application/json", 401},
		{"list without token", "GET", "", "", 401},
		{"clear without token", "DELETE", "", "", 401},
		{"token, text body", "POST", "Bearer " + tok, "text/plain", 415},
		{"token, form body", "PUT", "Bearer " + tok, "application/x-www-form-urlencoded", 415},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := must(http.NewRequest(tc.method, e.URL+"/_nuv/faults", strings.NewReader(fault)))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			resp := must(http.DefaultClient.Do(req))
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("%s /_nuv/faults: %d %s, want %d", tc.method, resp.StatusCode, b, tc.status)
			}
		})
	}
	if fs := e.FaultList(); len(fs) != 0 {
		t.Fatalf("refused requests injected %v", fs)
	}
	resp := must(e.admin(http.MethodPost, fault))
	resp.Body.Close()
	if resp.StatusCode != 200 || len(e.FaultList()) != 1 {
		t.Fatalf("with the admin token: %d %v", resp.StatusCode, e.FaultList())
	}
	resp = must(http.Get(e.URL + "/_nuv/health"))
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("health: %d", resp.StatusCode)
	}
}

// TestOversizedBody: a body over the emulator's limit is answered 413 in the service's shape,
// never cut short and served.
func TestOversizedBody(t *testing.T) {
	defer catch(t)
	e := startEmulator(t, "", 0)
	big := "Action=ListRoles&Version=2010-05-08&Marker=" + strings.Repeat("a", MaxBody)
	resp := must(http.Post(e.URL+"/", "application/x-www-form-urlencoded", strings.NewReader(big)))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "<Code>RequestEntityTooLarge</Code>") {
		t.Fatalf("IAM call of %d bytes: %d %s", len(big), resp.StatusCode, b)
	}
	resp = must(http.Post(e.URL+"/clusters", "application/json", io.MultiReader(strings.NewReader(`{"name":"`+strings.Repeat("a", MaxBody)+`"}`))))
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || resp.Header.Get("X-Amzn-ErrorType") != "RequestEntityTooLarge" {
		t.Fatalf("streamed EKS call over the limit: %d %v", resp.StatusCode, resp.Header)
	}
}

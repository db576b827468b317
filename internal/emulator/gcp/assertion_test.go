package gcp_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
	"github.com/nuv-dev/nuv/internal/emulator/gcp"
)

// TestAssertionLifetime: the token endpoint takes only short-lived JWT bearer assertions, as
// Google's does: one without exp (or iat), one valid for more than an hour, one issued in the
// future and one expired are answered 400 invalid_grant; a well-formed one gets a token.
func TestAssertionLifetime(t *testing.T) {
	e := startEmulator(t, "", gcp.Options{})
	b, err := os.ReadFile(e.Env["GOOGLE_APPLICATION_CREDENTIALS"])
	if err != nil {
		t.Fatal(err)
	}
	var kf struct {
		PrivateKey   string `json:"private_key"`
		PrivateKeyID string `json:"private_key_id"`
		ClientEmail  string `json:"client_email"`
		TokenURI     string `json:"token_uri"`
	}
	if err := json.Unmarshal(b, &kf); err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode([]byte(kf.PrivateKey))
	if blk == nil {
		t.Fatal("key file: no PEM private key")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	key := k.(*rsa.PrivateKey)
	now := time.Now().Unix()
	assertion := func(claims map[string]any) string {
		seg := func(v any) string { j, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(j) }
		signed := seg(map[string]string{"alg": "RS256", "typ": "JWT", "kid": kf.PrivateKeyID}) + "." + seg(claims)
		sum := sha256.Sum256([]byte(signed))
		sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
	}
	claims := func(iat, exp int64) map[string]any {
		c := map[string]any{"iss": kf.ClientEmail, "aud": kf.TokenURI, "scope": "https://www.googleapis.com/auth/cloud-platform"}
		if iat != 0 {
			c["iat"] = iat
		}
		if exp != 0 {
			c["exp"] = exp
		}
		return c
	}
	exchange := func(a string) (int, map[string]any) {
		resp, err := http.PostForm(kf.TokenURI, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {a}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	if code, out := exchange(assertion(claims(now, now+3600))); code != 200 || out["access_token"] == nil {
		t.Fatalf("a one-hour assertion: %d %v", code, out)
	}
	for _, tc := range []struct {
		name     string
		iat, exp int64
	}{
		{"no exp", now, 0},
		{"no iat", 0, now + 600},
		{"longer than an hour", now, now + 7200},
		{"issued in the future", now + 600, now + 1200},
		{"expired", now - 7200, now - 3600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := exchange(assertion(claims(tc.iat, tc.exp)))
			desc, _ := out["error_description"].(string)
			if code != 400 || out["error"] != "invalid_grant" || !strings.Contains(desc, "Token must be a short-lived token (60 minutes)") {
				t.Fatalf("answered %d %v; want 400 invalid_grant, short-lived token", code, out)
			}
		})
	}
}

// TestAdminAndBodies: /_nuv/faults refuses requests without the admin token or with a body that
// is not JSON; a REST body over the limit is answered 413, not cut.
func TestAdminAndBodies(t *testing.T) {
	e := startEmulator(t, "", gcp.Options{})
	for _, ctype := range []string{"application/json", "application/x-www-form-urlencoded"} {
		resp, err := http.Post(e.URL+"/_nuv/faults", ctype, strings.NewReader(`{"method":"*","kind":"throttle"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("faults posted as %s without the admin token: %d, want 401", ctype, resp.StatusCode)
		}
	}
	tok, err := emucore.ReadAdminToken(e.Dir)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, e.URL+"/_nuv/faults", strings.NewReader(`{"method":"*","kind":"throttle"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("faults posted as text/plain: %d, want 415", resp.StatusCode)
	}
	code, body := rest(t, e, http.MethodPost, "/v1/"+e.loc("us-central1-a")+"/clusters", "Bearer "+token(t, e),
		`{"cluster":{"name":"big","description":"`+strings.Repeat("a", gcp.MaxBody)+`"}}`)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "Request payload size exceeds the limit") {
		t.Errorf("REST body over the limit: %d %.200s", code, body)
	}
}

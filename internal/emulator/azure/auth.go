package azure

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The emulator is its own Azure AD authority (the Microsoft identity platform's v2.0 endpoints):
// azidentity's ClientSecretCredential, with the authority host set to the emulator and instance
// discovery disabled, reads /{tenant}/v2.0/.well-known/openid-configuration and gets tokens from
// /{tenant}/oauth2/v2.0/token with the client credentials grant. ARM requests must carry one of
// those tokens (a JWT signed with the emulator's key, for the ARM audience, not expired).

// TokenLifetime is how long an access token is valid.
const TokenLifetime = time.Hour

// tokenClaims are the claims of an access token (the subset ARM looks at).
type tokenClaims struct {
	Aud   string `json:"aud"`
	Iss   string `json:"iss"`
	Tid   string `json:"tid"`
	AppID string `json:"appid"`
	Oid   string `json:"oid"`
	Iat   int64  `json:"iat"`
	Nbf   int64  `json:"nbf"`
	Exp   int64  `json:"exp"`
}

var b64 = base64.RawURLEncoding

func signToken(key []byte, c tokenClaims) string {
	h := b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	p, _ := json.Marshal(c)
	body := h + "." + b64.EncodeToString(p)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return body + "." + b64.EncodeToString(m.Sum(nil))
}

// clockSkew is the leeway ARM allows on a token's nbf.
const clockSkew = 5 * time.Minute

// verifyToken checks a bearer token's signature, audience, issuer, tenant and lifetime (nbf and
// exp, both required) against the emulator's authority at base for tenant; the error codes and
// messages are ARM's.
func verifyToken(key []byte, tok, audience, base, tenant string, now time.Time) (*tokenClaims, *armError) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, aerr(401, "InvalidAuthenticationToken", "The access token is invalid.")
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(parts[0] + "." + parts[1]))
	sig, err := b64.DecodeString(parts[2])
	if err != nil || subtle.ConstantTimeCompare(sig, m.Sum(nil)) != 1 {
		return nil, aerr(401, "InvalidAuthenticationTokenTenant", "The access token is from the wrong issuer or its signature is invalid (nuv emulator: get tokens from the emulator's authority, AZURE_AUTHORITY_HOST)")
	}
	p, err := b64.DecodeString(parts[1])
	var c tokenClaims
	if err != nil || json.Unmarshal(p, &c) != nil {
		return nil, aerr(401, "InvalidAuthenticationToken", "The access token is invalid.")
	}
	if strings.TrimSuffix(c.Aud, "/") != strings.TrimSuffix(audience, "/") {
		return nil, aerr(401, "InvalidAuthenticationTokenAudience", "The access token has been obtained for wrong audience or resource '%s'. It should exactly match with one of the allowed audiences '%s'.", c.Aud, audience)
	}
	if iss := base + "/" + tenant + "/v2.0"; c.Iss != iss || c.Tid != tenant {
		return nil, aerr(401, "InvalidAuthenticationTokenTenant", "The access token is from the wrong issuer '%s'. It must match the tenant '%s' associated with this subscription. Please use the authority (URL) '%s' to get the token. Note, if the subscription is transferred to another tenant there is no impact to the services, but information about new tenant could take time to propagate (up to an hour). If you just transferred your subscription and see this error message, please try back later.", c.Iss, iss, base+"/"+tenant)
	}
	if c.Nbf == 0 || c.Exp == 0 {
		return nil, aerr(401, "InvalidAuthenticationToken", "The access token is invalid: it carries no validity period (nbf and exp).")
	}
	if now.Add(clockSkew).Unix() < c.Nbf {
		return nil, aerr(401, "InvalidAuthenticationToken", "The access token is not yet valid: it is valid from UTC time '%s', later than current UTC time '%s'.", time.Unix(c.Nbf, 0).UTC().Format(time.RFC1123), now.UTC().Format(time.RFC1123))
	}
	if now.Unix() >= c.Exp {
		return nil, aerr(401, "ExpiredAuthenticationToken", "The access token expiry UTC time '%s' is earlier than current UTC time '%s'.", time.Unix(c.Exp, 0).UTC().Format(time.RFC1123), now.UTC().Format(time.RFC1123))
	}
	return &c, nil
}

// aadError is the OAuth 2.0 error body of the Microsoft identity platform.
type aadError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
	Codes       []int  `json:"error_codes,omitempty"`
	Timestamp   string `json:"timestamp"`
	TraceID     string `json:"trace_id"`
}

func writeAADError(w http.ResponseWriter, status int, code string, aadsts int, format string, a ...any) {
	writeJSON(w, status, aadError{Error: code, Description: fmt.Sprintf("AADSTS%d: ", aadsts) + fmt.Sprintf(format, a...),
		Codes: []int{aadsts}, Timestamp: time.Now().UTC().Format("2006-01-02 15:04:05Z"), TraceID: newUUID()})
}

// authority serves /{tenant}/v2.0/.well-known/openid-configuration and /{tenant}/oauth2/v2.0/token.
func (s *Server) authority(w http.ResponseWriter, r *http.Request, segs []string) bool {
	s.Mu.Lock()
	st := s.St
	tenant, clientID, secret, key := st.TenantID, st.ClientID, st.ClientSecret, st.SigningKey
	s.Mu.Unlock()
	base := s.BaseURL()
	switch {
	case len(segs) == 4 && segs[1] == "v2.0" && segs[2] == ".well-known" && segs[3] == "openid-configuration":
		if segs[0] != tenant && segs[0] != "organizations" {
			writeAADError(w, 400, "invalid_tenant", 90002, "Tenant '%s' not found. Check to make sure you have the correct tenant ID (nuv emulator: AZURE_TENANT_ID=%s).", segs[0], tenant)
			return true
		}
		t := base + "/" + tenant
		writeJSON(w, 200, map[string]any{
			"issuer":                                t + "/v2.0",
			"authorization_endpoint":                t + "/oauth2/v2.0/authorize",
			"token_endpoint":                        t + "/oauth2/v2.0/token",
			"jwks_uri":                              t + "/discovery/v2.0/keys",
			"tenant_region_scope":                   "NA",
			"response_types_supported":              []string{"code", "id_token", "token id_token"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_post", "private_key_jwt", "client_secret_basic"},
		})
		return true
	case len(segs) == 4 && segs[1] == "oauth2" && segs[2] == "v2.0" && segs[3] == "token":
		if r.Method != http.MethodPost {
			writeAADError(w, 405, "invalid_request", 900561, "The endpoint only accepts POST requests.")
			return true
		}
		if segs[0] != tenant {
			writeAADError(w, 400, "invalid_tenant", 90002, "Tenant '%s' not found (nuv emulator: AZURE_TENANT_ID=%s).", segs[0], tenant)
			return true
		}
		if err := r.ParseForm(); err != nil {
			writeAADError(w, 400, "invalid_request", 900144, "The request body must contain the following parameter: 'grant_type'.")
			return true
		}
		if f := s.fault("Token", ""); f != nil {
			if f.Kind == "expired-secret" {
				writeAADError(w, 401, "invalid_client", 7000222, "The provided client secret keys for app '%s' are expired. Visit the Azure portal to create new keys for your app.", r.PostForm.Get("client_id"))
				return true
			}
			writeFault(w, f, "Token")
			return true
		}
		if g := r.PostForm.Get("grant_type"); g != "client_credentials" {
			writeAADError(w, 400, "unsupported_grant_type", 70003, "The app requested an unsupported grant type '%s' (nuv emulator serves client_credentials).", g)
			return true
		}
		id, sec := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		if u, p, ok := r.BasicAuth(); ok && id == "" {
			id, sec = u, p
		}
		if id != clientID {
			writeAADError(w, 400, "unauthorized_client", 700016, "Application with identifier '%s' was not found in the directory '%s'.", id, tenant)
			return true
		}
		if subtle.ConstantTimeCompare([]byte(sec), []byte(secret)) != 1 {
			writeAADError(w, 401, "invalid_client", 7000215, "Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '%s'.", id)
			return true
		}
		scope := r.PostForm.Get("scope")
		aud := strings.TrimSuffix(strings.Fields(scope + " x")[0], "/.default")
		if aud != strings.TrimSuffix(base, "/") && aud != base+"/" {
			writeAADError(w, 400, "invalid_resource", 500011, "The resource principal named %s was not found in the tenant (nuv emulator serves the audience %s).", aud, base)
			return true
		}
		k, _ := hex.DecodeString(key)
		now := time.Now()
		tok := signToken(k, tokenClaims{Aud: aud, Iss: base + "/" + tenant + "/v2.0", Tid: tenant, AppID: id, Oid: id,
			Iat: now.Unix(), Nbf: now.Unix(), Exp: now.Add(TokenLifetime).Unix()})
		writeJSON(w, 200, map[string]any{"token_type": "Bearer", "expires_in": int(TokenLifetime.Seconds()),
			"ext_expires_in": int(TokenLifetime.Seconds()), "access_token": tok})
		return true
	}
	return false
}

// authenticate checks the bearer token of an ARM request.
func (s *Server) authenticate(r *http.Request) *armError {
	h := r.Header.Get("Authorization")
	if h == "" {
		return aerr(401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.")
	}
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return aerr(401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is provided in an invalid format.")
	}
	s.Mu.Lock()
	key, tenant := s.St.SigningKey, s.St.TenantID
	s.Mu.Unlock()
	k, _ := hex.DecodeString(key)
	base := s.BaseURL()
	_, e := verifyToken(k, tok, base, base, tenant, time.Now())
	return e
}

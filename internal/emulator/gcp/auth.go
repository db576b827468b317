package gcp

import (
	"crypto"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// The emulator's credentials work the way Google's do for a service account: it issues a service
// account key file (CredentialsFile, type service_account) whose token_uri is the emulator's own
// token endpoint, so Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS) sign a JWT
// with the key and exchange it there (the OAuth 2.0 JWT bearer grant, RFC 7523) for an access
// token. API calls carry that token as "Authorization: Bearer"; it expires after
// Options.TokenLifetime. Other grants (authorized_user refresh tokens, metadata server) are not
// served: the emulator names what it accepts.

// TokenPath is the emulator's OAuth 2.0 token endpoint.
const TokenPath = "/token"

// ContainerEndpointEnv is the variable that points gcloud and nuv's GKE provider at the
// emulator's GKE API: http://127.0.0.1:PORT/ (`nuv emulator env gcp` prints it).
const ContainerEndpointEnv = "CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER"

// CredentialsFileName is the service account key file the emulator writes in its directory.
const CredentialsFileName = "application_default_credentials.json"

const jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

const tokenPrefix = "ya29.nuv."

// maxAssertionLife is the longest exp - iat Google accepts in a JWT bearer assertion (seconds);
// clockSkew is the leeway on iat and exp.
const (
	maxAssertionLife = 3600
	clockSkew        = 60
)

// credentialsFile is the service account key file (the fields ADC reads).
type credentialsFile struct {
	Type           string `json:"type"`
	ProjectID      string `json:"project_id"`
	PrivateKeyID   string `json:"private_key_id"`
	PrivateKey     string `json:"private_key"`
	ClientEmail    string `json:"client_email"`
	ClientID       string `json:"client_id"`
	AuthURI        string `json:"auth_uri"`
	TokenURI       string `json:"token_uri"`
	UniverseDomain string `json:"universe_domain"`
}

// writeCredentials writes the service account key file for the emulator listening at base; s.Mu
// is held.
func (s *Server) writeCredentials() error {
	f := credentialsFile{Type: "service_account", ProjectID: s.St.Project, PrivateKeyID: s.St.KeyID, PrivateKey: s.St.PrivateKey,
		ClientEmail: s.St.ServiceAccount, ClientID: s.St.ProjectNumber, AuthURI: "https://accounts.google.com/o/oauth2/auth",
		TokenURI: s.Base + TokenPath, UniverseDomain: "googleapis.com"}
	b, _ := json.MarshalIndent(f, "", "  ")
	return fsutil.WriteFileAtomic(filepath.Join(s.Dir, CredentialsFileName), append(b, '\n'), 0o600)
}

// tokenClaims is what an access token the emulator issues says.
type tokenClaims struct {
	Sub string `json:"sub"`
	Exp int64  `json:"exp"`
}

// mintToken issues an access token for the service account, valid for the token lifetime.
func (s *Server) mintToken(now time.Time) (string, time.Duration) {
	life := s.tokenLife
	payload, _ := json.Marshal(tokenClaims{Sub: s.St.ServiceAccount, Exp: now.Add(life).Unix()})
	p := base64.RawURLEncoding.EncodeToString(payload)
	return tokenPrefix + p + "." + s.sign(p), life
}

func (s *Server) sign(p string) string {
	key, _ := base64.StdEncoding.DecodeString(s.St.TokenSecret)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(p))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// errUnauthenticated is GKE's answer to a missing, malformed or expired access token.
const unauthenticatedMsg = "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."

// checkToken validates a bearer token and returns the account it was issued to; s.Mu is held.
func (s *Server) checkToken(tok string, now time.Time) (string, error) {
	if tok == "" {
		return "", errors.New("no bearer token (nuv emulator: use Application Default Credentials with the key file `nuv emulator env` names)")
	}
	rest, ok := strings.CutPrefix(tok, tokenPrefix)
	p, sig, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || !hmac.Equal([]byte(sig), []byte(s.sign(p))) {
		return "", errors.New("the bearer token was not issued by this emulator")
	}
	b, err := base64.RawURLEncoding.DecodeString(p)
	var c tokenClaims
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		return "", errors.New("the bearer token is malformed")
	}
	if now.Unix() >= c.Exp {
		return "", fmt.Errorf("the access token expired at %s", time.Unix(c.Exp, 0).UTC().Format(time.RFC3339))
	}
	return c.Sub, nil
}

// bearer is the token of an Authorization header ("" if none).
func bearer(h string) string {
	if t, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	if t, ok := strings.CutPrefix(h, "bearer "); ok {
		return strings.TrimSpace(t)
	}
	return ""
}

// tokenEndpoint serves POST /token: the JWT bearer grant with the emulator's service account key.
func (s *Server) tokenEndpoint(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		oauthError(w, http.StatusMethodNotAllowed, "invalid_request", "the token endpoint takes POST")
		return
	}
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if g := r.PostForm.Get("grant_type"); g != jwtBearerGrant {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type",
			fmt.Sprintf("Invalid grant_type: %s (nuv emulator: only the service account JWT bearer grant %s is served; use the key file `nuv emulator env` names)", g, jwtBearerGrant))
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if f := s.fault("Token", ""); f != nil {
		if f.Kind == "throttle" {
			oauthError(w, http.StatusTooManyRequests, "rate_limit_exceeded", "Rate limit exceeded (nuv emulator: injected fault on Token)")
		} else {
			oauthError(w, f.httpStatus(), "invalid_grant", f.message("Token"))
		}
		return
	}
	if err := s.verifyAssertion(r.PostForm.Get("assertion"), time.Now()); err != nil {
		s.Log.V(1).Infof("GKE emulator: token refused: %v", err)
		oauthError(w, http.StatusBadRequest, "invalid_grant", err.Error())
		return
	}
	tok, life := s.mintToken(time.Now())
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "expires_in": int(life.Seconds()), "token_type": "Bearer"})
}

// verifyAssertion checks a JWT signed with the service account key; s.Mu is held.
func (s *Server) verifyAssertion(jwt string, now time.Time) error {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return errors.New("Invalid JWT: the assertion is not a JWT")
	}
	var hdr struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	var cl struct {
		Iss   string `json:"iss"`
		Aud   string `json:"aud"`
		Scope string `json:"scope"`
		Exp   int64  `json:"exp"`
		Iat   int64  `json:"iat"`
	}
	if err := decodeSegment(parts[0], &hdr); err != nil {
		return fmt.Errorf("Invalid JWT header: %v", err)
	}
	if err := decodeSegment(parts[1], &cl); err != nil {
		return fmt.Errorf("Invalid JWT claims: %v", err)
	}
	if hdr.Alg != "RS256" {
		return fmt.Errorf("Invalid JWT: algorithm %q (want RS256)", hdr.Alg)
	}
	key, err := s.St.privateKey()
	if err != nil {
		return err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return errors.New("Invalid JWT Signature.")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		return errors.New("Invalid JWT Signature.")
	}
	if cl.Iss != s.St.ServiceAccount {
		return fmt.Errorf("Invalid JWT: the issuer %q is not a service account of project %s", cl.Iss, s.St.Project)
	}
	if hdr.Kid != "" && hdr.Kid != s.St.KeyID {
		return errors.New("Invalid JWT Signature: the key was deleted or never existed")
	}
	// Google takes only short-lived assertions: iat and exp both present, at most an hour apart,
	// and now between them (a minute of clock skew either way). An assertion without exp is not
	// "never expiring": it is refused like one that expired.
	if cl.Exp == 0 || cl.Iat == 0 || cl.Exp < cl.Iat || cl.Exp-cl.Iat > maxAssertionLife ||
		now.Unix()+clockSkew < cl.Iat || now.Unix() > cl.Exp+clockSkew {
		return errors.New("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")
	}
	if cl.Scope == "" && cl.Aud == "" {
		return errors.New("Invalid JWT: no scope and no audience")
	}
	return nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(seg, "="))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

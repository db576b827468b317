package emucore

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// The admin endpoints of an emulator (/_nuv/faults) change what it answers, so they are not open
// to whoever reaches its port (another user of the machine, or a web page in the user's browser
// posting to loopback): a request must carry "Authorization: Bearer <token>" with the emulator's
// admin token, kept 0600 in its state directory and printed by `nuv emulator env`, and a body
// must be "Content-Type: application/json" (which a browser cannot send cross-site without a
// preflight the emulator never grants).

// AdminTokenFile is the file in an emulator's state directory holding its admin token.
const AdminTokenFile = "admin-token"

// AdminTokenEnv names the variable `nuv emulator env` prints an emulator's admin token in, by
// cloud ("aws", "azure", "gcp").
func AdminTokenEnv(cloud string) string {
	return "NUV_EMULATOR_" + strings.ToUpper(cloud) + "_ADMIN_TOKEN"
}

// EnsureAdminToken returns the admin token of the emulator with state in dir, creating it (32
// random bytes, hex, written 0600 atomically) when there is none.
func EnsureAdminToken(dir string) (string, error) {
	tok, err := ReadAdminToken(dir)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return tok, err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("emulator admin token: %w", err)
	}
	tok = hex.EncodeToString(b)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("emulator admin token: %w", err)
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(dir, AdminTokenFile), []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("emulator admin token: %w", err)
	}
	return tok, nil
}

// ReadAdminToken reads the admin token of the emulator with state in dir; os.ErrNotExist
// (wrapped) when it has none yet.
func ReadAdminToken(dir string) (string, error) {
	p := filepath.Join(dir, AdminTokenFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("emulator admin token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("emulator admin token %s is empty: remove it and restart the emulator", p)
	}
	return tok, nil
}

// AdminAllowed checks a request to an admin endpoint of the emulator named name ("nuv emulator")
// whose admin token is token; when it is refused it answers 401 (no or another token) or 415
// (a body that is not JSON) and returns false.
func AdminAllowed(w http.ResponseWriter, r *http.Request, name, token string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="nuv emulator admin"`)
		http.Error(w, name+": "+r.URL.Path+" needs the emulator's admin token (Authorization: Bearer; `nuv emulator env` prints it, `nuv emulator faults` sends it)", http.StatusUnauthorized)
		return false
	}
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		return JSONBody(w, r, name)
	}
	return true
}

// JSONBody refuses (415) a request whose Content-Type is not application/json and returns false.
func JSONBody(w http.ResponseWriter, r *http.Request, name string) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		http.Error(w, fmt.Sprintf("%s: %s takes Content-Type: application/json (got %q)", name, r.URL.Path, r.Header.Get("Content-Type")), http.StatusUnsupportedMediaType)
		return false
	}
	return true
}

// NewAdminRequest is a request to an emulator's admin endpoint at url carrying its admin token
// (and, with a body, Content-Type: application/json): what `nuv emulator faults` and tests send.
func NewAdminRequest(ctx context.Context, method, url, token string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

package registry

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// Pushes need credentials; pulls do not. Whoever reaches the registry (any local user on
// 127.0.0.1, any container on kind's network through the relay) may pull, as the clusters' nodes
// do with no credentials configured; only a client with the push token may write (upload blobs,
// put or delete manifests). The token is made by nuv when the registry is first served, kept 0600
// in the registry's directory, and handed to nuv's pushes by Keychain and to docker or podman by
// `nuv image login` (user PushUser, the token as password: HTTP basic authentication, as the
// distribution spec's registries take it).

// PushUser is the user name of the registry's push credentials.
const PushUser = "nuv"

// pushTokenFile holds the push token in the registry directory.
const pushTokenFile = "push-token"

// EnsurePushToken returns the push token of the registry in dir, making it (32 random bytes,
// hex, written 0600 atomically) when there is none.
func EnsurePushToken(dir string) (string, error) {
	tok, err := ReadPushToken(dir)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return tok, err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("registry push token: %w", err)
	}
	tok = hex.EncodeToString(b)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("registry push token: %w", err)
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(dir, pushTokenFile), []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("registry push token: %w", err)
	}
	return tok, nil
}

// ReadPushToken reads the push token of the registry in dir; os.ErrNotExist (wrapped) when the
// registry was never served.
func ReadPushToken(dir string) (string, error) {
	p := filepath.Join(dir, pushTokenFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("registry push token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("registry push token %s is empty: remove it and restart the registry (`nuv registry down && nuv registry up`)", p)
	}
	return tok, nil
}

// PushAuth is the authenticator of pushes to the registry in dir.
func PushAuth(dir string) (authn.Authenticator, error) {
	tok, err := ReadPushToken(dir)
	if err != nil {
		return nil, err
	}
	return authn.FromConfig(authn.AuthConfig{Username: PushUser, Password: tok}), nil
}

// Keychain gives the push credentials of nuv's registry (its directory Dir) for the hosts it
// serves on loopback (localhost:PORT, 127.0.0.1:PORT, [::1]:PORT), and nothing for any other
// registry; a registry never served is anonymous.
type Keychain struct{ Dir string }

var _ authn.Keychain = Keychain{}

// Resolve implements authn.Keychain.
func (k Keychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	st, err := ReadState(k.Dir)
	if err != nil {
		return authn.Anonymous, nil // not running here: nothing to give
	}
	_, port, _ := net.SplitHostPort(st.Addr)
	host, rport, err := net.SplitHostPort(r.RegistryStr())
	if err != nil || rport != port || !isLoopbackName(host) {
		return authn.Anonymous, nil
	}
	a, err := PushAuth(k.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return authn.Anonymous, nil
	}
	return a, err
}

func isLoopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// writeMethod reports whether method changes the registry (blob uploads, manifest puts, deletes).
func writeMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// authorized reports whether r may change the registry whose push token is token.
func authorized(r *http.Request, token string) bool {
	u, p, ok := r.BasicAuth()
	return ok && token != "" && subtle.ConstantTimeCompare([]byte(u), []byte(PushUser)) == 1 &&
		subtle.ConstantTimeCompare([]byte(p), []byte(token)) == 1
}

// writeRegistryError answers an error in the distribution spec's shape.
func writeRegistryError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, "{\"errors\":[{\"code\":%q,\"message\":%q}]}\n", code, msg)
}

// unauthorized answers a write without the push credentials: 401 with a basic challenge, so
// docker and podman send what `nuv image login` stored.
func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="nuv registry"`)
	writeRegistryError(w, http.StatusUnauthorized, "UNAUTHORIZED",
		"authentication required to push to nuv's registry: nuv's own pushes send it; for docker or podman run `REGISTRY=localhost:PORT nuv image login`")
}

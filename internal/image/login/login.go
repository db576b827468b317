// Package login is `docker-login` without docker: it takes registry credentials from the
// environment (.env: GITHUB_USER/GITHUB_TOKEN for ghcr.io, or REGISTRY with REGISTRY_USER and
// REGISTRY_PASSWORD), stores them in the standard ~/.docker/config.json format (honouring
// DOCKER_CONFIG; mode 0600; atomic; never printed) and offers the keychain pushes authenticate with.
package login

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/registry"
)

// GHCR is GitHub's container registry, the default for GITHUB_USER/GITHUB_TOKEN.
const GHCR = "ghcr.io"

// Credentials for one registry. String never shows the secret.
type Credentials struct {
	Registry string
	Username string
	Password string
	// From names the variables the credentials came from (for messages).
	From string
}

func (c Credentials) String() string {
	return fmt.Sprintf("%s@%s (from %s)", c.Username, c.Registry, c.From)
}

// MissingError says which variables to set for a registry.
type MissingError struct{ Registry string }

func (e *MissingError) Error() string {
	return Hint(e.Registry)
}

// Hint tells which variables give credentials for registry.
func Hint(registry string) string {
	if registry == GHCR || registry == "" {
		return fmt.Sprintf("no credentials for %s: set GITHUB_USER and GITHUB_TOKEN (a token with write:packages) in .env or the environment, then run `nuv image login`", GHCR)
	}
	return fmt.Sprintf("no credentials for %s: set REGISTRY=%s, REGISTRY_USER and REGISTRY_PASSWORD in .env or the environment, then run `nuv image login`", registry, registry)
}

// FromEnv picks the credentials for registry (or, when registry is "", the one the variables
// name): REGISTRY_USER/REGISTRY_PASSWORD when REGISTRY matches (or is unset and registry is not
// ghcr.io), GITHUB_USER/GITHUB_TOKEN for ghcr.io.
func FromEnv(getenv func(string) string, registry string) (Credentials, error) {
	reg := normalize(getenv("REGISTRY"))
	if registry == "" {
		registry = reg
		if registry == "" {
			registry = GHCR
		}
	}
	registry = normalize(registry)
	user, pass := getenv("REGISTRY_USER"), getenv("REGISTRY_PASSWORD")
	if user != "" && pass != "" && (reg == registry || (reg == "" && registry != GHCR)) {
		return Credentials{Registry: registry, Username: user, Password: pass, From: "REGISTRY_USER/REGISTRY_PASSWORD"}, nil
	}
	if c, ok := localRegistry(getenv, registry); ok {
		return c, nil
	}
	if registry == GHCR {
		if u, t := getenv("GITHUB_USER"), getenv("GITHUB_TOKEN"); u != "" && t != "" {
			return Credentials{Registry: registry, Username: u, Password: t, From: "GITHUB_USER/GITHUB_TOKEN"}, nil
		}
	}
	return Credentials{}, &MissingError{Registry: registry}
}

// localRegistry gives the push credentials of nuv's loopback registry when registry names it
// (localhost:PORT or 127.0.0.1:PORT of the registry running under NUV_HOME): `nuv image login`
// stores them for docker and podman.
func localRegistry(getenv func(string) string, reg string) (Credentials, bool) {
	home, err := paths.Home(getenv)
	if err != nil {
		return Credentials{}, false
	}
	dir := registry.Dir(home)
	r, err := name.NewRegistry(reg, name.Insecure)
	if err != nil {
		return Credentials{}, false
	}
	a, err := (registry.Keychain{Dir: dir}).Resolve(r)
	if err != nil || a == authn.Anonymous {
		return Credentials{}, false
	}
	cfg, err := a.Authorization()
	if err != nil {
		return Credentials{}, false
	}
	return Credentials{Registry: reg, Username: cfg.Username, Password: cfg.Password, From: "nuv's loopback registry (" + dir + ")"}, true
}

func normalize(reg string) string {
	reg = strings.TrimSpace(reg)
	reg = strings.TrimPrefix(reg, "https://")
	reg = strings.TrimPrefix(reg, "http://")
	reg = strings.TrimSuffix(reg, "/")
	if i := strings.Index(reg, "/"); i >= 0 {
		reg = reg[:i]
	}
	if reg == "docker.io" || reg == "index.docker.io" || reg == "registry-1.docker.io" {
		return "https://index.docker.io/v1/"
	}
	return reg
}

// ConfigDir is $DOCKER_CONFIG, else ~/.docker.
func ConfigDir(getenv func(string) string) (string, error) {
	if d := getenv("DOCKER_CONFIG"); d != "" {
		return d, nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("locate docker config: set DOCKER_CONFIG or HOME: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".docker"), nil
}

// Store writes c into <dir>/config.json, keeping every other entry and setting, with mode 0600.
func Store(dir string, c Credentials) (string, error) {
	path := filepath.Join(dir, "config.json")
	doc := map[string]json.RawMessage{}
	if data, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(data))) > 0 {
		if err := json.Unmarshal(data, &doc); err != nil {
			return "", fmt.Errorf("%s is not valid JSON (fix or remove it): %w", path, err)
		}
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	auths := map[string]json.RawMessage{}
	if raw, ok := doc["auths"]; ok {
		if err := json.Unmarshal(raw, &auths); err != nil {
			return "", fmt.Errorf("%s: \"auths\" is not an object: %w", path, err)
		}
	}
	entry, _ := json.Marshal(map[string]string{
		"auth": base64.StdEncoding.EncodeToString([]byte(c.Username + ":" + c.Password)),
	})
	auths[c.Registry] = entry
	rawAuths, _ := json.Marshal(auths)
	doc["auths"] = rawAuths
	out, err := json.MarshalIndent(doc, "", "\t")
	if err != nil {
		return "", err
	}
	if err := fsutil.WriteFileAtomic(path, append(out, '\n'), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// Verify checks c against the registry's /v2/ endpoint, the way `docker login` does.
func Verify(ctx context.Context, c Credentials, rt http.RoundTripper) error {
	if rt == nil {
		rt = http.DefaultTransport
	}
	reg, err := name.NewRegistry(c.Registry)
	if err != nil {
		return fmt.Errorf("registry %q: %w", c.Registry, err)
	}
	auth := authn.FromConfig(authn.AuthConfig{Username: c.Username, Password: c.Password})
	tr, err := transport.NewWithContext(ctx, reg, auth, rt, []string{})
	if err != nil {
		return explain(reg.RegistryStr(), err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, reg.Scheme()+"://"+reg.RegistryStr()+"/v2/", nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return explain(reg.RegistryStr(), err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return fmt.Errorf("registry %s rejected the credentials from %s (HTTP %d)", reg.RegistryStr(), c.From, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("registry %s answered HTTP %d to /v2/", reg.RegistryStr(), resp.StatusCode)
	}
	return nil
}

func explain(registry string, err error) error {
	var te *transport.Error
	if errors.As(err, &te) && (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) {
		return fmt.Errorf("registry %s rejected the credentials (HTTP %d)", registry, te.StatusCode)
	}
	return fmt.Errorf("registry %s: %w", registry, err)
}

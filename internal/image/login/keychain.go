package login

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/registry"
)

// Keychain resolves credentials from the config.json in Dir (the one Store writes), then from
// authn.DefaultKeychain (docker credential helpers, $DOCKER_CONFIG of the process). Reading the
// file here, rather than through the process environment, lets a .env's DOCKER_CONFIG apply.
type Keychain struct{ Dir string }

var _ authn.Keychain = Keychain{}

// NewKeychain is the keychain pushes use for an environment: the docker config, then nuv's
// loopback registry's push credentials (for its own host only), then the default keychain.
func NewKeychain(getenv func(string) string) (authn.Keychain, error) {
	dir, err := ConfigDir(getenv)
	if err != nil {
		return nil, err
	}
	kcs := []authn.Keychain{Keychain{Dir: dir}}
	if home, err := paths.Home(getenv); err == nil {
		kcs = append(kcs, registry.Keychain{Dir: registry.Dir(home)})
	}
	return authn.NewMultiKeychain(append(kcs, authn.DefaultKeychain)...), nil
}

// Resolve implements authn.Keychain.
func (k Keychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	path := filepath.Join(k.Dir, "config.json")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return authn.Anonymous, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var doc struct {
		Auths map[string]struct {
			Auth          string `json:"auth"`
			Username      string `json:"username"`
			Password      string `json:"password"`
			IdentityToken string `json:"identitytoken"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", path, err)
	}
	want := normalize(r.RegistryStr())
	for key, e := range doc.Auths {
		if normalize(key) != want {
			continue
		}
		cfg := authn.AuthConfig{Username: e.Username, Password: e.Password, IdentityToken: e.IdentityToken}
		if e.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(e.Auth)
			if err != nil {
				return nil, fmt.Errorf("%s: the auth entry for %s is not base64", path, key)
			}
			u, p, ok := strings.Cut(string(raw), ":")
			if !ok {
				return nil, fmt.Errorf("%s: the auth entry for %s is not user:password", path, key)
			}
			cfg.Username, cfg.Password = u, p
		}
		if cfg == (authn.AuthConfig{}) {
			continue
		}
		return authn.FromConfig(cfg), nil
	}
	return authn.Anonymous, nil
}

package login

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/nuv-dev/nuv/internal/registry"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name     string
		vars     map[string]string
		registry string
		wantReg  string
		wantFrom string
		wantErr  string
	}{
		{"github", map[string]string{"GITHUB_USER": "u", "GITHUB_TOKEN": "t"}, "", "ghcr.io", "GITHUB_USER/GITHUB_TOKEN", ""},
		{"registry vars", map[string]string{"REGISTRY": "quay.io", "REGISTRY_USER": "u", "REGISTRY_PASSWORD": "p"}, "", "quay.io", "REGISTRY_USER/REGISTRY_PASSWORD", ""},
		{"registry url form", map[string]string{"REGISTRY": "https://quay.io/", "REGISTRY_USER": "u", "REGISTRY_PASSWORD": "p"}, "quay.io", "quay.io", "REGISTRY_USER/REGISTRY_PASSWORD", ""},
		{"explicit ghcr with github vars", map[string]string{"REGISTRY": "quay.io", "REGISTRY_USER": "u", "REGISTRY_PASSWORD": "p", "GITHUB_USER": "g", "GITHUB_TOKEN": "t"}, "ghcr.io", "ghcr.io", "GITHUB_USER/GITHUB_TOKEN", ""},
		{"nothing for ghcr", map[string]string{}, "", "", "", "GITHUB_USER and GITHUB_TOKEN"},
		{"nothing for other", map[string]string{}, "registry.example.com", "", "", "REGISTRY=registry.example.com, REGISTRY_USER and REGISTRY_PASSWORD"},
		{"registry vars for another host", map[string]string{"REGISTRY": "quay.io", "REGISTRY_USER": "u", "REGISTRY_PASSWORD": "p"}, "example.com", "", "", "REGISTRY=example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := FromEnv(env(tc.vars), tc.registry)
			if tc.wantErr != "" {
				var me *MissingError
				if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || c.Registry != tc.wantReg || c.From != tc.wantFrom {
				t.Fatalf("FromEnv = %+v, %v; want %s from %s", c, err, tc.wantReg, tc.wantFrom)
			}
		})
	}
}

func TestCredentialsStringHidesSecret(t *testing.T) {
	c := Credentials{Registry: "ghcr.io", Username: "me", Password: "hunter2-secret", From: "GITHUB_USER/GITHUB_TOKEN"}
	for _, s := range []string{c.String(), func() string { b, _ := json.Marshal(c.String()); return string(b) }()} {
		if strings.Contains(s, "hunter2") {
			t.Fatalf("secret printed: %s", s)
		}
	}
}

func TestStoreMergesAndKeychainResolves(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "docker")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	existing := `{"auths":{"quay.io":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("q:qq")) + `"}},"credHelpers":{"gcr.io":"gcloud"},"psFormat":"table"}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(existing), 0o644); err != nil {
		t.Fatal(err)
	}
	path, err := Store(dir, Credentials{Registry: "ghcr.io", Username: "me", Password: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %o, want 600", st.Mode().Perm())
	}
	var doc map[string]json.RawMessage
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"auths", "credHelpers", "psFormat"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("key %s lost from config.json", k)
		}
	}
	kc := Keychain{Dir: dir}
	for reg, want := range map[string]string{"ghcr.io": "me:tok", "quay.io": "q:qq", "example.com": ""} {
		r, _ := name.NewRegistry(reg)
		a, err := kc.Resolve(r)
		if err != nil {
			t.Fatal(err)
		}
		if want == "" {
			if a != authn.Anonymous {
				t.Errorf("%s: want anonymous", reg)
			}
			continue
		}
		cfg, err := a.Authorization()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Username+":"+cfg.Password != want {
			t.Errorf("%s resolved to %s, want %s", reg, cfg.Username, want)
		}
	}
	if _, err := (Keychain{Dir: t.TempDir()}).Resolve(name.MustParseReference("ghcr.io/x").Context()); err != nil {
		t.Errorf("missing config.json should be anonymous, got %v", err)
	}
}

func TestStoreRefusesBrokenConfig(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "config.json"), []byte("{not json"), 0o600)
	if _, err := Store(dir, Credentials{Registry: "ghcr.io", Username: "u", Password: "p"}); err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Fatalf("broken config.json: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "config.json")); string(data) != "{not json" {
		t.Error("a broken config.json was overwritten")
	}
}

func TestConfigDir(t *testing.T) {
	if d, _ := ConfigDir(env(map[string]string{"DOCKER_CONFIG": "/x/d", "HOME": "/h"})); d != "/x/d" {
		t.Errorf("DOCKER_CONFIG not honoured: %s", d)
	}
	if d, _ := ConfigDir(env(map[string]string{"HOME": "/h"})); d != "/h/.docker" {
		t.Errorf("default: %s", d)
	}
}

// TestLocalRegistryCredentials: `nuv image login` for nuv's loopback registry takes its push
// credentials (no variables needed), and the push keychain gives them for that host only.
func TestLocalRegistryCredentials(t *testing.T) {
	home := t.TempDir()
	dir := registry.Dir(home)
	tok, err := registry.EnsurePushToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := registry.WriteState(dir, registry.State{PID: os.Getpid(), Addr: "127.0.0.1:5999", Dir: dir}); err != nil {
		t.Fatal(err)
	}
	vars := env(map[string]string{"NUV_HOME": home, "DOCKER_CONFIG": t.TempDir()})
	c, err := FromEnv(vars, "localhost:5999")
	if err != nil || c.Username != registry.PushUser || c.Password != tok || !strings.Contains(c.From, "loopback registry") {
		t.Fatalf("FromEnv(localhost:5999) = %v (%v)", c, err)
	}
	if strings.Contains(c.String(), tok) {
		t.Fatal("the credentials' String shows the token")
	}
	if _, err := FromEnv(vars, "localhost:5998"); err == nil {
		t.Fatal("credentials for another loopback port")
	}
	kc, err := NewKeychain(vars)
	if err != nil {
		t.Fatal(err)
	}
	for reg, want := range map[string]bool{"localhost:5999": true, "127.0.0.1:5999": true, "ghcr.io": false} {
		r, _ := name.NewRegistry(reg)
		a, err := kc.Resolve(r)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := a.Authorization()
		if got := cfg.Password == tok; got != want {
			t.Errorf("keychain for %s gives the push token: %v, want %v", reg, got, want)
		}
	}
}

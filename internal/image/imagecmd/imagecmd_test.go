package imagecmd

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image/gobuild"
	"github.com/nuv-dev/nuv/internal/image/imagetest"
)

// harness runs nuv image commands in-process with a map environment and records every byte
// they print, so tests can scan it for secrets.
type harness struct {
	t       *testing.T
	vars    map[string]string
	dir     string
	exe     string
	mu      sync.Mutex
	printed bytes.Buffer
}

func newHarness(t *testing.T) *harness {
	dir := t.TempDir()
	imagetest.GoModule(t, dir)
	home := t.TempDir()
	return &harness{t: t, dir: dir, vars: map[string]string{
		"NUV_PROJECT":       dir,
		"NUV_HOME":          filepath.Join(home, "nuv"),
		"HOME":              home,
		"DOCKER_CONFIG":     filepath.Join(home, "docker"),
		"NUV_OPERATOR_MAIN": "./cmd/hello",
		"BASETAG":           "0.1.0-dev",
	}}
}

// run executes `nuv image args...` and returns stdout, stderr and the error.
func (h *harness) run(args ...string) (string, string, error) {
	var out, errb bytes.Buffer
	env := &cli.Env{
		Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb},
		Log:     cli.NewLogger(&errb, 2),
		Getenv:  func(k string) string { return h.vars[k] },
		Dir:     h.dir,
		Exe:     h.exe,
	}
	err := Run(context.Background(), env, args)
	h.mu.Lock()
	h.printed.Write(out.Bytes())
	h.printed.Write(errb.Bytes())
	if err != nil {
		h.printed.WriteString(err.Error())
	}
	h.mu.Unlock()
	return out.String(), errb.String(), err
}

// noSecrets fails when any secret (or its base64 forms) appears in anything printed.
func (h *harness) noSecrets(user string, secrets ...string) {
	h.t.Helper()
	all := h.printed.String()
	for _, s := range secrets {
		for _, form := range []string{s, base64.StdEncoding.EncodeToString([]byte(user + ":" + s)), base64.StdEncoding.EncodeToString([]byte(s))} {
			if strings.Contains(all, form) {
				h.t.Errorf("a credential appears in nuv's output:\n%s", all)
			}
		}
	}
	if all == "" {
		h.t.Error("nothing was printed: the scan checked nothing")
	}
}

func TestIntegrationLoginPushInspect(t *testing.T) {
	if testing.Short() {
		t.Skip("starts docker-registry and compiles Go")
	}
	const user, pass = "nuvtest", "pa55-Sekret-9f3c"
	reg := imagetest.StartRegistry(t, user, pass)
	h := newHarness(t)
	// credentials and the image come from the project's .env, as the ancestor's docker-login did
	dotenv := "REGISTRY=" + reg.Host + "\nREGISTRY_USER=" + user + "\nREGISTRY_PASSWORD=" + pass + "\nMY_OPERATOR_IMAGE=" + reg.Host + "/nuv/hello\n"
	if err := os.WriteFile(filepath.Join(h.dir, ".env"), []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}

	out, _, err := h.run("login")
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	if !strings.Contains(out, "logged in to "+reg.Host) {
		t.Errorf("login output %q", out)
	}
	cfg := filepath.Join(h.vars["DOCKER_CONFIG"], "config.json")
	st, err := os.Stat(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s mode %o, want 600", cfg, st.Mode().Perm())
	}

	// push without --tag: creates this hour's release tag and pushes the multi-arch index
	out, stderr, err := h.run("push")
	if err != nil {
		t.Fatalf("push: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "pushed layer") {
		t.Errorf("no per-layer progress in:\n%s", stderr)
	}
	pushed := strings.TrimSpace(out)
	t.Logf("pushed %s", pushed)
	imgTag := strings.TrimPrefix(strings.SplitN(pushed, "@", 2)[0], reg.Host+"/nuv/hello:")
	if !strings.HasPrefix(imgTag, "0.1.0-dev.") {
		t.Fatalf("pushed tag %q is not the release tag", imgTag)
	}
	if imagetest.Git(t, h.dir, "tag", "--list", imgTag) != imgTag {
		t.Errorf("git tag %s not created", imgTag)
	}

	// inspect through go-containerregistry with the right credentials
	auth := remote.WithAuth(authn.FromConfig(authn.AuthConfig{Username: user, Password: pass}))
	ref, err := name.ParseReference(reg.Host + "/nuv/hello:" + imgTag)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref, auth)
	if err != nil {
		t.Fatalf("read back the index: %v", err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, d := range m.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		p := cf.OS + "/" + cf.Architecture
		if d.Platform == nil || d.Platform.String() != p {
			t.Errorf("descriptor platform %v, config %s", d.Platform, p)
		}
		got[p] = true
		if cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != "/usr/local/bin/hello" {
			t.Errorf("%s: user %q entrypoint %v", p, cf.Config.User, cf.Config.Entrypoint)
		}
		if cf.Config.Labels[gobuild.LabelVersion] != imgTag || cf.Config.Labels[gobuild.LabelRevision] != imagetest.Git(t, h.dir, "rev-parse", "HEAD") ||
			cf.Config.Labels[gobuild.LabelSource] != "https://github.com/nuv-dev/hello" || cf.Config.Labels[gobuild.LabelCreated] != "2026-01-01T00:00:00Z" {
			t.Errorf("%s: labels %v", p, cf.Config.Labels)
		}
	}
	if !got["linux/amd64"] || !got["linux/arm64"] || len(got) != 2 {
		t.Errorf("platforms in the pushed index: %v", got)
	}

	// the same commit built and pushed again gives the same digest
	out2, _, err := h.run("push", "--tag", imgTag)
	if err != nil {
		t.Fatalf("second push: %v", err)
	}
	if strings.TrimSpace(out2) != pushed {
		t.Errorf("same commit pushed twice: %s then %s", pushed, strings.TrimSpace(out2))
	}
	// and a local build of it (OCI layout) has that digest too
	out3, _, err := h.run("build", "--tag", imgTag, "--output", filepath.Join(t.TempDir(), "oci"))
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if d := strings.SplitN(strings.TrimSpace(out3), "@", 2)[1]; d != strings.SplitN(pushed, "@", 2)[1] {
		t.Errorf("build digest %s, pushed %s", d, pushed)
	}
	h.noSecrets(user, pass)
}

func TestIntegrationPushRejectedCredentialsLeaveNoTag(t *testing.T) {
	if testing.Short() {
		t.Skip("starts docker-registry and compiles Go")
	}
	const user, pass, wrong = "nuvtest", "right-Pa55-1d2e", "wrong-Pa55-77aa"
	reg := imagetest.StartRegistry(t, user, pass)
	h := newHarness(t)
	h.vars["MY_OPERATOR_IMAGE"] = reg.Host + "/nuv/hello"

	// no credentials at all: the error says which variables to set
	_, _, err := h.run("push", "--platform", "linux/amd64")
	if err == nil || !strings.Contains(err.Error(), "REGISTRY_USER") || !strings.Contains(err.Error(), reg.Host) {
		t.Fatalf("push without credentials: %v", err)
	}
	t.Logf("no credentials: %v", err)
	// login with the wrong password is refused and stores nothing
	h.vars["REGISTRY"], h.vars["REGISTRY_USER"], h.vars["REGISTRY_PASSWORD"] = reg.Host, user, wrong
	if _, _, err := h.run("login"); err == nil || !strings.Contains(err.Error(), "rejected") {
		t.Fatalf("login with a wrong password: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.vars["DOCKER_CONFIG"], "config.json")); !os.IsNotExist(err) {
		t.Fatalf("a refused login wrote config.json (%v)", err)
	}
	// wrong credentials stored anyway: the push fails naming the registry
	if _, _, err := h.run("login", "--no-verify"); err != nil {
		t.Fatal(err)
	}
	_, _, err = h.run("push", "--platform", "linux/amd64")
	if err == nil || !strings.Contains(err.Error(), reg.Host) || !strings.Contains(err.Error(), "rejected") {
		t.Fatalf("push with wrong credentials: %v", err)
	}
	t.Logf("wrong credentials: %v", err)
	// nothing tagged: not in the registry, not in git
	repo, _ := name.NewRepository(reg.Host + "/nuv/hello")
	tags, err := remote.List(repo, remote.WithAuth(authn.FromConfig(authn.AuthConfig{Username: user, Password: pass})))
	if err == nil && len(tags) > 0 {
		t.Errorf("registry has tags %v after a refused push", tags)
	}
	if out := imagetest.Git(t, h.dir, "tag", "--list", "0.1.0-dev.*"); out != "" {
		t.Errorf("git release tag left behind by the failed push: %s", out)
	}
	h.noSecrets(user, pass, wrong)
}

func TestIntegrationBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git and go")
	}
	h := newHarness(t)
	// unreachable registry: named, nothing built or tagged
	port := imagetest.FreePort(t)
	h.vars["MY_OPERATOR_IMAGE"] = "127.0.0.1:" + itoa(port) + "/nuv/hello"
	_, _, err := h.run("push")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:"+itoa(port)) || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("unreachable registry: %v", err)
	}
	t.Logf("unreachable: %v", err)
	if out := imagetest.Git(t, h.dir, "tag", "--list"); out != "" {
		t.Errorf("tags after a push to an unreachable registry: %s", out)
	}
	// unsupported platform: usage error listing the valid ones
	_, _, err = h.run("build", "--platform", "linux/z80")
	if cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), "linux/arm64") || !strings.Contains(err.Error(), "linux/z80") {
		t.Fatalf("bad platform: exit %d, %v", cli.ExitCode(err), err)
	}
	// a main package that is not there
	_, _, err = h.run("build", "--main", "./nope")
	if cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), "NUV_OPERATOR_MAIN") {
		t.Fatalf("missing main: exit %d, %v", cli.ExitCode(err), err)
	}
	// load with no cluster selected fails before building, saying how to select one
	_, stderr, err := h.run("load")
	if err == nil || !strings.Contains(err.Error(), "no cluster selected") || strings.Contains(stderr, "building") {
		t.Fatalf("load without a selection: %v\n%s", err, stderr)
	}
	t.Logf("no selection: %v", err)
	// login without any variable says which ones to set
	_, _, err = h.run("login")
	if err == nil || !strings.Contains(err.Error(), "GITHUB_USER") || !strings.Contains(err.Error(), "GITHUB_TOKEN") {
		t.Fatalf("login without variables: %v", err)
	}
	// help works and exits 0
	if out, _, err := h.run("--help"); err != nil || !strings.Contains(out, "Usage: nuv image") {
		t.Fatalf("help: %q %v", out, err)
	}
}

func TestIntegrationTagCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git")
	}
	h := newHarness(t)
	imagetest.Git(t, h.dir, "tag", "v9.9.9")
	if _, _, err := h.run("tag", "--show"); cli.ExitCode(err) != 1 {
		t.Fatalf("--show with no image tag: %v", err)
	}
	out, _, err := h.run("tag")
	if err != nil {
		t.Fatal(err)
	}
	first := strings.TrimSpace(out)
	out2, _, err := h.run("tag")
	if err != nil || strings.TrimSpace(out2) != first {
		t.Fatalf("second tag in the same hour: %q %v, want %q", out2, err, first)
	}
	shown, _, err := h.run("tag", "--show")
	if err != nil || strings.TrimSpace(shown) != first {
		t.Fatalf("--show = %q %v", shown, err)
	}
	h.vars["P"] = "v"
	out3, _, err := h.run("tag", "--minute")
	if err != nil || !strings.HasPrefix(strings.TrimSpace(out3), "v0.1.0-dev.") || len(strings.TrimSpace(out3)) != len("v0.1.0-dev.2611300705") {
		t.Fatalf("P=v --minute: %q %v", out3, err)
	}
	if imagetest.Git(t, h.dir, "tag", "--list", "v9.9.9") != "v9.9.9" {
		t.Error("an existing tag was deleted")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

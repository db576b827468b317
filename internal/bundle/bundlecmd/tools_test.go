package bundlecmd

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/config"
	"github.com/nuv-dev/nuv/internal/taskrun"
)

func runTool(t *testing.T, s Setup, name string, args ...string) error {
	t.Helper()
	for _, c := range Tools(func(*cli.Env) Setup { return s }) {
		if c.Name == name {
			return c.Run(context.Background(), s.Env, args)
		}
	}
	t.Fatalf("no tool -%s", name)
	return nil
}

func TestInfoMasksSecretsAndReportsTheBundle(t *testing.T) {
	home := t.TempDir()
	s, out, _ := testSetup(t, home)
	s.KubeEnv = func() []string { return []string{"KUBECONFIG=/p/clusters/a.kubeconfig", "KUBE=local"} }
	cfg := map[string]any{"api": map[string]any{"token": "tok-123456"}, "plain": "visible", "custom": "hide-me-too", "secrets": []any{"custom"}}
	if err := config.Save(config.Path(home), cfg); err != nil {
		t.Fatal(err)
	}
	if err := runTool(t, s, "info", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var in Info
	if err := json.Unmarshal(out.Bytes(), &in); err != nil {
		t.Fatalf("-info -o json: %v\n%s", err, out)
	}
	if in.Bundle == nil || in.Bundle.Source != "NUV_ROOT" || in.Bundle.Version != "9.9.9" || in.Home != home {
		t.Errorf("-info bundle/home = %+v %s", in.Bundle, in.Home)
	}
	if in.Config["API_TOKEN"] != "***" || in.Config["CUSTOM"] != "***" || in.Config["PLAIN"] != "visible" || in.Config["GREETING_WORD"] != "hi" {
		t.Errorf("-info config = %v", in.Config)
	}
	if in.Cluster["KUBE"] != "local" {
		t.Errorf("-info cluster = %v", in.Cluster)
	}
	if strings.Contains(out.String(), "tok-123456") || strings.Contains(out.String(), "hide-me-too") {
		t.Error("-info printed a secret")
	}
	out.Reset()
	if err := runTool(t, s, "info"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "tok-123456") || !strings.Contains(out.String(), "API_TOKEN=***") {
		t.Errorf("-info text:\n%s", out)
	}
}

func TestMalformedConfigStopsDispatch(t *testing.T) {
	home := t.TempDir()
	s, _, _ := testSetup(t, home)
	path := config.Path(home)
	if err := os.WriteFile(path, []byte("{\n  \"a\": [1,\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := s.Dispatch(context.Background(), taskrun.Options{}, []string{"hello"})
	if err == nil || !strings.Contains(err.Error(), path+":3:") {
		t.Fatalf("dispatch with a malformed config: err = %v, want %s:3:...", err, path)
	}
	if err := runTool(t, s, "config", "X=1"); err == nil || !strings.Contains(err.Error(), path+":3:") {
		t.Fatalf("-config with a malformed config: err = %v", err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "[1,") {
		t.Error("malformed config was overwritten")
	}
}

func TestUnwritableHome(t *testing.T) {
	base := t.TempDir()
	blocker := filepath.Join(base, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, _, _ := testSetup(t, filepath.Join(blocker, "nuv"))
	for _, args := range [][]string{{"config", "A=1"}, {"update"}, {"plugin", "-l"}} {
		err := runTool(t, s, args[0], args[1:]...)
		if err == nil || !strings.Contains(err.Error(), blocker) {
			t.Errorf("-%s with an unwritable home: err = %v, want one naming %s", args[0], err, blocker)
		}
	}
}

func TestIntegrationUpdatePluginResetTools(t *testing.T) {
	if testing.Short() {
		t.Skip("uses the git CLI and runs tasks")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("the git CLI is required by this test and is not on PATH (hack/test.sh installs it): %v", err)
	}
	base := t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@nuv.invalid", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(p, c string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// a plugin repository: its folder "greet" becomes `nuv greet ...`
	pw := filepath.Join(base, "plugin-work")
	os.MkdirAll(pw, 0o755)
	git(base, "init", "--quiet", "--bare", filepath.Join(base, "olaris-hello.git"))
	git(pw, "init", "--quiet")
	write(filepath.Join(pw, "nuvroot.json"), `{"config":{"hello":{"who":"plugin-default"}}}`)
	write(filepath.Join(pw, "greet", "nuvfile.yml"), "version: '3'\ntasks:\n  world:\n    desc: greet\n    silent: true\n    cmds: [echo \"hello $HELLO_WHO from $NUV_PLUGIN\"]\n")
	git(pw, "add", "-A")
	git(pw, "commit", "--quiet", "-m", "plugin")
	git(pw, "push", "--quiet", filepath.Join(base, "olaris-hello.git"), "HEAD:main")

	home := filepath.Join(base, "home")
	s, out, _ := testSetup(t, home)
	if err := runTool(t, s, "plugin", filepath.Join(base, "olaris-hello.git")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "plugin olaris-hello installed") || !strings.Contains(out.String(), "nuv greet") {
		t.Errorf("-plugin output: %s", out)
	}
	out.Reset()
	if err := s.Dispatch(context.Background(), baseOptions(t, s), []string{"gr", "w"}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "hello plugin-default from olaris-hello\n" {
		t.Errorf("plugin task output %q", out)
	}
	out.Reset()
	if err := runTool(t, s, "tasks"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "nuv greet world") || !strings.Contains(out.String(), "[plugin olaris-hello]") {
		t.Errorf("-tasks:\n%s", out)
	}

	// -update from NUV_REPO (a bare repository holding a bundle), then a failed one
	bw := filepath.Join(base, "bundle-work")
	os.MkdirAll(bw, 0o755)
	git(base, "init", "--quiet", "--bare", filepath.Join(base, "bundle.git"))
	git(bw, "init", "--quiet")
	write(filepath.Join(bw, "nuvroot.json"), `{"version":"2.0.0"}`)
	write(filepath.Join(bw, "nuvfile.yml"), "version: '3'\ntasks:\n  hi: echo hi\n")
	git(bw, "add", "-A")
	git(bw, "commit", "--quiet", "-m", "bundle")
	git(bw, "push", "--quiet", filepath.Join(base, "bundle.git"), "HEAD:main")
	s2, out2, _ := testSetup(t, home)
	getenv := s2.Env.Getenv
	s2.Env.Getenv = func(k string) string {
		switch k {
		case "NUV_REPO":
			return filepath.Join(base, "bundle.git")
		case "NUV_ROOT":
			return ""
		}
		return getenv(k)
	}
	s2.Env.Dir = base // no ./olaris, no nuvroot.json above: the downloaded bundle is used
	if err := runTool(t, s2, "update"); err != nil {
		t.Fatal(err)
	}
	dl := filepath.Join(home, "0.0.0-test", "olaris")
	if !strings.Contains(out2.String(), "bundle updated: "+dl) {
		t.Errorf("-update output: %s", out2)
	}
	b, err := s2.Locate()
	if err != nil || b.Main.Dir != dl || b.Main.Version != "2.0.0" {
		t.Fatalf("after -update the bundle is %+v, %v", b, err)
	}
	err = runTool(t, s2, "update", "--repo", filepath.Join(base, "missing.git"))
	if err == nil || !strings.Contains(err.Error(), "left as it was") {
		t.Fatalf("failed -update: err = %v", err)
	}
	if b, _ := s2.Locate(); b == nil || b.Main.Version != "2.0.0" {
		t.Fatal("failed -update changed the bundle")
	}
	if err := runTool(t, s2, "update", "extra"); cli.ExitCode(err) != 2 {
		t.Errorf("-update extra: %v", err)
	}

	// -reset --all removes the download, the plugin and the config; -reset again is a no-op
	if err := config.Save(config.Path(home), map[string]any{"a": 1}); err != nil {
		t.Fatal(err)
	}
	out2.Reset()
	if err := runTool(t, s2, "reset", "--all"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dl, filepath.Join(home, "olaris-hello"), config.Path(home)} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("-reset --all left %s", p)
		}
	}
	out2.Reset()
	if err := runTool(t, s2, "reset"); err != nil || out2.Len() != 0 {
		t.Errorf("second -reset: %v %q", err, out2)
	}
}

package kubecmd

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/kube/watch"
	"k8s.io/client-go/rest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func kubeconfigFor(ctx, server string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: %[1]s
contexts:
- name: %[1]s
  context: {cluster: %[1]s, user: %[1]s}
clusters:
- name: %[1]s
  cluster: {server: %[2]q}
users:
- name: %[1]s
  user: {token: s3cret-token-%[1]s, password: hunter2}
`, ctx, server)
}

// fixture is a project and a HOME with a known ~/.kube/config that must never change.
type fixture struct {
	t       testing.TB
	project string
	home    string
	vars    map[string]string
	kcBytes []byte
}

func newFixture(t testing.TB, files map[string]string) *fixture {
	f := &fixture{t: t, project: t.TempDir(), home: t.TempDir()}
	os.MkdirAll(filepath.Join(f.project, "clusters"), 0o755)
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(f.project, "clusters", n), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f.kcBytes = []byte(kubeconfigFor("users-own", "https://example.invalid:6443"))
	os.MkdirAll(filepath.Join(f.home, ".kube"), 0o700)
	if err := os.WriteFile(filepath.Join(f.home, ".kube", "config"), f.kcBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	f.vars = map[string]string{"HOME": f.home, "NUV_HOME": filepath.Join(f.home, ".nuv"), "NUV_PROJECT": f.project}
	t.Cleanup(f.checkGlobalUntouched)
	return f
}

// checkGlobalUntouched: every test that does not pass --global leaves ~/.kube/config byte-identical.
func (f *fixture) checkGlobalUntouched() {
	got, err := os.ReadFile(filepath.Join(f.home, ".kube", "config"))
	if err != nil || !bytes.Equal(got, f.kcBytes) {
		f.t.Errorf("~/.kube/config changed (err %v)", err)
	}
	entries, _ := os.ReadDir(filepath.Join(f.home, ".kube"))
	if len(entries) != 1 {
		f.t.Errorf("files appeared in ~/.kube: %v", entries)
	}
}

// run runs `nuv kube args...` and returns stdout, stderr and the exit code.
func (f *fixture) run(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	env := &cli.Env{
		Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb},
		Log:     cli.NewLogger(&errb, 0),
		Getenv:  func(k string) string { return f.vars[k] },
		Dir:     f.project,
	}
	err := NewCommand(testWatcher).Run(context.Background(), env, args)
	if err != nil {
		fmt.Fprintf(&errb, "nuv: %v\n", err)
	}
	return f.clean(out.String()), f.clean(errb.String()), cli.ExitCode(err)
}

func (f *fixture) clean(s string) string { return strings.ReplaceAll(s, f.project, "$PROJECT") }

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func noSecrets(t *testing.T, outs ...string) {
	t.Helper()
	for _, o := range outs {
		if strings.Contains(o, "s3cret") || strings.Contains(o, "hunter2") {
			t.Errorf("credentials printed:\n%s", o)
		}
	}
}

func sample() map[string]string {
	return map[string]string{
		"dev.kubeconfig":      kubeconfigFor("dev", "https://127.0.0.1:7001"),
		"eks-prod.kubeconfig": kubeconfigFor("arn:aws:eks:us-east-1:1:cluster/prod", "https://ABC.gr7.us-east-1.eks.amazonaws.com"),
		"eks-prod.type":       "eks\n",
		"broken.kubeconfig":   "apiVersion: v1\nclusters: [\n",
		"staging.kubeconfig":  kubeconfigFor("staging", "https://127.0.0.1:7003"),
	}
}

func TestListOfflineGolden(t *testing.T) {
	f := newFixture(t, sample())
	out, errOut, code := f.run("list", "--offline")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "list-offline.txt", out)
	noSecrets(t, out, errOut)

	out, _, code = f.run("use", "3", "--offline")
	if code != 0 || !strings.Contains(out, "selected 3 eks-prod for this project: type eks") {
		t.Fatalf("use 3: exit %d\n%s", code, out)
	}
	out, _, _ = f.run("list", "--offline")
	golden(t, "list-offline-selected.txt", out)

	out, _, _ = f.run("list", "--offline", "-o", "json")
	golden(t, "list-offline.json", out)
	noSecrets(t, out)

	out, _, _ = f.run("list", "--offline", "-o", "yaml")
	golden(t, "list-offline.yaml", out)
	noSecrets(t, out)
}

func TestEmptyClustersHint(t *testing.T) {
	f := newFixture(t, nil)
	out, _, code := f.run("list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden(t, "list-empty.txt", out)
}

func TestUseBadInputKeepsSelection(t *testing.T) {
	f := newFixture(t, sample())
	if _, e, code := f.run("use", "dev", "--offline"); code != 0 {
		t.Fatalf("use dev: %s", e)
	}
	before, _ := os.ReadFile(kube.CurrentPath(f.project))
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"use", "9", "--offline"}, 2, "no cluster number 9: valid numbers are 1..4 (selection unchanged)"},
		{[]string{"use", "0"}, 2, "valid numbers are 1..4"},
		{[]string{"use", "prod"}, 2, `no cluster named "prod"`},
		{[]string{"use", "broken", "--offline"}, 1, "cluster 1 broken is invalid, selection unchanged"},
		{[]string{"use", "1", "2"}, 2, "one cluster"},
		{[]string{"use", "--bogus"}, 2, "unknown flag"},
		{[]string{"frobnicate"}, 2, `unknown verb "frobnicate"`},
	}
	for _, c := range cases {
		out, errOut, code := f.run(c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and %q", c.args, code, errOut, c.code, c.msg)
		}
		if c.code == 2 && strings.HasPrefix(c.args[0], "use") && !strings.HasPrefix(c.args[1], "-") && c.args[1] != "1" {
			// the list goes with the error, on stderr (stdout stays clean for --shell eval)
			if !strings.Contains(errOut, "NAME") || out != "" {
				t.Errorf("%v: want the list on stderr and nothing on stdout; out=%q", c.args, out)
			}
		}
		noSecrets(t, out, errOut)
		after, _ := os.ReadFile(kube.CurrentPath(f.project))
		if !bytes.Equal(before, after) {
			t.Errorf("%v changed the selection", c.args)
		}
	}
}

func TestUseShellIsPerShell(t *testing.T) {
	f := newFixture(t, sample())
	out, errOut, code := f.run("use", "4", "--shell", "--offline")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "export NUV_CLUSTER='$PROJECT/clusters/staging.kubeconfig' KUBECONFIG='$PROJECT/clusters/staging.kubeconfig' KUBE=''\n"
	if out != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
	if !strings.Contains(errOut, "selected 4 staging for this shell") {
		t.Errorf("stderr = %q", errOut)
	}
	if _, err := os.Stat(kube.CurrentPath(f.project)); !os.IsNotExist(err) {
		t.Errorf("--shell wrote the project selection")
	}
	// The shell's NUV_CLUSTER wins over the project selection, and a project `use` warns about it.
	f.vars[kube.EnvCluster] = filepath.Join(f.project, "clusters", "staging.kubeconfig")
	_, errOut, _ = f.run("use", "dev", "--offline")
	if !strings.Contains(errOut, "wins over the project selection") {
		t.Errorf("no warning about NUV_CLUSTER: %q", errOut)
	}
	out, _, _ = f.run("current")
	if !strings.HasPrefix(out, "staging\t") {
		t.Errorf("current with NUV_CLUSTER = %q", out)
	}
	delete(f.vars, kube.EnvCluster)
	out, _, _ = f.run("current")
	if !strings.HasPrefix(out, "dev\t") {
		t.Errorf("current = %q", out)
	}
	out, _, _ = f.run("use", "--none", "--shell")
	if out != "unset NUV_CLUSTER KUBECONFIG KUBE\n" {
		t.Errorf("--none --shell = %q", out)
	}
	f.run("use", "--none")
	if _, _, code := f.run("current"); code != 1 {
		t.Errorf("current with nothing selected: exit %d", code)
	}
}

func TestUseGlobalMerges(t *testing.T) {
	f := newFixture(t, sample())
	kc := filepath.Join(f.home, ".kube", "config")
	own, _ := os.ReadFile(kc)
	out, errOut, code := f.run("use", "dev", "--offline", "--global")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "merged context nuv-dev into "+kc) || !strings.Contains(out, "previous content saved as") {
		t.Errorf("out = %q", out)
	}
	noSecrets(t, out, errOut)
	matches, _ := filepath.Glob(kc + ".nuv-backup-*")
	if len(matches) != 1 {
		t.Fatalf("backups: %v", matches)
	}
	if b, _ := os.ReadFile(matches[0]); !bytes.Equal(b, own) {
		t.Error("backup is not the previous ~/.kube/config")
	}
	merged, _ := os.ReadFile(kc)
	for _, s := range []string{"users-own", "nuv-dev", "current-context: nuv-dev"} {
		if !bytes.Contains(merged, []byte(s)) {
			t.Errorf("merged config lacks %q", s)
		}
	}
	// Restore so the fixture's invariant check (registered first, runs last) passes.
	f.kcBytes = merged
	os.Remove(matches[0])
	os.Remove(kc + ".nuv.lock")
}

func TestHelp(t *testing.T) {
	f := newFixture(t, nil)
	for _, args := range [][]string{{"--help"}, {"use", "-h"}, {"list", "--help"}} {
		out, _, code := f.run(args...)
		if code != 0 || !strings.Contains(out, "Usage") || !strings.Contains(out, "NUV_CLUSTER") {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
}

// testWatcher is the watch nuv's full program injects (package watch).
func testWatcher(ctx context.Context, cfg *rest.Config, o WatchOptions) error {
	return watch.Run(ctx, cfg, watch.Options{Namespace: o.Namespace, Out: o.Out, Live: o.Live, Title: o.Title})
}

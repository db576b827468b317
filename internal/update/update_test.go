package update

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// remote is a real git remote: a bare repository on disk fed from a work tree.
type remote struct {
	t    *testing.T
	bare string
	work string
}

func newRemote(t *testing.T) *remote {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: uses the git CLI")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("the git CLI is required by this test and is not on PATH (hack/test.sh installs it): %v", err)
	}
	base := t.TempDir()
	r := &remote{t: t, bare: filepath.Join(base, "remote.git"), work: filepath.Join(base, "work")}
	r.git(base, "init", "--quiet", "--bare", "--initial-branch=main", r.bare)
	r.git(base, "init", "--quiet", "--initial-branch=main", r.work)
	return r
}

func (r *remote) git(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=nuv test", "-c", "user.email=test@nuv.invalid"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files (path -> content; "" deletes) and pushes; it returns the commit.
func (r *remote) commit(files map[string]string) string {
	r.t.Helper()
	for p, c := range files {
		full := filepath.Join(r.work, p)
		if c == "" {
			os.Remove(full)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.git(r.work, "add", "-A")
	r.git(r.work, "commit", "--quiet", "-m", "change")
	r.git(r.work, "push", "--quiet", r.bare, "HEAD:main")
	return r.git(r.work, "rev-parse", "HEAD")
}

func bundleFiles(version string) map[string]string {
	return map[string]string{
		"nuvroot.json":       `{"version":"` + version + `","config":{"x":1}}`,
		"nuvfile.yml":        "version: '3'\ntasks:\n  hello: echo hello\n",
		"kube/nuvfile.yml":   "version: '3'\ntasks:\n  watch: {desc: Watch, cmds: [echo " + version + "]}\n",
		"kube/nuvopts.txt":   "Usage:\n  kube watch\n",
		"scripts/helper.txt": version,
	}
}

func readVersion(t *testing.T, dest string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dest, "scripts", "helper.txt"))
	if err != nil {
		t.Fatalf("bundle at %s: %v", dest, err)
	}
	return string(b)
}

func TestIntegrationUpdateBundle(t *testing.T) {
	r := newRemote(t)
	c1 := r.commit(bundleFiles("v1"))
	r.git(r.work, "tag", "v1.0.0")
	r.git(r.work, "push", "--quiet", r.bare, "v1.0.0")
	home := t.TempDir()
	dest := filepath.Join(home, "0.1.0", "olaris")
	ctx := context.Background()
	f := Fetcher{Git: "/usr/bin/git"}
	if _, err := os.Stat(f.Git); err != nil {
		f.Git = "git"
	}

	// first update: a fresh copy and a lock file
	res, _, err := UpdateBundle(ctx, f, BundleOptions{Dest: dest, Repo: r.bare})
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit != c1 || readVersion(t, dest) != "v1" {
		t.Fatalf("first update: commit %s (want %s), version %s", res.Commit, c1, readVersion(t, dest))
	}
	if _, err := os.Stat(filepath.Join(dest, ".git")); !os.IsNotExist(err) {
		t.Error("the installed bundle keeps a .git directory")
	}
	lock, err := ReadLock(LockPath(dest))
	if err != nil || lock.Commit != c1 || lock.Repo != r.bare {
		t.Fatalf("lock after first update = %+v, %v", lock, err)
	}

	// a checkout left behind by an interrupted run is cleaned up by the next update
	stale := filepath.Join(filepath.Dir(dest), ".olaris.tmp-123")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(stale, old, old)

	// a new commit replaces the bundle (NUV_BRANCH selects the branch)
	c2 := r.commit(bundleFiles("v2"))
	if res, _, err = UpdateBundle(ctx, f, BundleOptions{Dest: dest, Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("stale temporary checkout was not removed")
	}
	if res.Commit != c2 || readVersion(t, dest) != "v2" {
		t.Fatalf("second update: commit %s (want %s), version %s", res.Commit, c2, readVersion(t, dest))
	}

	// a failed fetch (the remote is gone) keeps the old bundle and says why
	_, _, err = UpdateBundle(ctx, f, BundleOptions{Dest: dest, Repo: filepath.Join(home, "no-such-remote.git")})
	if err == nil || !strings.Contains(err.Error(), "left as it was") || !strings.Contains(err.Error(), "git fetch") {
		t.Fatalf("update from a missing remote: err = %v", err)
	}
	if readVersion(t, dest) != "v2" {
		t.Fatal("failed update changed the bundle")
	}
	entries, _ := os.ReadDir(filepath.Dir(dest))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("failed update left %s behind", e.Name())
		}
	}

	// a commit whose nuvfile is malformed is fetched but refused
	bad := bundleFiles("v3")
	bad["kube/nuvfile.yml"] = "version: '3'\ntasks:\n  watch: [\n"
	r.commit(bad)
	_, _, err = UpdateBundle(ctx, f, BundleOptions{Dest: dest})
	if err == nil || !strings.Contains(err.Error(), "not a valid bundle") || !strings.Contains(err.Error(), "kube/nuvfile.yml:") {
		t.Fatalf("update to a malformed bundle: err = %v", err)
	}
	if readVersion(t, dest) != "v2" {
		t.Fatal("refused update changed the bundle")
	}

	// pin a tag: later updates stay there even with NUV_BRANCH set, until unpinned
	if res, _, err = UpdateBundle(ctx, f, BundleOptions{Dest: dest, Ref: "v1.0.0", Pin: true}); err != nil {
		t.Fatal(err)
	}
	if res.Commit != c1 || readVersion(t, dest) != "v1" {
		t.Fatalf("pinned update: %s %s", res.Commit, readVersion(t, dest))
	}
	c4 := r.commit(bundleFiles("v4"))
	res, plan, err := UpdateBundle(ctx, f, BundleOptions{Dest: dest, Branch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit != c1 || !strings.Contains(plan.Why, "NUV_BRANCH=main ignored") {
		t.Fatalf("update while pinned: commit %s, why %q", res.Commit, plan.Why)
	}
	if res, _, err = UpdateBundle(ctx, f, BundleOptions{Dest: dest, Unpin: true}); err != nil {
		t.Fatal(err)
	}
	if res.Commit != c4 || readVersion(t, dest) != "v4" {
		t.Fatalf("after unpin: %s %s", res.Commit, readVersion(t, dest))
	}
	if l, _ := ReadLock(LockPath(dest)); l.Pin != "" {
		t.Errorf("pin still set after --unpin: %+v", l)
	}

	// an abbreviated commit works too
	if res, _, err = UpdateBundle(ctx, f, BundleOptions{Dest: dest, Ref: c2[:10]}); err != nil {
		t.Fatal(err)
	}
	if res.Commit != c2 || readVersion(t, dest) != "v2" {
		t.Fatalf("short commit: %s %s", res.Commit, readVersion(t, dest))
	}
}

func TestIntegrationUpdateFromRepoWithOlarisFolder(t *testing.T) {
	r := newRemote(t)
	files := map[string]string{"README.md": "a project"}
	for p, c := range bundleFiles("sub") {
		files["olaris/"+p] = c
	}
	r.commit(files)
	dest := filepath.Join(t.TempDir(), "v", "olaris")
	if _, _, err := UpdateBundle(context.Background(), Fetcher{}, BundleOptions{Dest: dest, Repo: r.bare}); err != nil {
		t.Fatal(err)
	}
	if readVersion(t, dest) != "sub" {
		t.Fatal("the olaris/ folder of the repository was not installed")
	}
	if _, err := os.Stat(filepath.Join(dest, "README.md")); !os.IsNotExist(err) {
		t.Error("files outside olaris/ were installed")
	}
}

func TestIntegrationCredentialsNeverPrinted(t *testing.T) {
	newRemote(t) // skips without git or under -short
	dest := filepath.Join(t.TempDir(), "v", "olaris")
	_, _, err := UpdateBundle(context.Background(), Fetcher{}, BundleOptions{Dest: dest, Repo: "http://nuvuser:s3cr3tTOKEN@127.0.0.1:1/x.git"})
	if err == nil {
		t.Fatal("update from a closed port succeeded")
	}
	if strings.Contains(err.Error(), "s3cr3tTOKEN") {
		t.Errorf("error leaks the credential: %v", err)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Error("a failed first update created the bundle directory")
	}
}

func TestIntegrationPlugin(t *testing.T) {
	r := newRemote(t)
	r.commit(map[string]string{
		"nuvroot.json":           `{"config":{"extra":{"on":true}}}`,
		"greet/nuvfile.yml":      "version: '3'\ntasks:\n  world: {desc: Greet, cmds: [echo world]}\n",
		"greet/deep/nuvfile.yml": "version: '3'\ntasks:\n  x: echo x\n",
	})
	home := t.TempDir()
	ctx := context.Background()
	// the bare repository is named remote.git: the plugin becomes olaris-remote
	res, err := InstallPlugin(ctx, Fetcher{}, home, r.bare, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Dir != filepath.Join(home, "olaris-remote") {
		t.Fatalf("plugin installed at %s", res.Dir)
	}
	list, err := ListPlugins(home)
	if err != nil || len(list) != 1 || list[0].Name != "olaris-remote" || strings.Join(list[0].Folders, ",") != "greet" || list[0].Lock.Commit != res.Commit {
		t.Fatalf("ListPlugins = %+v, %v", list, err)
	}
	// reinstalling replaces it in place
	r.commit(map[string]string{"greet/nuvfile.yml": "version: '3'\ntasks:\n  world2: echo w\n"})
	if _, err := InstallPlugin(ctx, Fetcher{}, home, r.bare, ""); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "olaris-remote", "greet", "nuvfile.yml")); !strings.Contains(string(b), "world2") {
		t.Error("reinstall did not update the plugin")
	}
	// a repository without top-level folders is not a plugin; the installed copy stays
	r.commit(map[string]string{"greet/nuvfile.yml": "", "greet/deep/nuvfile.yml": "", "nuvfile.yml": "version: '3'\n"})
	if _, err := InstallPlugin(ctx, Fetcher{}, home, r.bare, ""); err == nil || !strings.Contains(err.Error(), "at least one top-level folder") {
		t.Fatalf("plugin without folders: err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "olaris-remote", "greet", "nuvfile.yml")); err != nil {
		t.Error("refused plugin update removed the installed plugin")
	}
	if err := RemovePlugin(home, "remote"); err != nil {
		t.Fatal(err)
	}
	if list, _ := ListPlugins(home); len(list) != 0 {
		t.Errorf("after remove: %+v", list)
	}
	if err := RemovePlugin(home, "remote"); err == nil {
		t.Error("removing a missing plugin succeeded")
	}
}

func TestPluginName(t *testing.T) {
	tests := map[string]string{
		"https://github.com/org/olaris-tools.git": "olaris-tools",
		"https://github.com/org/tools":            "olaris-tools",
		"git@github.com:org/olaris-db.git":        "olaris-db",
		"/srv/git/ops.git/":                       "olaris-ops",
		"file:///srv/git/olaris-x":                "olaris-x",
	}
	for in, want := range tests {
		got, err := PluginName(in)
		if err != nil || got != want {
			t.Errorf("PluginName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := PluginName("https://host/"); err == nil {
		t.Error("PluginName of a URL without a path succeeded")
	}
}

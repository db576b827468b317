package localkube

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/proc"
	"github.com/nuv-dev/nuv/internal/runner"
)

func TestValidName(t *testing.T) {
	for name, ok := range map[string]bool{"dev": true, "a-1": true, "x": true, "": false, "Dev": false, "-a": false, "a-": false,
		"a_b": false, "a.b": false, strings.Repeat("a", 41): false, "../x": false} {
		if err := ValidName(name); (err == nil) != ok {
			t.Errorf("ValidName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func TestAllocatePortsSkipsTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	_, ports, err := allocatePorts([]string{"a", "b", "c"}, busy, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for role, p := range ports {
		if p == busy {
			t.Errorf("%s got the busy port %d", role, p)
		}
		if p < busy || seen[p] {
			t.Errorf("%s got port %d (base %d, seen %v)", role, p, busy, seen)
		}
		seen[p] = true
	}
}

func TestLoadStateCorrupt(t *testing.T) {
	dir := t.TempDir()
	if _, err := loadState(dir); err == nil {
		t.Fatal("missing state accepted")
	}
	os.WriteFile(filepath.Join(dir, StateFile), []byte("{"), 0o600)
	if _, err := loadState(dir); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("corrupt state: %v", err)
	}
	os.WriteFile(filepath.Join(dir, StateFile), []byte(`{"name":"x"}`), 0o600)
	if _, err := loadState(dir); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Fatalf("incomplete state: %v", err)
	}
}

// TestProgramKeys: a program's key follows the Go version, its own source directories and its
// module set, and nothing else (nuv-kube's does not change when nuv-node's sources do).
func TestProgramKeys(t *testing.T) {
	const mods = "k8s.io/kubernetes v1.36.3\n"
	a, err := programKey("go1.26.8", companion.ProgramKube, mods)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := programKey("go1.26.8", companion.ProgramKube, mods)
	c, _ := programKey("go1.27.0", companion.ProgramKube, mods)
	d, _ := programKey("go1.26.8", companion.ProgramKube, mods+"sigs.k8s.io/kwok v0.8.0\n")
	if a != b || a == c || a == d || len(a) != 16 {
		t.Fatalf("keys %q %q %q %q", a, b, c, d)
	}
	for _, tc := range []struct {
		prog  Program
		file  string
		keyed bool
	}{
		{companion.ProgramKube, "go.mod", false}, // the module set stands for it
		{companion.ProgramKube, "go.sum", false},
		{companion.ProgramKube, "cmd/nuv-kube/main.go", true},
		{companion.ProgramKube, "cmd/nuv-node/main.go", false},
		{companion.ProgramKube, "internal/cluster/nodeimage/podnet/podnet.go", false},
		{companion.ProgramNode, "cmd/nuv-node/main.go", true},
		{companion.ProgramNode, "internal/cluster/nodeimage/podnet/run.go", true},
		{companion.ProgramNode, "cmd/nuv-kube/main.go", false},
		{companion.ProgramPause, "cmd/nuv-pause/main.go", true},
		{companion.ProgramPause, "cmd/nuv-node/main.go", false},
	} {
		if got := programFile(tc.prog, tc.file); got != tc.keyed {
			t.Errorf("%s keyed by %s: %v, want %v", tc.prog.Name, tc.file, got, tc.keyed)
		}
	}
	keys := map[string]string{}
	for _, p := range []Program{companion.ProgramKube, companion.ProgramNode, companion.ProgramPause, companion.ProgramKwok} {
		k, err := programKey("go1.26.8", p, mods)
		if err != nil {
			t.Fatal(err)
		}
		if other, dup := keys[k]; dup {
			t.Fatalf("%s and %s share the key %s", p.Name, other, k)
		}
		keys[k] = p.Name
	}
}

// TestModuleSet works out real module sets with go list over the embedded sources: nuv-kube's
// holds Kubernetes and kwok but none of the modules only nuv itself uses (so adding one does not
// rebuild it), nuv-pause's is empty (standard library only), the second call reads the cache, and
// a program whose Dirs miss a package of nuv it imports is refused, naming it.
func TestModuleSet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the Kubernetes module graph; skipped under -short")
	}
	cache := t.TempDir()
	env := map[string]string{"NUV_CACHE_DIR": cache, "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	c := Companion{Getenv: func(k string) string { return env[k] }}
	goBin, err := runner.FindGo(c.getenv())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kube, err := c.moduleSet(ctx, goBin, companion.ProgramKube)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"k8s.io/kubernetes v1.36.3\n", "sigs.k8s.io/kwok v"} {
		if !strings.Contains(kube, want) {
			t.Errorf("nuv-kube's module set lacks %q:\n%s", want, kube)
		}
	}
	for _, only := range []string{"github.com/go-task/task/v3", "github.com/aws/aws-sdk-go-v2/service/eks", "mvdan.cc/sh/v3"} {
		if strings.Contains(kube, only+" ") {
			t.Errorf("nuv-kube's module set holds %s, which only nuv itself uses", only)
		}
	}
	file, _ := c.moduleSetPath(companion.ProgramKube)
	if err := os.WriteFile(file, []byte("cached\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if again, _ := c.moduleSet(ctx, goBin, companion.ProgramKube); again != "cached\n" {
		t.Errorf("second call did not read the cache: %q", again)
	}
	if pause, err := c.moduleSet(ctx, goBin, companion.ProgramPause); err != nil || pause != "\n" {
		t.Errorf("nuv-pause's module set %q %v, want empty", pause, err)
	}
	short := companion.ProgramNode
	short.Dirs = []string{"cmd/nuv-node"}
	if _, err := c.moduleSet(ctx, goBin, short); err == nil || !strings.Contains(err.Error(), "internal/cluster/nodeimage/podnet") {
		t.Errorf("a program missing podnet in its Dirs: %v", err)
	}
}

func TestPKIAndKubeconfig(t *testing.T) {
	dir := t.TempDir()
	if err := generatePKI(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ca.key", "sa.key", "admin.key", "etcd.key"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v", f, st.Mode().Perm(), err)
		}
	}
	b, err := kubeconfigFor(dir, "nuv-x", "https://127.0.0.1:1", "admin")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server: https://127.0.0.1:1", "client-certificate-data:", "current-context: nuv-x"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("kubeconfig lacks %q", want)
		}
	}
}

func TestRegisterProcessNeedsCluster(t *testing.T) {
	home := t.TempDir()
	if err := RegisterProcess(home, "none", "operator", os.Getpid()); err == nil {
		t.Fatal("registered a process for a missing cluster")
	}
	os.MkdirAll(StateDir(home, "c"), 0o700)
	if err := RegisterProcess(home, "c", "operator", os.Getpid()); err != nil {
		t.Fatal(err)
	}
	r, err := proc.ReadRecord(filepath.Join(PIDDir(home, "c"), "operator.pid"))
	if err != nil || r.PID != os.Getpid() || !r.Alive() {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestClusterLockSerialises(t *testing.T) {
	p := Clusters{Home: t.TempDir()}
	ctx := context.Background()
	unlock, err := p.lock(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		u, err := p.lock(ctx, "c")
		if err == nil {
			u()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("second lock taken while the first is held")
	case <-time.After(700 * time.Millisecond):
	}
	unlock()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("second lock not taken after unlock")
	}
	cctx, cancel := context.WithCancel(ctx)
	unlock, _ = p.lock(ctx, "c")
	defer unlock()
	cancel()
	if _, err := p.lock(cctx, "c"); err == nil {
		t.Fatal("lock taken with a cancelled context while held")
	}
}

func TestAnyBuildWithoutGo(t *testing.T) {
	cache := t.TempDir()
	c := Companion{Getenv: func(k string) string {
		if k == "NUV_CACHE_DIR" {
			return cache
		}
		return ""
	}}
	if got := c.anyBuild(); got != "" {
		t.Fatalf("empty cache gave %q", got)
	}
	dir := filepath.Join(cache, "nuv-kube", "0123456789abcdef")
	os.MkdirAll(dir, 0o755)
	bin := filepath.Join(dir, "nuv-kube")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "sources"), []byte("other\n"), 0o644)
	if got := c.anyBuild(); got != "" {
		t.Fatalf("build of other sources accepted: %q", got)
	}
	setFile, _ := c.moduleSetPath(companion.ProgramKube)
	if got := c.anyBuild(); got != "" { // no module set worked out yet: no Go to do it
		t.Fatalf("build found without a module set: %q", got)
	}
	os.MkdirAll(filepath.Dir(setFile), 0o755)
	os.WriteFile(setFile, []byte("k8s.io/kubernetes v1.36.3\n"), 0o644)
	key, _ := programKey("", companion.ProgramKube, "k8s.io/kubernetes v1.36.3\n")
	os.WriteFile(filepath.Join(dir, "sources"), []byte(key+"\n"), 0o644)
	if got := c.anyBuild(); got != bin {
		t.Fatalf("anyBuild = %q, want %s", got, bin)
	}
}

// TestCreateFailureCleansUpAndKeepsLogs runs Create with a companion that fails at once: the error
// shows the component's output, nothing of the cluster remains but its logs, kept under home/failed.
func TestCreateFailureCleansUpAndKeepsLogs(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	bin := filepath.Join(t.TempDir(), "nuv-kube")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n[ \"$1\" = version ] && echo v"+KubeVersion+" && exit 0\necho \"boom: $1 cannot start\" >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := Clusters{Home: home, Project: project, Getenv: func(k string) string {
		if k == "NUV_KUBE_BIN" {
			return bin
		}
		return ""
	}}
	_, err := p.Create(context.Background(), CreateOptions{Name: "bad"})
	if err == nil || !strings.Contains(err.Error(), "boom: etcd cannot start") || !strings.Contains(err.Error(), "component logs kept in") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(StateDir(home, "bad")); !os.IsNotExist(err) {
		t.Fatalf("state dir remains: %v", err)
	}
	logs, _ := filepath.Glob(filepath.Join(home, "failed", "bad-*", "etcd.log"))
	if len(logs) != 1 {
		t.Fatalf("kept logs: %v", logs)
	}
	if names, _ := p.Names(); len(names) != 0 {
		t.Fatalf("clusters listed after a failed create: %v", names)
	}
	if _, err := os.Stat(filepath.Join(project, "clusters", "bad.kubeconfig")); !os.IsNotExist(err) {
		t.Fatalf("kubeconfig written: %v", err)
	}
}

package kubecmd_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/app"
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/kube/watch"
)

// world is a project and a HOME with a known ~/.kube/config, driven through nuv's dispatcher.
type world struct {
	t       *testing.T
	project string
	home    string
	vars    map[string]string
	global  []byte
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, project: t.TempDir(), home: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(w.project, "clusters"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.global = []byte("apiVersion: v1\nkind: Config\ncurrent-context: mine\ncontexts:\n- name: mine\n  context: {cluster: mine}\nclusters:\n- name: mine\n  cluster: {server: \"https://example.invalid\"}\n")
	writeFile(t, filepath.Join(w.home, ".kube", "config"), string(w.global))
	w.vars = map[string]string{
		"HOME": w.home, "NUV_HOME": filepath.Join(w.home, ".nuv"), "NUV_PROJECT": w.project,
		"PATH": os.Getenv("PATH"), "NUV_CACHE_DIR": os.Getenv("NUV_CACHE_DIR"), "NUV_KUBE_BIN": os.Getenv("NUV_KUBE_BIN"),
		"NUV_KUBE_TIMEOUT": "3s", // 2 busy cores: leave the real servers time to answer
	}
	t.Cleanup(func() {
		got, err := os.ReadFile(filepath.Join(w.home, ".kube", "config"))
		if err != nil || !bytes.Equal(got, w.global) {
			t.Errorf("~/.kube/config changed without --global (err %v)", err)
		}
	})
	return w
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// nuv runs one nuv command line in-process and returns stdout, stderr and the exit code.
func (w *world) nuv(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	exe, _ := os.Executable()
	env := &cli.Env{
		Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb},
		Log:     cli.NewLogger(&errb, 0),
		Exe:     exe,
		Getenv:  func(k string) string { return w.vars[k] },
		Dir:     w.project,
	}
	err := app.RunEnv(context.Background(), env, append([]string{"nuv"}, args...))
	if err != nil {
		fmt.Fprintf(&errb, "nuv: %v\n", err)
	}
	return out.String(), errb.String(), cli.ExitCode(err)
}

// sharedFlavors are the flavors more than one test here runs on: those tests share one cluster of
// each (localtest.Shared; they only read the cluster, or write in a namespace of their own). A flavor
// only one test uses gets a cluster of that test's own, deleted when it ends.
var sharedFlavors = map[string]bool{"": true, "eks": true}

// start gets local clusters of the given flavors (in parallel), each with its kubeconfig in w's
// clusters/.
func (w *world) start(flavors ...string) map[string]*localtest.Cluster {
	w.t.Helper()
	home := filepath.Join(w.home, "clusters-home")
	out := map[string]*localtest.Cluster{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, fl := range flavors {
		wg.Add(1)
		go func(fl string) {
			defer wg.Done()
			var c *localtest.Cluster
			if sharedFlavors[fl] {
				c = localtest.Shared(w.t, localtest.Options{Flavor: fl, Project: w.project})
			} else {
				c = localtest.Start(w.t, localtest.Options{Flavor: fl, Project: w.project, Home: home})
			}
			mu.Lock()
			out[fl] = c
			mu.Unlock()
		}(fl)
	}
	wg.Wait()
	if w.t.Failed() {
		w.t.FailNow()
	}
	return out
}

func TestIntegrationInventory(t *testing.T) {
	if testing.Short() {
		t.Skip("real local clusters; skipped under -short")
	}
	w := newWorld(t)
	clusters := w.start("", "eks", "kind")
	// Beside the real clusters: a malformed kubeconfig and one whose server refuses connections.
	writeFile(t, filepath.Join(w.project, "clusters", "aaa-broken.kubeconfig"), "apiVersion: v1\nclusters: [\n")
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := l.Addr().String()
	l.Close()
	src, _ := os.ReadFile(clusters[""].Kubeconfig)
	cfgText := strings.ReplaceAll(string(src), strings.TrimPrefix(clusters[""].Config.Host, "https://"), closed)
	writeFile(t, filepath.Join(w.project, "clusters", "zzz-down.kubeconfig"), cfgText)

	wantType := map[string]string{}
	for fl, c := range clusters {
		wantType[c.Name] = map[string]string{"": "local", "eks": "eks", "kind": "kind"}[fl]
	}
	names := []string{"aaa-broken"}
	for n := range wantType {
		names = append(names, n)
	}
	sort.Strings(names[1:])
	names = append(names, "zzz-down")

	out, errOut, code := w.nuv("kube", "list")
	t.Logf("nuv kube list:\n%s%s", out, errOut)
	if code != 0 {
		t.Fatalf("list: exit %d", code)
	}
	rows := tableRows(out)
	for i, n := range names {
		row, ok := rows[n]
		if !ok {
			t.Fatalf("%s missing from the list", n)
		}
		if row[0] != fmt.Sprint(i+1) {
			t.Errorf("%s numbered %s, want %d", n, row[0], i+1)
		}
		switch {
		case n == "aaa-broken":
			if row[2] != "invalid" || !strings.Contains(out, "1 aaa-broken: not a kubeconfig") {
				t.Errorf("broken row %v", row)
			}
		case n == "zzz-down":
			if !strings.Contains(strings.Join(row, " "), "unreachable: connection refused") {
				t.Errorf("down row %v", row)
			}
		default:
			if row[1] != wantType[n] || row[2] != "ready" || row[3] != "1/1" {
				t.Errorf("%s row %v, want type %s and ready 1/1", n, row, wantType[n])
			}
		}
	}

	// use N for each real cluster: marked in the list, type and nodes printed, tasks see it.
	writeFile(t, filepath.Join(w.project, "Taskfile.yml"), "version: '3'\ntasks:\n  show:\n    cmds:\n      - echo \"KUBECONFIG=$KUBECONFIG KUBE=$KUBE\"\n")
	for i, n := range names {
		if n == "aaa-broken" || n == "zzz-down" {
			continue
		}
		out, errOut, code := w.nuv("kube", "use", fmt.Sprint(i+1))
		if code != 0 || !strings.Contains(out, "type "+wantType[n]) || !strings.Contains(out, "nodes: 1 node, 1 Ready") {
			t.Errorf("use %d (%s): exit %d\n%s%s", i+1, n, code, out, errOut)
		}
		list, _, _ := w.nuv("kube", "list", "--offline")
		if !marked(list, n) {
			t.Errorf("%s not marked after use:\n%s", n, list)
		}
		path := filepath.Join(w.project, "clusters", n+".kubeconfig")
		taskOut, taskErr, code := w.nuv("-task", "show")
		want := fmt.Sprintf("KUBECONFIG=%s KUBE=%s", path, wantType[n])
		if code != 0 || !strings.Contains(taskOut, want) {
			t.Errorf("task after use %s: exit %d, got %q %q, want %q", n, code, taskOut, taskErr, want)
		}
		if typ, _, _ := w.nuv("kube", "detect"); strings.TrimSpace(typ) != wantType[n] {
			t.Errorf("detect %s = %q", n, typ)
		}
	}
	// Selecting the down cluster still records it (type unknown) and says it is unreachable.
	out, _, code = w.nuv("kube", "use", "zzz-down")
	if code != 0 || !strings.Contains(out, "unreachable: connection refused") {
		t.Errorf("use zzz-down: %d %s", code, out)
	}
	// --global: the context lands in ~/.kube/config beside the user's own, and a client (client-go's
	// loading rules, as kubectl uses them) reaches the cluster through it.
	gname := names[2]
	out, errOut, code = w.nuv("kube", "use", gname, "--global")
	kc := filepath.Join(w.home, ".kube", "config")
	if code != 0 || !strings.Contains(out, "merged context nuv-"+gname) {
		t.Fatalf("use --global: %d %s %s", code, out, errOut)
	}
	merged, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatalf("merged ~/.kube/config: %v", err)
	}
	if merged.Contexts["mine"] == nil || merged.Contexts["nuv-"+gname] == nil {
		t.Errorf("contexts after --global: %v, want mine and nuv-%s", sortedKeys(merged.Contexts), gname)
	}
	if merged.CurrentContext != "nuv-"+gname {
		t.Errorf("current context after --global: %q, want nuv-%s", merged.CurrentContext, gname)
	}
	gcfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kc}, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		t.Fatalf("client config from the merged context: %v", err)
	}
	nodes, err := kubernetes.NewForConfigOrDie(gcfg).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Errorf("nodes through the merged context: %v", err)
	} else if len(nodes.Items) == 0 {
		t.Error("no nodes through the merged context")
	}
	backups, _ := filepath.Glob(kc + ".nuv-backup-*")
	if len(backups) != 1 {
		t.Errorf("backups: %v", backups)
	} else if b, _ := os.ReadFile(backups[0]); !bytes.Equal(b, w.global) {
		t.Errorf("backup is not the previous ~/.kube/config")
	}
	w.global, _ = os.ReadFile(kc) // from here on, nothing may change it again

	// Two concurrent `use` leave one complete, valid selection.
	var wg sync.WaitGroup
	for _, ref := range []string{"2", "3", "4", "2"} {
		wg.Add(1)
		go func(ref string) {
			defer wg.Done()
			if _, e, code := w.nuv("kube", "use", ref); code != 0 {
				t.Errorf("concurrent use %s: %s", ref, e)
			}
		}(ref)
	}
	wg.Wait()
	sel, err := kube.Selected(w.project, func(k string) string { return w.vars[k] })
	if err != nil || wantType[sel.Name] == "" || sel.Type != wantType[sel.Name] {
		t.Errorf("after concurrent use: %+v %v", sel, err)
	}
}

// tableRows maps a cluster name to its row's other columns: number, type, status words...
func tableRows(out string) map[string][]string {
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(strings.TrimPrefix(line, "*"))
		if len(f) >= 3 && f[0] != "#" && f[0] >= "0" && f[0] <= "9" {
			rows[f[1]] = append([]string{f[0]}, f[2:]...)
		}
	}
	return rows
}

func marked(out, name string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "*" && f[2] == name {
			return true
		}
	}
	return false
}

func TestIntegrationWatch(t *testing.T) {
	if testing.Short() {
		t.Skip("real local cluster; skipped under -short")
	}
	w := newWorld(t)
	c := w.start("")[""]
	cfg, err := kube.RESTConfig(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var buf bytes.Buffer
	out := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- watch.Run(ctx, cfg, watch.Options{Out: out}) }()

	cs := kubernetes.NewForConfigOrDie(c.Config)
	bg := context.Background()
	watched := c.Namespace(t) // the cluster is shared: the test's objects are in a namespace of its own
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: watched},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := cs.CoreV1().Services(watched).Create(bg, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: watched},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.invalid/x"}}}}
	if _, err := cs.CoreV1().Pods(watched).Create(bg, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantLines := []string{
		"ADDED    node " + c.Name,
		"ADDED    service " + watched + "/web ClusterIP",
		"ADDED    pod " + watched + "/p1",
		"MODIFIED pod " + watched + "/p1 Running 1/1",
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		got := buf.String()
		mu.Unlock()
		missing := ""
		for _, l := range wantLines {
			if !strings.Contains(got, l) {
				missing = l
				break
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch output lacks %q:\n%s", missing, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cs.CoreV1().Pods(watched).Delete(bg, "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		got := buf.String()
		mu.Unlock()
		if strings.Contains(got, "DELETED  pod "+watched+"/p1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no DELETED line:\n%s", got)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("watch ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watch did not end after cancel")
	}

	// The live view (terminal mode) redraws the three tables.
	var live bytes.Buffer
	lctx, lcancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer lcancel()
	if err := watch.Run(lctx, cfg, watch.Options{Out: &live, Live: true, Title: c.Name}); err != nil {
		t.Fatalf("live watch: %v", err)
	}
	for _, s := range []string{"\x1b[H\x1b[2J", "nuv kube watch " + c.Name, "NODES (1)", c.Name + "-node-1", "SERVICES (2)", watched, "kubernetes"} {
		if !strings.Contains(live.String(), s) {
			t.Errorf("live view lacks %q:\n%s", s, live.String())
		}
	}
	// An unreachable server is an error at start, not a silent hang.
	bad := rest.CopyConfig(cfg)
	bad.Host = "https://127.0.0.1:1"
	if err := watch.Run(context.Background(), bad, watch.Options{Out: &live, StartTimeout: 2 * time.Second}); err == nil {
		t.Error("watch of a closed port succeeded")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Every --flavor of nuv's local clusters is detected as its distribution (the shared contract with
// `nuv cluster create local --flavor`), through `nuv kube detect` and KUBE in tasks. Clusters are
// started two at a time to spare the machine.
func TestIntegrationDetectEveryFlavor(t *testing.T) {
	if testing.Short() {
		t.Skip("real local clusters; skipped under -short")
	}
	// local, eks and kind are covered by TestIntegrationInventory. A "generic" flavored cluster carries
	// nuv.dev/flavor=generic, so it detects as generic although it is recognisable as nuv's own.
	want := map[string]string{"aks": "aks", "gke": "gke", "k3s": "k3s", "m8s": "m8s", "osh": "osh", "lks": "lks", "generic": "generic"}
	batches := [][]string{{"aks", "gke"}, {"k3s", "m8s"}, {"osh", "lks"}, {"generic"}}
	for _, b := range batches {
		t.Run(strings.Join(b, "+"), func(t *testing.T) {
			w := newWorld(t)
			cs := w.start(b...)
			for fl, c := range cs {
				typ, errOut, code := w.nuv("kube", "detect", c.Name)
				if code != 0 || strings.TrimSpace(typ) != want[fl] {
					t.Errorf("flavor %s: detect = %q (exit %d, %s), want %s", fl, typ, code, errOut, want[fl])
				}
				env := kube.TaskEnv(w.project, func(k string) string {
					if k == kube.EnvCluster {
						return c.Name
					}
					return w.vars[k]
				})
				if fmt.Sprint(env) != fmt.Sprint([]string{"KUBECONFIG=" + c.Kubeconfig, "KUBE=" + want[fl]}) {
					t.Errorf("flavor %s: TaskEnv with NUV_CLUSTER=%s = %v", fl, c.Name, env)
				}
			}
		})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

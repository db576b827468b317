package localtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// shared holds the clusters Shared started in this test binary, by shape, for Main to delete.
var shared struct {
	mu       sync.Mutex
	main     bool   // Main is running the tests
	dir      string // temporary NUV_HOME and project of the shared clusters
	clusters map[string]*sharedCluster
}

// sharedCluster is one shape's cluster: started once (ready closes), or the error that stopped it.
type sharedCluster struct {
	ready chan struct{}
	c     *Cluster
	err   error
	log   *switchLog
}

// Main runs a test binary's tests (call it from TestMain: os.Exit(localtest.Main(m))) and deletes
// the clusters Shared started, whatever the tests' result; an interrupt or termination signal
// deletes them too before the binary exits. A binary that panics, times out or is killed cannot
// clean up: its clusters' processes are recorded under TMPDIR like every test cluster's, and
// hack/test.sh stops them at the end of a run (package reap).
func Main(m *testing.M) int {
	shared.mu.Lock()
	shared.main = true
	shared.mu.Unlock()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	stopped := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			fmt.Fprintf(os.Stderr, "localtest: %v: deleting the shared clusters\n", s)
			deleteShared(os.Stderr)
			os.Exit(2)
		case <-stopped:
		}
	}()
	defer func() {
		signal.Stop(sig)
		close(stopped)
		deleteShared(os.Stderr)
	}()
	return m.Run()
}

// deleteShared deletes every shared cluster and their temporary directory; it reports to w only
// what went wrong (a test binary's output is its tests').
func deleteShared(w io.Writer) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	keys := make([]string, 0, len(shared.clusters))
	for k := range shared.clusters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sc := shared.clusters[k]
		<-sc.ready
		if sc.c == nil {
			continue
		}
		sc.log.to(nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		err := sc.c.Provider.Delete(ctx, sc.c.Name)
		cancel()
		if err != nil {
			fmt.Fprintf(w, "localtest: delete shared cluster %s: %v\n", sc.c.Name, err)
		}
	}
	shared.clusters = nil
	if shared.dir != "" {
		if err := os.RemoveAll(shared.dir); err != nil {
			fmt.Fprintf(w, "localtest: remove %s: %v\n", shared.dir, err)
		}
		shared.dir = ""
	}
}

// shapeKey names a cluster shape: the options that make two clusters interchangeable.
func shapeKey(o Options) string {
	nodes := o.Nodes
	if nodes <= 0 {
		nodes = 1
	}
	return fmt.Sprintf("%s-%d", o.Flavor, nodes)
}

// Shared returns this test binary's shared cluster of the shape opts give (Nodes and Flavor; two
// tests asking for the same shape get the same cluster), starting it the first time it is asked
// for; Main deletes it when the tests are done. It skips the test under -short, as Start does.
//
// A test on a shared cluster works in a namespace of its own (Cluster.Namespace), names what it
// makes so that no other test could make the same (UniqueName), deletes what it made (Namespace
// and DeleteAtEnd do it) and asserts nothing about what it did not make. A test that changes the
// control plane itself (stops, starts, kills, rolls or upgrades it, changes its nodes or its
// flavor, or needs it empty) calls Start for a cluster of its own.
//
// With opts.Project set, the cluster's admin kubeconfig is copied to
// <Project>/clusters/<Name>.kubeconfig and the returned Cluster's Kubeconfig and Project name the
// copy: a test's nuv commands then find the cluster in their project as they find a cluster of their
// own, and no two tests select or rewrite the same file. Name, Home and HA must be left empty.
func Shared(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a local cluster (real control plane); skipped under -short")
	}
	if opts.Name != "" || opts.Home != "" || opts.HA || opts.KeepOnFailure {
		t.Fatalf("localtest.Shared: Name, Home, HA and KeepOnFailure belong to a cluster of the test's own (Start)")
	}
	sc, err := sharedFor(t, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := *sc.c
	if opts.Project != "" {
		kc := filepath.Join(opts.Project, "clusters", c.Name+".kubeconfig")
		if err := copyFile(sc.c.Kubeconfig, kc); err != nil {
			t.Fatalf("shared cluster %s: %v", c.Name, err)
		}
		t.Cleanup(func() {
			if err := os.Remove(kc); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("remove the shared cluster's kubeconfig: %v", err)
			}
		})
		c.Kubeconfig, c.Project = kc, opts.Project
	}
	c.Config = sc.c.Config // read-only for every test: rest.CopyConfig before changing it
	return &c
}

// sharedFor returns the started shared cluster of opts' shape, starting it if no test did.
func sharedFor(t testing.TB, opts Options) (*sharedCluster, error) {
	key := shapeKey(opts)
	shared.mu.Lock()
	if !shared.main {
		shared.mu.Unlock()
		return nil, errors.New("localtest.Shared needs the package's TestMain to run its tests through localtest.Main, which deletes the shared clusters at the end")
	}
	if shared.clusters == nil {
		shared.clusters = map[string]*sharedCluster{}
	}
	if sc := shared.clusters[key]; sc != nil {
		shared.mu.Unlock()
		<-sc.ready
		if sc.err != nil {
			return nil, fmt.Errorf("shared %s cluster could not be started earlier: %w", key, sc.err)
		}
		return sc, nil
	}
	if shared.dir == "" {
		// Under TMPDIR, as every test's directories: hack/test.sh finds the pid files there if the
		// binary dies without cleaning up.
		d, err := os.MkdirTemp("", "localtest-shared-")
		if err != nil {
			shared.mu.Unlock()
			return nil, fmt.Errorf("shared clusters' directory: %w", err)
		}
		shared.dir = d
	}
	sc := &sharedCluster{ready: make(chan struct{}), log: &switchLog{}}
	shared.clusters[key] = sc
	dir := shared.dir
	shared.mu.Unlock()

	defer close(sc.ready)
	sc.log.to(t)
	defer sc.log.to(nil) // the cluster outlives the test that started it
	sc.c, sc.err = startShared(t, dir, key, opts, sc.log)
	return sc, sc.err
}

// startShared creates the shared cluster of one shape, with one more try as Start does.
func startShared(t testing.TB, dir, key string, opts Options, log cli.Logger) (*Cluster, error) {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	name := "shared-" + strings.Trim(key, "-") + "-" + hex.EncodeToString(b)
	home, project := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	p := local.Provider{Home: home, Project: project, Log: log, Getenv: os.Getenv}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	create := localkube.CreateOptions{Name: name, Nodes: opts.Nodes, Flavor: opts.Flavor}
	t.Logf("starting the shared local cluster %s for this package's tests", name)
	info, err := p.Create(ctx, create)
	if err != nil && ctx.Err() == nil && !errors.Is(err, cluster.ErrExists) {
		t.Logf("create shared local cluster %s failed, trying once more: %v", name, err)
		info, err = p.Create(ctx, create)
	}
	if err != nil {
		return nil, fmt.Errorf("create shared local cluster %s: %w", name, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", info.Kubeconfig)
	if err != nil {
		_ = p.Delete(context.Background(), name)
		return nil, fmt.Errorf("kubeconfig of %s: %w", name, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	return &Cluster{Name: name, Kubeconfig: info.Kubeconfig, Config: cfg, Home: home, Project: project, Provider: p}, nil
}

// Namespace creates a namespace of the test's own on the cluster (named after the test, unique)
// and deletes it when the test ends, waiting until it is gone with what it held.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	name := UniqueName(t, "t")
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"nuv.dev/test": "true"}}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := deleteAndWait(cs.CoreV1().Namespaces().Delete, func(ctx context.Context) error {
			_, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			return err
		}, name); err != nil {
			t.Errorf("namespace %s: %v", name, err)
		}
	})
	return name
}

// DeleteAtEnd deletes an object the test made, or made nuv make, outside a namespace of its own (of
// the resource gvr; namespace "" for a cluster-scoped one) when the test ends, and waits until it is
// gone; an object already gone is fine.
func (c *Cluster) DeleteAtEnd(t testing.TB, gvr schema.GroupVersionResource, namespace, name string) {
	t.Helper()
	dc, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	var r dynamic.ResourceInterface = dc.Resource(gvr)
	if namespace != "" {
		r = dc.Resource(gvr).Namespace(namespace)
	}
	t.Cleanup(func() {
		del := func(ctx context.Context, name string, o metav1.DeleteOptions) error { return r.Delete(ctx, name, o) }
		if err := deleteAndWait(del, func(ctx context.Context) error {
			_, err := r.Get(ctx, name, metav1.GetOptions{})
			return err
		}, name); err != nil {
			t.Errorf("%s %s: %v", gvr.Resource, path.Join(namespace, name), err)
		}
	})
}

// deleteAndWait deletes name in the foreground and polls get until it answers NotFound.
func deleteAndWait(del func(context.Context, string, metav1.DeleteOptions) error, get func(context.Context) error, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fg := metav1.DeletePropagationForeground
	if err := del(ctx, name, metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("delete: %w", err)
	}
	for {
		err := get(ctx)
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("still there after deletion (last answer: %v): %w", err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// UniqueName returns a DNS label made of prefix, the test's name and a random suffix: no other
// test, nor this one run again, makes the same.
func UniqueName(t testing.TB, prefix string) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	suffix := "-" + hex.EncodeToString(b)
	var sb strings.Builder
	test := strings.TrimPrefix(strings.TrimPrefix(t.Name(), "TestIntegration"), "Test")
	for _, r := range strings.ToLower(prefix + "-" + test) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			sb.WriteRune(r)
		default:
			if s := sb.String(); s != "" && !strings.HasSuffix(s, "-") {
				sb.WriteByte('-')
			}
		}
	}
	base := strings.TrimSuffix(sb.String(), "-")
	if max := 63 - len(suffix); len(base) > max {
		base = strings.TrimSuffix(base[:max], "-")
	}
	return base + suffix
}

// copyFile writes src's content to dst (its directory made if needed) through a temporary file, so
// that a reader never sees half of it.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".kubeconfig-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("kubeconfig copy: %w", err)
	}
	return nil
}

// switchLog is a cli.Logger whose output goes to one test's log while that test starts the cluster,
// and nowhere once the test is over (a log after its end would panic).
type switchLog struct {
	mu sync.Mutex
	t  testing.TB
}

func (l *switchLog) to(t testing.TB) { l.mu.Lock(); l.t = t; l.mu.Unlock() }

func (l *switchLog) logf(f string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.t != nil {
		l.t.Helper()
		l.t.Logf(f, a...)
	}
}

func (l *switchLog) Infof(f string, a ...any) { l.logf(f, a...) }
func (l *switchLog) Warnf(f string, a ...any) { l.logf("warning: "+f, a...) }
func (l *switchLog) V(int) cli.InfoLogger     { return switchInfo{l} }
func (l *switchLog) String() string           { return "localtest shared cluster logger" }

type switchInfo struct{ l *switchLog }

func (i switchInfo) Infof(f string, a ...any) { i.l.logf(f, a...) }
func (i switchInfo) Enabled() bool            { return true }

// Package localtest gives integration tests a real local cluster (nuv's local provider: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok as separate processes):
//
//	c := localtest.Start(t, localtest.Options{Nodes: 2})
//	cs := kubernetes.NewForConfigOrDie(c.Config)
//
// The cluster gets a unique name, a temporary NUV_HOME and project directory (unless Options say
// otherwise) and is deleted in t.Cleanup. Tests using it are skipped under -short.
//
// Tests that only use a cluster share one: Shared gives every test of a package that asks for the
// same shape (nodes, flavor) one cluster, started when the first of them asks and deleted at the end
// by Main, which the package's TestMain calls:
//
//	func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }
//
//	c := localtest.Shared(t, localtest.Options{})
//	ns := c.Namespace(t) // the test's own, deleted (and waited for) when it ends
//
// On a shared cluster a test works in a namespace of its own, names what it makes with UniqueName,
// has everything it made outside its namespace deleted when it ends (DeleteAtEnd, for objects nuv
// makes cluster-wide too) and asserts nothing about objects it did not make. The rule for when a
// test must Start a cluster of its own: it changes the control plane itself (stops, starts, kills,
// rolls or upgrades it, adds or removes nodes, changes its flavor), the cluster is what it tests
// (its creation, its state in NUV_HOME, its deletion), or it needs a shape no other test of the
// package uses (a shared cluster would live, idle, until the package ends). The first cluster
// on a machine builds the nuv-kube companion (~5 min cold, cached afterwards in $NUV_CACHE_DIR or
// ~/.cache/nuv; `nuv cluster prepare` builds it ahead of time, $NUV_KUBE_BIN names a prebuilt one).
package localtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is a running local cluster for tests.
type Cluster struct {
	// Name is the cluster's name (unique per test unless Options.Name is set).
	Name string
	// Kubeconfig is the path of its admin kubeconfig (<Project>/clusters/<Name>.kubeconfig).
	Kubeconfig string
	// Config is an admin client configuration.
	Config *rest.Config
	// Home is the NUV_HOME the cluster's state lives in.
	Home string
	// Project is the project directory holding clusters/<Name>.kubeconfig.
	Project string
	// Provider is the provider that created it (to stop, start or inspect it).
	Provider local.Provider
}

// Options tune Start. The zero value gives one node, no flavor, temporary directories.
type Options struct {
	Nodes   int
	Flavor  string
	HA      bool
	Name    string // default: a unique "t-<hex>"
	Project string // default: a temporary directory
	Home    string // default: a temporary directory
	// KeepOnFailure leaves the cluster running when the test failed (for debugging).
	KeepOnFailure bool
}

// Start creates a local cluster, waits until its nodes are Ready, and deletes it in t.Cleanup.
// It skips the test under -short and fails it (t.Fatal) if the cluster cannot be created.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a local cluster (real control plane); skipped under -short")
	}
	if opts.Home == "" {
		opts.Home = t.TempDir()
	}
	if opts.Project == "" {
		opts.Project = t.TempDir()
	}
	if opts.Name == "" {
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		opts.Name = "t-" + hex.EncodeToString(b)
	}
	p := local.Provider{Home: opts.Home, Project: opts.Project, Log: Logger(t), Getenv: os.Getenv}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	create := localkube.CreateOptions{Name: opts.Name, Nodes: opts.Nodes, Flavor: opts.Flavor, HA: opts.HA}
	info, err := p.Create(ctx, create)
	if err != nil && ctx.Err() == nil && !errors.Is(err, cluster.ErrExists) {
		// Test packages start clusters concurrently on a small machine; a create that lost a race
		// for a port or timed out under load has cleaned up after itself, so one more try is fair.
		// The first error stays in the log (and its component logs under NUV_HOME/failed/).
		t.Logf("create local cluster %s failed, trying once more: %v", opts.Name, err)
		info, err = p.Create(ctx, create)
	}
	if err != nil {
		t.Fatalf("create local cluster %s: %v", opts.Name, err)
	}
	t.Cleanup(func() {
		if opts.KeepOnFailure && t.Failed() {
			t.Logf("keeping cluster %s (NUV_HOME=%s, kubeconfig %s)", opts.Name, opts.Home, info.Kubeconfig)
			return
		}
		if err := p.Delete(context.Background(), opts.Name); err != nil {
			t.Errorf("delete local cluster %s: %v", opts.Name, err)
		}
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", info.Kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig of %s: %v", opts.Name, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	return &Cluster{Name: opts.Name, Kubeconfig: info.Kubeconfig, Config: cfg, Home: opts.Home, Project: opts.Project, Provider: p}
}

// Logger returns a cli.Logger writing to t.Logf.
func Logger(t testing.TB) cli.Logger { return tlog{t: t} }

type tlog struct{ t testing.TB }

func (l tlog) Infof(f string, a ...any) { l.t.Helper(); l.t.Logf(f, a...) }
func (l tlog) Warnf(f string, a ...any) { l.t.Helper(); l.t.Logf("warning: "+f, a...) }
func (l tlog) V(int) cli.InfoLogger     { return tinfo(l) }
func (l tlog) String() string           { return fmt.Sprintf("localtest logger for %s", l.t.Name()) }

type tinfo tlog

func (l tinfo) Infof(f string, a ...any) { l.t.Helper(); l.t.Logf(f, a...) }
func (l tinfo) Enabled() bool            { return true }

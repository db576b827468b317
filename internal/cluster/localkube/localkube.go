// Package localkube is the machinery of nuv's local clusters, with no cluster.Provider in it: a real
// Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, built
// into the nuv-kube companion, or upstream binaries) with kwok faking nodes and the pod lifecycle,
// one process per component on loopback ports, state under <NUV_HOME>/clusters/<name>/ and the
// kubeconfig in <project>/clusters/<name>.kubeconfig. It makes, starts, stops, repairs, scales
// and deletes them (Clusters), gets the binaries they run (Companion) and reads their record.
// The local provider (package local) plans and applies local clusters with it; the control-plane
// door (package controlplane) runs them imperatively for the emulators and `nuv up`.
//
// State directory layout: state.json (atomic), pki/ (CA, certificates, service-account keys, 0600
// keys), config/ (etcd configs, component kubeconfigs, kwok stages), data/ (etcd data), logs/
// (<component>.log), pids/ (<component>.pid: "PID STARTTIME"; other processes started for the
// cluster are recorded here too and stopped with it, see RegisterProcess).
package localkube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	record "github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/paths"
)

// Clusters runs the local clusters of one home.
type Clusters struct {
	// Home is nuv's state directory (paths.Home); clusters live in Home/clusters/<name>.
	Home string
	// Project is the project root; kubeconfigs are written to Project/clusters/<name>.kubeconfig.
	Project string
	// Log receives progress; nil is quiet.
	Log cli.Logger
	// Getenv reads the environment (companion build settings, NUV_LOCAL_PORT_BASE); nil is os.Getenv.
	Getenv func(string) string
}

// CreateOptions are the options of a local cluster.
type CreateOptions struct {
	Name    string
	Nodes   int    // default 1
	Version string // default KubeVersion
	Flavor  string // "" (plain local) or one of cluster.FlavorNames()
	HA      bool   // three etcd members, two apiservers behind a balancer
	// PortBase, if > 0, makes ports be taken upwards from it (skipping those in use); else random.
	PortBase int
	// NodeGroups, if set, replace Nodes: the cluster's nodes in named groups.
	NodeGroups []NodeGroup
	// PodCIDR and ServiceCIDR are the cluster's networks (default DefaultPodCIDR, DefaultServiceCIDR).
	PodCIDR, ServiceCIDR string
	// TokenWebhook, when set, is the URL of a TokenReview webhook (authentication.k8s.io/v1) the
	// API server asks about bearer tokens it does not know (the AWS emulator's EKS authenticator).
	TokenWebhook string
	// Durability is Fast or Safe; "" picks Safe for a cluster that hosts nuv's state store
	// (NUV_STATE=kube:NAMESPACE@<its kubeconfig>), else Fast.
	Durability string
}

// Durabilities of a local cluster's etcd.
const (
	// Fast: etcd does not fsync (unsafe-no-fsync): a process kill loses nothing, a host crash can
	// lose recent writes. For throwaway test clusters.
	Fast = "fast"
	// Safe: etcd fsyncs every write. For clusters whose data must survive a host crash: a cluster
	// hosting a kube: state store, an emulator's clusters.
	Safe = "safe"
)

// ValidDurability checks a durability setting ("" is the default).
func ValidDurability(d string) error {
	switch d {
	case "", Fast, Safe:
		return nil
	}
	return fmt.Errorf("durability %q: want %s or %s", d, Fast, Safe)
}

// durability resolves o.Durability for the cluster whose kubeconfig is kubeconfig.
func (p Clusters) durability(o CreateOptions, kubeconfig string) string {
	if o.Durability != "" {
		return o.Durability
	}
	if hostsState(p.getenv()("NUV_STATE"), kubeconfig) {
		return Safe
	}
	return Fast
}

// hostsState reports whether the state store location (NUV_STATE) is a kube: store in the cluster
// whose kubeconfig is kubeconfig.
func hostsState(location, kubeconfig string) bool {
	rest, ok := strings.CutPrefix(location, "kube:")
	if !ok {
		return false
	}
	_, kc, _ := strings.Cut(rest, "@")
	if kc == "" {
		return false
	}
	a, err1 := filepath.Abs(kc)
	b, err2 := filepath.Abs(kubeconfig)
	return err1 == nil && err2 == nil && filepath.Clean(a) == filepath.Clean(b)
}

// Default networks of a local cluster.
const (
	DefaultPodCIDR     = "10.244.0.0/16"
	DefaultServiceCIDR = "10.96.0.0/16"
)

func (p Clusters) log() cli.Logger { return kit.Log(p.Log) }

func (p Clusters) getenv() func(string) string { return kit.Getenv(p.Getenv) }

// validate normalises and checks options, listing valid values on error.
func (o *CreateOptions) validate() error {
	if o.Name == "" {
		o.Name = "local"
	}
	if err := ValidName(o.Name); err != nil {
		return err
	}
	if err := ValidDurability(o.Durability); err != nil {
		return err
	}
	if len(o.NodeGroups) > 0 {
		if err := validateGroups(o.NodeGroups); err != nil {
			return err
		}
		o.Nodes = totalNodes(o.NodeGroups)
		if o.Nodes == 0 {
			return fmt.Errorf("the node groups have no node: a new cluster needs at least one")
		}
	}
	if o.Nodes == 0 {
		o.Nodes = 1
	}
	if o.Nodes < 1 || o.Nodes > MaxNodes {
		return fmt.Errorf("--nodes %d: must be between 1 and %d", o.Nodes, MaxNodes)
	}
	for _, c := range []*string{&o.PodCIDR, &o.ServiceCIDR} {
		if *c == "" {
			continue
		}
		if _, _, err := net.ParseCIDR(*c); err != nil {
			return fmt.Errorf("invalid network %q: %w", *c, err)
		}
	}
	if o.Version == "" {
		o.Version = KubeVersion
	}
	o.Version = strings.TrimPrefix(o.Version, "v")
	ok := false
	for _, v := range SupportedVersions() {
		ok = ok || v == o.Version
	}
	if !ok {
		return fmt.Errorf("unsupported version %q (valid: %s)", o.Version, strings.Join(SupportedVersions(), ", "))
	}
	if _, err := cluster.LookupFlavor(o.Flavor); err != nil {
		return err
	}
	return nil
}

// Create creates and starts a cluster, waits until its nodes are Ready and writes its kubeconfig.
// If ctx is cancelled (Ctrl-C) or anything fails, everything started so far is stopped and removed.
// An existing cluster of the same name is left untouched (cluster.ErrExists).
func (p Clusters) Create(ctx context.Context, o CreateOptions) (_ cluster.Info, retErr error) {
	start := time.Now()
	if err := o.validate(); err != nil {
		return cluster.Info{}, err
	}
	if o.PortBase == 0 {
		n, err := p.portBase()
		if err != nil {
			return cluster.Info{}, err
		}
		o.PortBase = n
	}
	dir := StateDir(p.Home, o.Name)
	unlock, err := p.lock(ctx, o.Name)
	if err != nil {
		return cluster.Info{}, err
	}
	defer unlock()
	if _, err := os.Stat(dir); err == nil {
		return cluster.Info{}, fmt.Errorf("create %q: %w (state in %s; `nuv cluster delete %s` removes it)", o.Name, cluster.ErrExists, dir, o.Name)
	}
	bins, err := Companion{Getenv: p.getenv(), Log: p.Log}.Prepare(ctx, PrepareOptions{Version: o.Version, Balancer: o.HA})
	if err != nil {
		return cluster.Info{}, err
	}
	if o.HA {
		if _, _, err := componentCommand(bins.Path, []string{"lb"}); err != nil {
			return cluster.Info{}, fmt.Errorf("create %q: %w", o.Name, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return cluster.Info{}, fmt.Errorf("nuv home: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return cluster.Info{}, fmt.Errorf("create %q: %w", o.Name, cluster.ErrExists)
		}
		return cluster.Info{}, fmt.Errorf("create state directory: %w", err)
	}
	kubeconfig := kit.KubeconfigPath(p.Project, o.Name)
	s := &state{Name: o.Name, Provider: "local", Version: o.Version, Flavor: o.Flavor, HA: o.HA, Nodes: o.Nodes,
		NodeGroups: o.NodeGroups, PodCIDR: o.PodCIDR, ServiceCIDR: o.ServiceCIDR,
		Created: time.Now().UTC(), Kubeconfig: kubeconfig, Binary: bins.Path, BinarySource: bins.Source, Phase: record.Creating}
	s.TokenWebhook = o.TokenWebhook
	s.Durability = p.durability(o, kubeconfig)
	ok, wroteKubeconfig := false, false
	defer func() {
		if ok {
			return
		}
		p.log().Infof("cleaning up %s: stopping its processes and removing its state", o.Name)
		stopAll(dir, s)
		if ctx.Err() == nil && retErr != nil {
			// A failure, not an interruption: keep the component logs for a look.
			kept := filepath.Join(p.Home, "failed", fmt.Sprintf("%s-%s", o.Name, time.Now().UTC().Format("20060102T150405")))
			_ = os.MkdirAll(filepath.Dir(kept), 0o700)
			if err := os.Rename(filepath.Join(dir, "logs"), kept); err == nil {
				retErr = fmt.Errorf("%w\n(component logs kept in %s)", retErr, kept)
			}
		}
		os.RemoveAll(dir)
		if wroteKubeconfig {
			os.Remove(kubeconfig)
		}
	}()
	for _, sub := range []string{"pki", "config", "data", "logs", "pids"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return cluster.Info{}, err
		}
	}
	if err := generatePKI(filepath.Join(dir, "pki")); err != nil {
		return cluster.Info{}, fmt.Errorf("generate certificates: %w", err)
	}
	p.log().Infof("creating local cluster %s (Kubernetes %s, %d node(s)%s%s)", o.Name, o.Version, o.Nodes, flavorNote(o.Flavor), haNote(o.HA))
	if err := p.startOnFreePortsRetrying(ctx, dir, s, o.PortBase); err != nil {
		return cluster.Info{}, err
	}
	t0 := time.Now()
	if err := setupCluster(ctx, dir, s, p.log()); err != nil {
		return cluster.Info{}, err
	}
	p.log().V(1).Infof("  nodes Ready and default ServiceAccount after %.2fs", time.Since(t0).Seconds())
	wroteKubeconfig = true
	if err := p.writeKubeconfig(dir, s); err != nil {
		return cluster.Info{}, err
	}
	s.Phase = record.Running
	if err := saveState(dir, s); err != nil {
		return cluster.Info{}, err
	}
	ok = true
	p.log().Infof("cluster %s ready in %.1fs: %d node(s) Ready, API %s, kubeconfig %s", o.Name, time.Since(start).Seconds(), o.Nodes, s.APIURL, kubeconfig)
	return p.Status(context.WithoutCancel(ctx), o.Name)
}

// portBase is NUV_LOCAL_PORT_BASE, the first port a cluster's components try (0: any free ports).
func (p Clusters) portBase() (int, error) {
	v := p.getenv()("NUV_LOCAL_PORT_BASE")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1024 || n > 65000 {
		return 0, fmt.Errorf("NUV_LOCAL_PORT_BASE=%q: want a port number between 1024 and 65000", v)
	}
	return n, nil
}

// startOnFreePortsRetrying starts the cluster's components on free ports (from portBase, when set). A
// port found free can still be taken before its component binds it (by another cluster being
// created at the same moment): then it starts over on other ports, at most twice.
func (p Clusters) startOnFreePortsRetrying(ctx context.Context, dir string, s *state, portBase int) error {
	for attempt := 1; ; attempt++ {
		err := p.startOnFreePorts(ctx, dir, s, portBase)
		if err == nil {
			break
		}
		if attempt == 3 || ctx.Err() != nil || !strings.Contains(err.Error(), "address already in use") {
			return err
		}
		p.log().Infof("  a port was taken meanwhile; starting again on other ports")
		stopAll(dir, s)
		for _, sub := range []string{"data", "logs"} {
			os.RemoveAll(filepath.Join(dir, sub))
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
				return err
			}
		}
		if portBase > 0 {
			portBase += 100
		}
	}
	return nil
}

func flavorNote(f string) string {
	if f == "" {
		return ""
	}
	return ", flavor " + f
}

func haNote(ha bool) string {
	if ha {
		return ", HA: 3 etcd, 2 apiservers, balancer"
	}
	return ""
}

func (p Clusters) writeKubeconfig(dir string, s *state) error {
	b, err := kubeconfigFor(filepath.Join(dir, "pki"), "nuv-"+s.Name, s.APIURL, "admin")
	if err != nil {
		return err
	}
	return kit.WriteKubeconfig(s.Kubeconfig, b)
}

// Stop stops every process of a cluster and keeps its state.
func (p Clusters) Stop(ctx context.Context, name string) error {
	dir, unlock, err := p.lockExisting(ctx, "stop", name)
	if err != nil {
		return err
	}
	defer unlock()
	s, _ := loadState(dir) // a corrupt state still has pid files to stop
	stopAll(dir, s)
	return nil
}

// Start starts a stopped cluster, or repairs a degraded one by restarting its dead components.
func (p Clusters) Start(ctx context.Context, name string) error {
	dir, unlock, err := p.lockExisting(ctx, "start", name)
	if err != nil {
		return err
	}
	defer unlock()
	s, err := loadState(dir)
	if err != nil {
		return fmt.Errorf("start %q: %w", name, err)
	}
	// Restart components with the current companion (same Kubernetes version; a newer nuv may have
	// rebuilt it); keep the recorded one if none can be had.
	if bins, err := (Companion{Getenv: p.getenv(), Log: p.Log}).Prepare(ctx, PrepareOptions{Version: s.Version, Balancer: s.HA}); err == nil {
		if _, _, lbErr := componentCommand(bins.Path, []string{"lb"}); !s.HA || lbErr == nil {
			if bins.Path != s.Binary || bins.Source != s.BinarySource {
				s.Binary, s.BinarySource = bins.Path, bins.Source
				if err := saveState(dir, s); err != nil {
					return err
				}
			}
		}
	} else if _, statErr := os.Stat(s.Binary); statErr != nil {
		return fmt.Errorf("start %q: %w", name, err)
	}
	if err := p.movePorts(dir, s); err != nil {
		return fmt.Errorf("start %q: %w", name, err)
	}
	if err := p.startComponents(ctx, dir, s, true); err != nil {
		return fmt.Errorf("start %q: %w", name, err)
	}
	if s.Phase != record.Running {
		// The nuv that created it died before finishing (killed, machine crash): finish the job.
		if err := setupCluster(ctx, dir, s, p.log()); err != nil {
			return fmt.Errorf("start %q: %w", name, err)
		}
		if err := p.writeKubeconfig(dir, s); err != nil {
			return err
		}
		s.Phase = record.Running
		return saveState(dir, s)
	}
	if err := waitNodesReady(ctx, dir, s, p.log()); err != nil {
		return fmt.Errorf("start %q: %w", name, err)
	}
	if _, err := os.Stat(s.Kubeconfig); err != nil {
		return p.writeKubeconfig(dir, s)
	}
	return nil
}

// Delete stops a cluster and removes its state directory and kubeconfig.
func (p Clusters) Delete(ctx context.Context, name string) error {
	dir, unlock, err := p.lockExisting(ctx, "delete", name)
	if err != nil {
		return err
	}
	defer unlock()
	s, _ := loadState(dir)
	stopAll(dir, s)
	kubeconfig := kit.KubeconfigPath(p.Project, name)
	if s != nil && s.Kubeconfig != "" {
		kubeconfig = s.Kubeconfig
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("delete %q: remove state: %w", name, err)
	}
	if err := os.Remove(kubeconfig); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete %q: remove kubeconfig: %w", name, err)
	}
	return nil
}

// Names lists the clusters in Home, sorted.
func (p Clusters) Names() ([]string, error) {
	entries, err := os.ReadDir(paths.Locator{Home: p.Home}.ControlPlanes())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// Ensure returns the cluster o.Name running: it creates it if it does not exist, and starts or
// repairs it if it is stopped or degraded (options other than the name only apply to a creation).
// This is what `nuv up` uses for its "dev" cluster.
func (p Clusters) Ensure(ctx context.Context, o CreateOptions) (cluster.Info, error) {
	if o.Name == "" {
		o.Name = "local"
	}
	info, err := p.Status(ctx, o.Name)
	if errors.Is(err, cluster.ErrNotFound) {
		info, err = p.Create(ctx, o)
		if !errors.Is(err, cluster.ErrExists) { // else another nuv created it meanwhile
			return info, err
		}
		info, err = p.Status(ctx, o.Name)
	}
	if err != nil {
		return info, err
	}
	if info.Status == cluster.Corrupt {
		return info, fmt.Errorf("cluster %q: %w (delete it with `nuv cluster delete %s`)", o.Name, info.Err, o.Name)
	}
	if info.Status != cluster.Running || info.NodesReady < info.Nodes {
		p.log().Infof("starting local cluster %s (%s)", o.Name, info.Status)
		if err := p.Start(ctx, o.Name); err != nil {
			return info, err
		}
		return p.Status(ctx, o.Name)
	}
	return info, nil
}

// lock serialises the nuv processes working on one cluster (create, start, stop, delete), through
// <home>/clusters/.<name>.lock; the file stays (removing it would let two holders in).
func (p Clusters) lock(ctx context.Context, name string) (func(), error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	root := paths.Locator{Home: p.Home}.ControlPlanes()
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("nuv home: %w", err)
	}
	return fsutil.Lock(ctx, filepath.Join(root, "."+name+".lock"), func() {
		p.log().Infof("waiting for another nuv working on cluster %s", name)
	})
}

// lockExisting locks the cluster name for verb and returns its state directory; the error wraps
// cluster.ErrNotFound when the cluster does not exist.
func (p Clusters) lockExisting(ctx context.Context, verb, name string) (dir string, unlock func(), err error) {
	unlock, err = p.lock(ctx, name)
	if err != nil {
		return "", nil, err
	}
	dir = StateDir(p.Home, name)
	if _, err := os.Stat(dir); err != nil {
		unlock()
		return "", nil, fmt.Errorf("%s %q: %w", verb, name, cluster.ErrNotFound)
	}
	return dir, unlock, nil
}

// movePorts gives a stopped cluster new ports for those another program took meanwhile (all but
// etcd peer ports, which etcd members record in their data), rewriting the configuration and the
// kubeconfig. A cluster with any process running keeps its ports.
func (p Clusters) movePorts(dir string, s *state) error {
	for _, c := range plan(dir, s) {
		if p.running(dir, c) {
			return nil
		}
	}
	var taken []string
	for role, port := range s.Ports {
		if strings.HasSuffix(role, "-peer") {
			continue
		}
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err != nil {
			taken = append(taken, role)
		} else {
			l.Close()
		}
	}
	if len(taken) == 0 {
		return nil
	}
	sort.Strings(taken)
	mine := map[int]bool{}
	for _, port := range s.Ports {
		mine[port] = true
	}
	_, fresh, err := allocatePorts(taken, 0, mine)
	if err != nil {
		return err
	}
	for _, role := range taken {
		p.log().Infof("  port %d (%s) is taken: using %d", s.Ports[role], role, fresh[role])
		s.Ports[role] = fresh[role]
	}
	s.APIURL = apiURL(s)
	if err := writeConfigs(dir, s); err != nil {
		return err
	}
	if err := saveState(dir, s); err != nil {
		return err
	}
	return p.writeKubeconfig(dir, s)
}

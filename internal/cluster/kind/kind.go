// Package kind is nuv's kind provider: real Kubernetes clusters whose nodes are containers of a
// container runtime (docker, podman or nerdctl), made through the kind Go library
// (sigs.k8s.io/kind; no kind CLI), behind the cluster.Provider seam of the lifecycle engine.
//
// A spec becomes a kind v1alpha4 configuration (Config): controlPlane.count control-plane nodes,
// one worker per node of each node group with the group's labels and taints, the node image for
// the version, networks, port mappings, and the patches the host needs (kubelet failCgroupV1 on a
// cgroup v1 host, containerd restrict_oom_score_adj where CAP_SYS_RESOURCE is missing, containerd's
// config_path for registry hosts). Every node carries nuv.dev/cluster, nuv.dev/provider=kind and
// nuv.dev/node-group labels: a kind cluster of the same name without them was not made by nuv and
// is left alone (a conflict in the plan).
//
// Resources, as the engine sees them:
//
//	kind-cluster/<name>  the node containers; nodes, version, image, networks and ports can only
//	                     change by replacing the cluster (kind cannot add or remove nodes); a
//	                     cluster whose containers were stopped is started by an update of "running"
//	registry/loopback    nuv's registry reached from the nodes (registry.go): the registry process,
//	                     its relay container on the cluster's network, the nodes' containerd
//	                     mirror, the KEP-1755 local-registry-hosting ConfigMap
//
// A create interrupted before the cluster was Ready (its record still says "creating") is Broken
// for the engine: the next plan replaces it and says why. A delete interrupted after kind removed
// the nodes leaves nuv's own files, which Observe still reports, so the next delete finishes it.
// Several control planes need kind's load balancer image in the runtime (Preflight refuses the
// plan otherwise, before anything is made); one control plane runs its controller-manager without
// leader election. Every create logs its timed phases (nuv's, kind's, kubeadm init's, the node's
// boot).
//
// The kubeconfig goes to <project>/clusters/<name>.kubeconfig (0600, written atomically; kind's
// own default, ~/.kube/config, is never touched). Logs come from kind's log export.
package kind

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	kindlog "sigs.k8s.io/kind/pkg/log"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

// Resource kinds of a kind cluster.
const (
	kindCluster  = "kind-cluster"
	kindRegistry = "registry"
)

// DefaultVersion is the Kubernetes version of a spec that names neither a version nor an image:
// the version nuv's local clusters and its offline node image are built for.
const DefaultVersion = companion.KubeVersion

// NodeImageFunc returns the node image for a Kubernetes version (MAJOR.MINOR.PATCH) present in the
// container runtime whose program is runtime (the detected runtime's Path), making and loading it
// if needed (nuv's offline node-image builder). It is asked only when a cluster is created.
type NodeImageFunc func(ctx context.Context, version, runtime string) (string, error)

// RegistryFunc starts nuv's loopback registry (of the provider's Home) if needed and returns its
// host; the provider wires the cluster cfg points at to it. The command layer provides it.
type RegistryFunc func(ctx context.Context, cfg *rest.Config) (host string, err error)

// Provider makes kind clusters. Use a pointer: it remembers the runtime it detected.
type Provider struct {
	// Home is nuv's state directory: exported logs go to Home/kind/<name>/logs.
	Home string
	// Project is the project root: kubeconfigs go to Project/clusters/<name>.kubeconfig.
	Project string
	// Log receives progress; nil is quiet.
	Log cli.Logger
	// Getenv reads the environment (KIND_EXPERIMENTAL_PROVIDER, DOCKER_HOST, NUV_KIND_NODE_IMAGE);
	// nil is os.Getenv.
	Getenv func(string) string
	// NodeImage makes the node image for a version when the spec names none; nil: kind's default
	// image, which is pulled (only for its own version).
	NodeImage NodeImageFunc
	// RegistryHost is nuv's loopback registry host (localhost:PORT) as configured: what the plan
	// compares with while the registry does not run.
	RegistryHost string
	// Registry starts the loopback registry (a spec's `registry: true`); nil: refused.
	Registry RegistryFunc

	// Phases are the timed steps of the last create this provider carried out.
	Phases []Phase

	mu sync.Mutex
	rt *containerrt.Runtime
	// lbImage replaces LoadBalancerImage in the check of an HA spec (tests of the branch where the
	// runtime has the image, which cannot be pulled here).
	lbImage string
}

var (
	_ cluster.Provider  = (*Provider)(nil)
	_ cluster.LogSource = (*Provider)(nil)
	_ cluster.Adopter   = (*Provider)(nil)
	_ cluster.Starter   = (*Provider)(nil)
)

// Name is "kind".
func (p *Provider) Name() string { return "kind" }

func (p *Provider) log() cli.Logger { return kit.Log(p.Log) }

func (p *Provider) getenv(k string) string { return kit.Getenv(p.Getenv)(k) }

// runtime detects the container runtime once.
func (p *Provider) runtime(ctx context.Context) (containerrt.Runtime, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rt != nil {
		return *p.rt, nil
	}
	rt, err := containerrt.Detect(ctx, kit.Getenv(p.Getenv))
	if err != nil {
		return containerrt.Runtime{}, err
	}
	p.rt = &rt
	return rt, nil
}

func (p *Provider) kind(rt containerrt.Runtime) *kindcluster.Provider {
	return p.kindTimed(rt, nil)
}

// kindTimed is the kind library's provider whose status lines and kubeadm output also go to clock.
func (p *Provider) kindTimed(rt containerrt.Runtime, clock *phaseClock) *kindcluster.Provider {
	return kindcluster.NewProvider(runtimeOption(rt), kindcluster.ProviderWithLogger(kindLogger{p.log(), clock}))
}

// KubeconfigPath is where the kubeconfig of cluster name is written.
func (p *Provider) KubeconfigPath(name string) string { return kit.KubeconfigPath(p.Project, name) }

// nodeContainer is one node container of a kind cluster.
type nodeContainer struct {
	Name    string
	Running bool
	Role    string
}

// loadBalancerRole is kind's role label of the load balancer container it puts in front of several
// control planes (a container of the cluster, not a Kubernetes node).
const loadBalancerRole = "external-load-balancer"

// kubeNodes counts the containers that are Kubernetes nodes (all but kind's load balancer).
func kubeNodes(cs []nodeContainer) int {
	n := 0
	for _, c := range cs {
		if c.Role != loadBalancerRole {
			n++
		}
	}
	return n
}

// containers lists the node containers of cluster name through the runtime (kind's cluster label).
func (p *Provider) containers(ctx context.Context, rt containerrt.Runtime, name string) ([]nodeContainer, error) {
	out, err := rt.Output(ctx, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+name,
		"--format", `{{.Names}}|{{.State}}|`+rt.PsLabel("io.x-k8s.kind.role"))
	if err != nil {
		return nil, fmt.Errorf("list the node containers of kind cluster %s: %w", name, err)
	}
	var cs []nodeContainer
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(l, "|")
		if len(f) < 3 || f[0] == "" {
			continue
		}
		cs = append(cs, nodeContainer{Name: f[0], Running: strings.EqualFold(f[1], "running") || strings.HasPrefix(strings.ToLower(f[1]), "up"), Role: f[2]})
	}
	sort.Slice(cs, func(a, b int) bool { return cs[a].Name < cs[b].Name })
	return cs, nil
}

// restConfig is the admin config of cluster name: nuv's kubeconfig when it exists, else kind's.
func (p *Provider) restConfig(rt containerrt.Runtime, name string) (*rest.Config, error) {
	path := p.KubeconfigPath(name)
	if _, err := os.Stat(path); err == nil {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
		}
		return cfg, nil
	}
	raw, err := p.kind(rt).KubeConfig(name, false)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of kind cluster %s: %w", name, err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of kind cluster %s: %w", name, err)
	}
	return cfg, nil
}

// nodes lists the cluster's Kubernetes nodes (bounded: a stuck API server is reported, not waited for).
func nodesOf(ctx context.Context, cfg *rest.Config) ([]corev1.Node, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return l.Items, nil
}

// List reports the kind clusters this nuv made (marked under its NUV_HOME; none when no runtime
// is usable). Other kind clusters of the runtime are still found by name (Status).
func (p *Provider) List(ctx context.Context) ([]cluster.Info, error) {
	// Only marked clusters are listed: with no mark under NUV_HOME there is nothing to ask the
	// runtime about (`nuv cluster list` then costs no docker or podman call).
	marks, _ := filepath.Glob(p.markPath("*"))
	if len(marks) == 0 {
		return nil, nil
	}
	rt, err := p.runtime(ctx)
	if err != nil {
		return nil, nil
	}
	names, err := p.kind(rt).List()
	if err != nil {
		return nil, fmt.Errorf("list kind clusters: %w", err)
	}
	var out []cluster.Info
	for _, n := range names {
		if !p.marked(ctx, rt, n) {
			continue // another nuv's or kind's own: not this nuv's to list (or to delete --all)
		}
		info, err := p.status(ctx, rt, n)
		if err != nil {
			info = cluster.Info{Name: n, Provider: p.Name(), Status: cluster.Corrupt, NodesReady: -1, Err: err}
		}
		out = append(out, info)
	}
	return out, nil
}

// Status reports one kind cluster; cluster.ErrNotFound when the runtime has none of that name.
func (p *Provider) Status(ctx context.Context, c *spec.Cluster) (cluster.Info, error) {
	name := c.Metadata.Name
	rt, err := p.runtime(ctx)
	if err != nil {
		return cluster.Info{}, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	return p.status(ctx, rt, name)
}

func (p *Provider) status(ctx context.Context, rt containerrt.Runtime, name string) (cluster.Info, error) {
	cs, err := p.containers(ctx, rt, name)
	if err != nil {
		return cluster.Info{}, err
	}
	if len(cs) == 0 {
		return cluster.Info{}, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	info := cluster.Info{Name: name, Provider: p.Name(), Nodes: kubeNodes(cs), NodesReady: -1, Binaries: "node image (" + rt.Name + " " + rt.Version + ")"}
	if _, err := os.Stat(p.KubeconfigPath(name)); err == nil {
		info.Kubeconfig = p.KubeconfigPath(name)
	}
	running := 0
	for _, c := range cs {
		info.Components = append(info.Components, cluster.Component{Name: c.Name, Running: c.Running})
		if c.Running {
			running++
		}
	}
	switch running {
	case len(cs):
		info.Status = cluster.Running
	case 0:
		info.Status = cluster.Stopped
	default:
		info.Status = cluster.Degraded
	}
	if img, err := rt.Output(ctx, "inspect", "--format", "{{.Created}}|{{.Config.Image}}", cs[0].Name); err == nil {
		created, image, _ := strings.Cut(strings.TrimSpace(img), "|")
		if t, ok := containerrt.ParseCreated(created); ok {
			info.Created = t
		}
		info.Binaries = "node image " + image + " (" + rt.Name + " " + rt.Version + ")"
	}
	if info.Status != cluster.Running {
		return info, nil
	}
	cfg, err := p.restConfig(rt, name)
	if err != nil {
		return info, nil
	}
	info.APIURL = cfg.Host
	ns, err := nodesOf(ctx, cfg)
	if err != nil {
		return info, nil
	}
	info.NodesReady = 0
	for i := range ns {
		if kube.NodeReady(&ns[i]) {
			info.NodesReady++
		}
		info.Version = strings.TrimPrefix(ns[i].Status.NodeInfo.KubeletVersion, "v")
	}
	return info, nil
}

// LogFiles exports the cluster's logs with kind's log export (each node's journal, kubelet,
// containerd, pods) under Home/kind/<name>/logs and maps "<node>/<log>" to each node-level file.
func (p *Provider) LogFiles(ctx context.Context, name string) (map[string]string, error) {
	rt, err := p.runtime(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := p.containers(ctx, rt, name)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("logs %q: %w", name, cluster.ErrNotFound)
	}
	dir := filepath.Join(p.Home, "kind", name, "logs")
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// kind's export runs several collectors per node and fails if any does (a node image without
	// crictl, say); what the others exported is still worth showing.
	exportErr := p.kind(rt).CollectLogs(name, dir)
	out := map[string]string{}
	for _, c := range cs {
		entries, _ := os.ReadDir(filepath.Join(dir, c.Name))
		for _, e := range entries {
			if n, ok := strings.CutSuffix(e.Name(), ".log"); ok && !e.IsDir() {
				out[c.Name+"/"+n] = filepath.Join(dir, c.Name, e.Name())
			}
		}
	}
	if exportErr != nil {
		if len(out) == 0 {
			return nil, fmt.Errorf("export the logs of kind cluster %s: %w", name, exportErr)
		}
		p.log().Warnf("kind's log export of %s was partial: %s", name, containerrt.FirstLine(exportErr))
	}
	return out, nil
}

// Stop stops the cluster's node containers (their state is kept).
func (p *Provider) Stop(ctx context.Context, name string) error {
	return p.startStop(ctx, "stop", name)
}

// Start starts the cluster's node containers and waits until its nodes are Ready.
func (p *Provider) Start(ctx context.Context, name string) error {
	if err := p.startStop(ctx, "start", name); err != nil {
		return err
	}
	rt, err := p.runtime(ctx)
	if err != nil {
		return err
	}
	cs, err := p.containers(ctx, rt, name)
	if err != nil {
		return err
	}
	// the runtime may publish the API server on another host port after a restart
	if _, err := p.writeKubeconfig(rt, name); err != nil {
		return err
	}
	return p.waitReady(ctx, rt, name, kubeNodes(cs), 5*time.Minute)
}

func (p *Provider) startStop(ctx context.Context, verb, name string) error {
	rt, err := p.runtime(ctx)
	if err != nil {
		return err
	}
	cs, err := p.containers(ctx, rt, name)
	if err != nil {
		return err
	}
	if len(cs) == 0 {
		return fmt.Errorf("%s %q: %w", verb, name, cluster.ErrNotFound)
	}
	if owned, nodes := p.owned(ctx, rt, name); !owned {
		return fmt.Errorf("%s %s: %w", verb, name, p.notOwned(name, nodes))
	}
	args := []string{verb}
	for _, c := range cs {
		args = append(args, c.Name)
	}
	if _, err := rt.Output(ctx, args...); err != nil {
		return fmt.Errorf("%s kind cluster %s: %w", verb, name, err)
	}
	return nil
}

// waitReady waits until want nodes are Ready and the default ServiceAccount exists.
func (p *Provider) waitReady(ctx context.Context, rt containerrt.Runtime, name string, want int, limit time.Duration) error {
	_, err := p.waitReadyTimed(ctx, rt, name, want, limit)
	return err
}

// readyPoll is how often waitReady asks the API server (two cheap GETs).
const readyPoll = 200 * time.Millisecond

// waitReadyTimed is waitReady, also returning when the nodes were first seen Ready.
func (p *Provider) waitReadyTimed(ctx context.Context, rt containerrt.Runtime, name string, want int, limit time.Duration) (nodesReady time.Time, err error) {
	deadline := time.Now().Add(limit)
	var last string
	for {
		if err := ctx.Err(); err != nil {
			return nodesReady, err
		}
		cfg, err := p.restConfig(rt, name)
		if err == nil {
			var ns []corev1.Node
			if ns, err = nodesOf(ctx, cfg); err == nil {
				n := 0
				for i := range ns {
					if kube.NodeReady(&ns[i]) {
						n++
					}
				}
				last = fmt.Sprintf("%d of %d node(s) Ready", n, want)
				if n >= want {
					if nodesReady.IsZero() {
						nodesReady = time.Now()
					}
					cs, cerr := kubernetes.NewForConfig(cfg)
					if cerr == nil {
						if _, err = cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err == nil {
							return nodesReady, nil
						}
						last += ", no default ServiceAccount yet"
					}
				}
			}
		}
		if err != nil {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return nodesReady, fmt.Errorf("kind cluster %s: not ready after %s: %s", name, limit, last)
		}
		select {
		case <-ctx.Done():
			return nodesReady, ctx.Err()
		case <-time.After(readyPoll):
		}
	}
}

// writeKubeconfig writes the cluster's kubeconfig (from kind) to clusters/<name>.kubeconfig, 0600.
func (p *Provider) writeKubeconfig(rt containerrt.Runtime, name string) (string, error) {
	raw, err := p.kind(rt).KubeConfig(name, false)
	if err != nil {
		return "", fmt.Errorf("kubeconfig of kind cluster %s: %w", name, err)
	}
	path := p.KubeconfigPath(name)
	return path, kit.WriteKubeconfig(path, []byte(raw))
}

// kindLogger carries the kind library's messages to nuv's logger (and, when timing a create, to
// its phase clock: kind's status lines and kubeadm's output, whatever the verbosity).
type kindLogger struct {
	l     cli.Logger
	clock *phaseClock
}

func (k kindLogger) Warn(m string) {
	if m == podmanNotice {
		return // said once by nuv where podman really makes a cluster (create), not on every read
	}
	k.l.Warnf("kind: %s", m)
}

// podmanNotice is what the kind library warns each time it sets up its podman provider, which nuv
// does for every list, status and kubeconfig read when podman is the runtime found.
const podmanNotice = "enabling experimental podman provider"

func (k kindLogger) Warnf(f string, a ...any)  { k.l.Warnf("kind: "+f, a...) }
func (k kindLogger) Error(m string)            { k.l.Warnf("kind: %s", m) }
func (k kindLogger) Errorf(f string, a ...any) { k.l.Warnf("kind: "+f, a...) }
func (k kindLogger) V(level kindlog.Level) kindlog.InfoLogger {
	return kindInfo{k.l.V(int(level)), k.clock}
}

type kindInfo struct {
	l     cli.InfoLogger
	clock *phaseClock
}

func (k kindInfo) Info(m string) {
	k.clock.note(m)
	k.l.Infof("  %s", strings.TrimSpace(m))
}
func (k kindInfo) Infof(f string, a ...any) { k.Info(fmt.Sprintf(f, a...)) }
func (k kindInfo) Enabled() bool            { return k.l.Enabled() }

func sortedKeys[M ~map[string]V, V any](m M) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

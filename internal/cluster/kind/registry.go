package kind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/image/load"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
	"github.com/nuv-dev/nuv/internal/registry"
	"github.com/nuv-dev/nuv/internal/registry/relayctl"
	"github.com/nuv-dev/nuv/internal/runner"
)

// A kind cluster with `registry: true` pulls from nuv's loopback registry the way kind's
// local-registry guide sets it up, with the registry itself left on the host's loopback:
//
//   - the registry process (`nuv registry serve`, one per nuv home) listens on 127.0.0.1:PORT and
//     on a unix socket;
//   - its relay container (package relayctl) is on the cluster's network under a stable name and
//     relays to that socket;
//   - the nodes' containerd reads registry hosts from /etc/containerd/certs.d (config_path, set
//     in every kind cluster nuv makes), where nuv writes a hosts.toml mapping localhost:PORT (and
//     the relay's own name) to http://<relay>:5000, so a pod naming localhost:PORT/img pulls what
//     was pushed on the host to localhost:PORT/img;
//   - KEP-1755's ConfigMap says so: host localhost:PORT (push there from the host),
//     hostFromContainerRuntime localhost:PORT (name images so in pod specs), hostFromClusterNetwork
//     <relay>:5000 (pods reaching the registry themselves).
//
// The plan's registry/loopback resource shows each part: the registry process, the relay
// container, its connection to the cluster's network, the nodes' mirror and the advertisement.

// registryResource is the name of the registry resource of a kind cluster.
const registryResource = "loopback"

// certsDir is containerd's registry host directory in the nodes (config_path).
const certsDir = "/etc/containerd/certs.d"

// containerdCertsPatch points the nodes' containerd at certsDir for registry hosts. Every kind
// cluster nuv makes has it, so turning `registry: true` on later is an update, not a replacement;
// containerd reads hosts.toml at each pull, so a changed mirror needs no restart.
const containerdCertsPatch = "[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"" + certsDir + "\"\n"

// Registry fields and their desired values.
var registryWant = map[string]string{
	"registry":   "running",    // nuv's registry process answers, with its unix socket
	"relay":      "running",    // the relay container runs
	"network":    "connected",  // ... on the cluster's network
	"mirror":     "configured", // every node's hosts.toml maps localhost:PORT to the relay
	"advertised": "true",       // KEP-1755's ConfigMap says where the registry is
}

// registryDesired is the registry resource a spec with `registry: true` asks for.
func registryDesired(clusterKey string) cluster.Resource {
	f := map[string]string{}
	for k, v := range registryWant {
		f[k] = v
	}
	return cluster.Resource{Kind: kindRegistry, Name: registryResource, Fields: f, DependsOn: []string{clusterKey}}
}

// registryDir is the storage directory of nuv's registry for this provider's home (absolute: it
// is bind-mounted and names the relay).
func (p *Provider) registryDir() string {
	d := registry.Dir(p.Home)
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return d
}

// registryMark records that cluster name uses the registry (removed with the registry resource,
// or with the cluster's directory).
func (p *Provider) registryMark(name string) string {
	return filepath.Join(p.Home, "kind", name, "registry")
}

// hostsTOML is the containerd hosts file that sends pulls to the relay.
func hostsTOML(relay string) string {
	return fmt.Sprintf("# nuv: pulls go to nuv's registry through its relay on the cluster's network\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n",
		"http://"+relay+":"+strconv.Itoa(relayctl.Port))
}

// mirrorHosts are the registry names the nodes' containerd maps to the relay: the host's name of
// the registry and the relay's own.
func mirrorHosts(host, relay string) []string {
	return []string{host, relay + ":" + strconv.Itoa(relayctl.Port)}
}

// hosting is the KEP-1755 document for the registry at host reached through relay.
func hosting(host, relay string) load.Hosting {
	return load.Hosting{Host: host, FromContainerRuntime: host, FromClusterNetwork: relay + ":" + strconv.Itoa(relayctl.Port)}
}

// registryHost is the host name of nuv's registry: the running registry's, else the configured one.
func (p *Provider) registryHost(st registry.State) string {
	if st.Addr != "" {
		return st.Host()
	}
	return p.RegistryHost
}

// observeRegistry reports the registry resource of cluster name, or nil when the cluster has none
// (no mark and no advertisement of nuv's). nodes are the cluster's node containers; cfg is nil
// when its API server is not reachable.
func (p *Provider) observeRegistry(ctx context.Context, rt containerrt.Runtime, name string, nodes []nodeContainer, cfg *rest.Config, clusterKey string) (*cluster.Resource, error) {
	_, markErr := os.Stat(p.registryMark(name))
	var cm string
	var cmOurs bool
	if cfg != nil {
		var err error
		if cm, cmOurs, err = readHosting(ctx, cfg); err != nil {
			return nil, err
		}
	}
	if markErr != nil && !cmOurs {
		return nil, nil
	}
	dir := p.registryDir()
	relay := relayctl.Name(dir)
	f := map[string]string{}
	st, ok, err := registry.Status(ctx, dir)
	switch {
	case err != nil:
		f["registry"] = "unreadable"
	case ok && st.Socket == "":
		f["registry"] = "running without its socket"
	case ok:
		f["registry"] = "running"
	default:
		f["registry"] = "stopped"
	}
	host := p.registryHost(st)
	info, err := relayctl.Inspect(ctx, rt, relay)
	if err != nil {
		return nil, err
	}
	switch {
	case !info.Exists:
		f["relay"], f["network"] = "absent", "disconnected"
	case info.Dir != dir:
		f["relay"], f["network"] = "not nuv's", "disconnected"
	default:
		f["relay"] = map[bool]string{true: "running", false: "stopped"}[info.Running]
		f["network"] = "disconnected"
		if net, err := clusterNetwork(ctx, rt, name); err == nil && info.On(net) {
			f["network"] = "connected"
		}
	}
	f["mirror"] = "unknown (nodes stopped)"
	if allRunning(nodes) {
		f["mirror"] = "configured"
		want := hostsTOML(relay)
		for _, n := range nodes {
			for _, h := range mirrorHosts(host, relay) {
				got, err := rt.Output(ctx, "exec", n.Name, "cat", certsDir+"/"+h+"/hosts.toml")
				if err != nil {
					f["mirror"] = "missing on " + n.Name
				} else if got != want && f["mirror"] == "configured" {
					f["mirror"] = "stale on " + n.Name
				}
			}
		}
	}
	switch {
	case cfg == nil:
		f["advertised"] = "unknown (cluster unreachable)"
	case !cmOurs:
		f["advertised"] = "false"
	case cm == hosting(host, relay).Doc():
		f["advertised"] = "true"
	default:
		f["advertised"] = "stale"
	}
	return &cluster.Resource{Kind: kindRegistry, Name: registryResource, ID: host + " via " + relay, Fields: f, DependsOn: []string{clusterKey}}, nil
}

func allRunning(nodes []nodeContainer) bool {
	for _, n := range nodes {
		if !n.Running {
			return false
		}
	}
	return len(nodes) > 0
}

// readHosting returns the KEP-1755 document of the cluster and whether nuv's label is on it.
func readHosting(ctx context.Context, cfg *rest.Config) (string, bool, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", false, err
	}
	cm, err := cs.CoreV1().ConfigMaps(load.ConfigMapNamespace).Get(ctx, load.ConfigMapName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s/%s: %w", load.ConfigMapNamespace, load.ConfigMapName, err)
	}
	return cm.Data[load.ConfigMapKey], cm.Labels["app.kubernetes.io/managed-by"] == "nuv", nil
}

// executeRegistry brings the registry parts of a kind cluster to the spec: it starts nuv's
// registry and its relay on the cluster's network, writes the nodes' mirror and advertises the
// registry; or, when the spec no longer asks for it (or the cluster is deleted), undoes that for
// this cluster and removes the relay when no other kind cluster of this nuv uses it. The registry
// itself keeps running either way: `nuv registry down` stops it.
func (p *Provider) executeRegistry(ctx context.Context, c *spec.Cluster, ch cluster.Change) (*cluster.Resource, error) {
	name := c.Metadata.Name
	rt, err := p.runtime(ctx)
	if err != nil {
		return nil, err
	}
	dir := p.registryDir()
	relay := relayctl.Name(dir)
	nodes, err := p.containers(ctx, rt, name)
	if err != nil {
		return nil, err
	}
	if ch.Action == cluster.Delete {
		return nil, p.unwireRegistry(ctx, rt, name, nodes)
	}
	if p.Registry == nil {
		return nil, fmt.Errorf("this nuv cannot start the loopback registry here")
	}
	cfg, err := p.restConfig(rt, name)
	if err != nil {
		return nil, err
	}
	if _, err := p.Registry(ctx, cfg); err != nil {
		return nil, p.explainPort(ctx, rt, err)
	}
	st, err := registry.ReadState(dir)
	if err != nil {
		return nil, fmt.Errorf("nuv's registry: %w", err)
	}
	if st.Socket == "" {
		// started by a nuv that did not open the socket the relay reaches it by: restart it (the
		// images are on disk; the restarted registry serves them at once)
		p.log().Infof("restarting nuv's registry (pid %d): it has no unix socket for kind clusters", st.PID)
		if _, err := registry.Down(ctx, dir); err != nil {
			return nil, err
		}
		if _, err := p.Registry(ctx, cfg); err != nil {
			return nil, p.explainPort(ctx, rt, err)
		}
		if st, err = registry.ReadState(dir); err != nil {
			return nil, fmt.Errorf("nuv's registry: %w", err)
		}
		if st.Socket == "" {
			return nil, fmt.Errorf("nuv's registry in %s serves no unix socket (%s is too long for one): kind nodes cannot reach it; use a shorter NUV_HOME", dir, registry.SocketPath(dir))
		}
	}
	network, err := clusterNetwork(ctx, rt, name)
	if err != nil {
		return nil, err
	}
	host := st.Host()
	// marked first: a delete of another cluster removing the relay at the same time counts this one
	if err := os.MkdirAll(filepath.Dir(p.registryMark(name)), 0o700); err != nil {
		return nil, err
	}
	if err := fsutil.WriteFileAtomic(p.registryMark(name), []byte(host+" "+relay+"\n"), 0o600); err != nil {
		return nil, err
	}
	if _, err := relayctl.Ensure(ctx, rt, dir, network, p.getenv, p.log()); err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if err := writeMirror(ctx, rt, n.Name, host, relay); err != nil {
			return nil, err
		}
	}
	if err := load.Advertise(ctx, cfg, hosting(host, relay)); err != nil {
		return nil, err
	}
	p.log().Infof("kind cluster %s pulls %s/... through %s on network %s", name, host, relay, network)
	return p.observed(ctx, c, ch.Key)
}

// writeMirror writes the hosts.toml files of the mirror into node, after checking that the node's
// containerd reads them (config_path: kind clusters made by an older nuv have a static mirror).
func writeMirror(ctx context.Context, rt containerrt.Runtime, node, host, relay string) error {
	if _, err := rt.Output(ctx, "exec", node, "grep", "-q", "config_path = \""+certsDir+"\"", "/etc/containerd/config.toml"); err != nil {
		return fmt.Errorf("node %s's containerd does not read %s (the cluster was made by an older nuv): replace the cluster (`nuv cluster delete`, then apply) to pull from nuv's registry", node, certsDir)
	}
	for _, h := range mirrorHosts(host, relay) {
		d := certsDir + "/" + h
		err := runner.Run(ctx, runner.Cmd{Path: rt.Path, Args: []string{"exec", "-i", node, "sh", "-c",
			`mkdir -p "$1" && cat > "$1/hosts.toml.tmp" && mv "$1/hosts.toml.tmp" "$1/hosts.toml"`, "sh", d},
			Stdin: strings.NewReader(hostsTOML(relay))})
		if err != nil {
			return fmt.Errorf("write %s/hosts.toml in node %s: %w", d, node, err)
		}
	}
	return nil
}

// unwireRegistry undoes the registry's wiring of cluster name: the advertisement and the nodes'
// mirror (where the cluster still answers: a cluster being deleted takes them along), the mark,
// and the relay when no other kind cluster of this nuv uses it. nuv's registry keeps running.
func (p *Provider) unwireRegistry(ctx context.Context, rt containerrt.Runtime, name string, nodes []nodeContainer) error {
	dir := p.registryDir()
	relay := relayctl.Name(dir)
	if allRunning(nodes) {
		st, _ := registry.ReadState(dir)
		host := p.registryHost(st)
		for _, n := range nodes {
			var paths []string
			for _, h := range mirrorHosts(host, relay) {
				paths = append(paths, certsDir+"/"+h)
			}
			if _, err := rt.Output(ctx, append([]string{"exec", n.Name, "rm", "-rf"}, paths...)...); err != nil {
				p.log().Warnf("remove the registry mirror from node %s: %s", n.Name, containerrt.FirstLine(err))
			}
		}
		if cfg, err := p.restConfig(rt, name); err == nil {
			if cs, err := kubernetes.NewForConfig(cfg); err == nil {
				err = cs.CoreV1().ConfigMaps(load.ConfigMapNamespace).Delete(ctx, load.ConfigMapName, metav1.DeleteOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("delete %s/%s: %w", load.ConfigMapNamespace, load.ConfigMapName, err)
				}
			}
		}
	}
	if err := os.Remove(p.registryMark(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	// under the relay's lock: a cluster being applied at the same time has marked itself before it
	// ensures the relay, so it is counted here, or its ensure comes after this removal
	unlock, err := relayctl.Lock(ctx, dir, p.log())
	if err != nil {
		return err
	}
	defer unlock()
	users, err := p.registryUsers(ctx, rt, name)
	if err != nil {
		return err
	}
	where := p.RegistryHost
	if st, ok, _ := registry.Status(ctx, dir); ok {
		where = st.Host()
	}
	if len(users) > 0 {
		p.log().Infof("nuv's registry keeps running at %s, and its relay %s for kind cluster(s) %s (`nuv registry down` stops both)", where, relay, strings.Join(users, ", "))
		return nil
	}
	removed, err := relayctl.Remove(ctx, rt, dir)
	if err != nil {
		return err
	}
	if removed {
		p.log().Infof("removed the registry relay %s: no other kind cluster of this nuv uses it", relay)
	}
	p.log().Infof("nuv's registry keeps running at %s for what else uses it (`nuv registry down` stops it)", where)
	return nil
}

// registryUsers lists the other kind clusters of this nuv that use the registry (marked, with
// node containers).
func (p *Provider) registryUsers(ctx context.Context, rt containerrt.Runtime, except string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(p.Home, "kind"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var users []string
	for _, e := range entries {
		if !e.IsDir() || e.Name() == except {
			continue
		}
		if _, err := os.Stat(p.registryMark(e.Name())); err != nil {
			continue
		}
		if cs, err := p.containers(ctx, rt, e.Name()); err == nil && len(cs) > 0 {
			users = append(users, e.Name())
		}
	}
	sort.Strings(users)
	return users, nil
}

// explainPort adds, to an error starting the registry on a port something else holds, what
// holds it when it is a container of the runtime (kind's own local registry, say).
func (p *Provider) explainPort(ctx context.Context, rt containerrt.Runtime, err error) error {
	port := strings.TrimPrefix(p.RegistryHost, "localhost:")
	if !strings.Contains(err.Error(), "is taken") || port == "" || port == "0" {
		return err
	}
	out, perr := rt.Output(ctx, "ps", "--filter", "publish="+port, "--format", "{{.Names}} ({{.Image}})")
	if perr != nil || strings.TrimSpace(out) == "" {
		return fmt.Errorf("nuv's registry cannot start: %w; it is not nuv's registry of %s", err, p.Home)
	}
	return fmt.Errorf("nuv's registry cannot start: port %s on 127.0.0.1 is published by container %s, which is not nuv's registry: stop it, or set NUV_REGISTRY_PORT to another port (%w)",
		port, strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(out), "\n", ", ")), " "), err)
}

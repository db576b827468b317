package localkube

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/kube"
)

// component is one process of a local cluster.
type component struct {
	Name  string
	Args  []string // arguments after the nuv-kube binary
	Env   []string
	Group int    // start order: 0 etcd, apiservers and balancer (apiservers retry etcd), 1 controllers (they need a ready API)
	Port  int    // the port its health is checked on
	kind  string // etcd, apiserver, controller, kwok, lb
}

func etcdNames(s *state) []string {
	if !s.HA {
		return []string{"etcd"}
	}
	return []string{"etcd-0", "etcd-1", "etcd-2"}
}

func apiserverNames(s *state) []string {
	if !s.HA {
		return []string{"kube-apiserver"}
	}
	return []string{"kube-apiserver-0", "kube-apiserver-1"}
}

// portRoles lists every port a cluster needs.
func portRoles(s *state) []string {
	var roles []string
	for _, e := range etcdNames(s) {
		roles = append(roles, e+"-client", e+"-peer")
	}
	roles = append(roles, apiserverNames(s)...)
	if s.HA {
		roles = append(roles, "lb")
	}
	return append(roles, "kube-controller-manager", "kube-scheduler", "kwok")
}

// allocatePorts picks a free loopback port for every role, scanning upwards from base and skipping
// ports already taken and those in avoid. base 0 starts at a random port below the kernel's ephemeral range: ports the
// kernel hands out (to outgoing connections too) could be taken again between this check and the
// component binding them.
func allocatePorts(roles []string, base int, avoid map[int]bool) (map[int]bool, map[string]int, error) {
	if base <= 0 {
		base = randomBase()
	}
	used := map[int]bool{}
	for p := range avoid {
		used[p] = true
	}
	ports := map[string]int{}
	next := base
	for _, r := range roles {
		var p int
		for tries := 0; ; tries++ {
			if tries > 1000 || next > 65535 {
				return nil, nil, fmt.Errorf("no free loopback port for %s", r)
			}
			cand := next
			next++
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(cand))
			if err != nil {
				continue // taken: skip it
			}
			p = l.Addr().(*net.TCPAddr).Port
			l.Close()
			if !used[p] {
				break
			}
		}
		used[p] = true
		ports[r] = p
	}
	return used, ports, nil
}

// randomBase returns a random port in [10000, low-100), low being the start of the kernel's
// ephemeral port range (32768 by default).
func randomBase() int {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 11000 {
				low = n
			}
		}
	}
	n, _ := rand.Int(rand.Reader, big.NewInt(int64(low-100-10000)))
	return 10000 + int(n.Int64())
}

func url(port int) string { return "https://127.0.0.1:" + strconv.Itoa(port) }

// apiURL is the URL clients use: the balancer of an HA cluster, else the only apiserver.
func apiURL(s *state) string {
	if s.HA {
		return url(s.Ports["lb"])
	}
	return url(s.Ports["kube-apiserver"])
}

// plan returns the components of a cluster in start order.
func plan(dir string, s *state) []component {
	pki := func(f string) string { return filepath.Join(dir, "pki", f) }
	cfg := func(f string) string { return filepath.Join(dir, "config", f) }
	var cs []component
	var etcdURLs []string
	for _, e := range etcdNames(s) {
		cs = append(cs, component{Name: e, Args: []string{"etcd", "--config", cfg(e + ".yaml")}, Group: 0, Port: s.Ports[e+"-client"], kind: "etcd"})
		etcdURLs = append(etcdURLs, url(s.Ports[e+"-client"]))
	}
	for _, a := range apiserverNames(s) {
		port := s.Ports[a]
		cs = append(cs, component{Name: a, Group: 0, Port: port, kind: "apiserver", Args: []string{"kube-apiserver",
			"--etcd-servers=" + strings.Join(etcdURLs, ","),
			"--etcd-cafile=" + pki("ca.crt"), "--etcd-certfile=" + pki("apiserver-etcd-client.crt"), "--etcd-keyfile=" + pki("apiserver-etcd-client.key"),
			"--etcd-prefix=/registry",
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
			"--tls-cert-file=" + pki("apiserver.crt"), "--tls-private-key-file=" + pki("apiserver.key"),
			"--client-ca-file=" + pki("ca.crt"),
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + pki("sa.pub"), "--service-account-signing-key-file=" + pki("sa.key"),
			"--service-cluster-ip-range=" + orDefault(s.ServiceCIDR, DefaultServiceCIDR),
			"--authorization-mode=RBAC",
			"--allow-privileged=true",
			"--enable-priority-and-fairness=false",
			// Nodes are made without the not-ready taint this plugin adds on create: kwok makes
			// them Ready within a second, and the controller-manager's removal of the taint is two
			// requests per node (2,000 while a 1,000-node cluster comes up). The controller still
			// taints a node that becomes NotReady or unreachable.
			"--disable-admission-plugins=TaintNodesByCondition",
			"--profiling=false",
			// A test cluster holds a few hundred objects: serving reads and watches from etcd
			// costs less than the watch cache's per-resource reflectors, which take about a
			// third of an idle API server's CPU (docs/testing.md).
			"--watch-cache=false",
			"--cert-dir=" + filepath.Join(dir, "data", a),
			"--event-ttl=30m",
		}})
		cs[len(cs)-1].Args = append(cs[len(cs)-1].Args, tokenWebhookArgs(dir, s)...)
	}
	if s.HA {
		args := []string{"lb", "--listen", "127.0.0.1:" + strconv.Itoa(s.Ports["lb"]), "--state-dir", dir}
		for _, a := range apiserverNames(s) {
			args = append(args, "--backend", "127.0.0.1:"+strconv.Itoa(s.Ports[a]))
		}
		cs = append(cs, component{Name: "lb", Args: args, Group: 0, Port: s.Ports["lb"], kind: "lb"})
	}
	cm := s.Ports["kube-controller-manager"]
	cs = append(cs, component{Name: "kube-controller-manager", Group: 1, Port: cm, kind: "controller", Args: []string{"kube-controller-manager",
		"--kubeconfig=" + cfg("controller-manager.kubeconfig"),
		"--authentication-kubeconfig=" + cfg("controller-manager.kubeconfig"),
		"--authorization-kubeconfig=" + cfg("controller-manager.kubeconfig"),
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(cm),
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + pki("sa.key"), "--root-ca-file=" + pki("ca.crt"),
		"--cluster-signing-cert-file=" + pki("ca.crt"), "--cluster-signing-key-file=" + pki("ca.key"),
		// Not the TTL controller: it tunes an annotation for kubelets' caches (kwok has none) to the
		// cluster's size, patching every node each time the size crosses 100, 500, 1000, ... (3,000
		// node writes while a 1,000-node cluster comes up); nuv's nodes carry its 0 from the start.
		"--controllers=*,bootstrapsigner,tokencleaner,-ttl",
		"--leader-elect=false",
		"--cluster-name=" + s.Name,
		"--cert-dir=" + filepath.Join(dir, "data", "kube-controller-manager"),
		"--kube-api-qps=100", "--kube-api-burst=200",
		"--profiling=false",
		"--node-monitor-grace-period=" + strconv.Itoa(nodeMonitorGraceSeconds) + "s",
	}})
	sch := s.Ports["kube-scheduler"]
	cs = append(cs, component{Name: "kube-scheduler", Group: 1, Port: sch, kind: "controller", Args: []string{"kube-scheduler",
		"--kubeconfig=" + cfg("scheduler.kubeconfig"),
		"--authentication-kubeconfig=" + cfg("scheduler.kubeconfig"),
		"--authorization-kubeconfig=" + cfg("scheduler.kubeconfig"),
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(sch),
		"--leader-elect=false",
		"--cert-dir=" + filepath.Join(dir, "data", "kube-scheduler"),
		"--kube-api-qps=100", "--kube-api-burst=200",
		"--profiling=false",
	}})
	kw := s.Ports["kwok"]
	cs = append(cs, component{Name: "kwok", Group: 1, Port: kw, kind: "kwok",
		// kwok also loads ~/.kwok/kwok.yaml: give it the state directory as HOME so a user's file
		// cannot change nuv's stages.
		Env: []string{"HOME=" + filepath.Join(dir, "data", "kwok")},
		Args: []string{"kwok",
			"--kubeconfig=" + cfg("kwok.kubeconfig"),
			"--config=" + cfg("kwok.yaml"),
			"--config=" + cfg("kwok-options.yaml"),
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + nodeAnnotation + "=fake",
			"--cidr=" + orDefault(s.PodCIDR, DefaultPodCIDR),
			"--node-ip=127.0.0.1",
			"--node-lease-duration-seconds=" + strconv.Itoa(nodeLeaseSeconds),
			// kwok logs every lease renewal at INFO: 100 lines a second for 1,000 nodes.
			"--v=WARN",
			"--server-address=127.0.0.1:" + strconv.Itoa(kw),
		}})
	return cs
}

// The node leases kwok keeps and how long the node lifecycle controller waits for a renewal before
// it marks a node NotReady. A kubelet's lease lasts 40 s, renewed every 10 s, with a grace period of
// 50 s; kwok renews every quarter lease. At 10 s a 1,000-node cluster makes 100 lease writes a
// second at idle, about half a core of apiserver, etcd and controller-manager on a small machine;
// at 120 s (renewed every 30 s) a third of that. The grace period covers five renewals, and the
// time kwok takes to lease a thousand new nodes on two busy cores (a node that gets its first lease
// after the grace period ran out flaps NotReady and back). A local cluster's nodes are fakes: a
// dead kwok shows as NotReady nodes after 150 s instead of 50 s.
const (
	nodeLeaseSeconds        = 120
	nodeMonitorGraceSeconds = 150
)

// nodeAnnotation marks the nodes kwok manages.
const nodeAnnotation = kube.AnnotationKwokNode

// writeConfigs writes the etcd configurations, the component kubeconfigs and kwok's stages.
func writeConfigs(dir string, s *state) error {
	pki := filepath.Join(dir, "pki")
	var peers []string
	for _, e := range etcdNames(s) {
		peers = append(peers, fmt.Sprintf("%s=%s", e, url(s.Ports[e+"-peer"])))
	}
	for _, e := range etcdNames(s) {
		sec := fmt.Sprintf(`
  cert-file: %[1]s/etcd.crt
  key-file: %[1]s/etcd.key
  trusted-ca-file: %[1]s/ca.crt
  client-cert-auth: true`, pki)
		y := fmt.Sprintf(`name: %s
data-dir: %s
listen-client-urls: %s
advertise-client-urls: %s
listen-peer-urls: %s
initial-advertise-peer-urls: %s
initial-cluster: %s
initial-cluster-state: new
initial-cluster-token: nuv-%s
unsafe-no-fsync: %t
logger: zap
log-level: warn
log-outputs: [stderr]
snapshot-count: 10000
client-transport-security:%s
peer-transport-security:%s
`, e, filepath.Join(dir, "data", e), url(s.Ports[e+"-client"]), url(s.Ports[e+"-client"]),
			url(s.Ports[e+"-peer"]), url(s.Ports[e+"-peer"]), strings.Join(peers, ","), s.Name, !s.durable(), sec, sec)
		if err := fsutil.WriteFileAtomic(filepath.Join(dir, "config", e+".yaml"), []byte(y), 0o600); err != nil {
			return err
		}
	}
	server := apiURL(s)
	for file, user := range map[string]string{"controller-manager": "controller-manager", "scheduler": "scheduler", "kwok": "kwok", "admin": "admin"} {
		b, err := kubeconfigFor(pki, "nuv-"+s.Name, server, user)
		if err != nil {
			return err
		}
		if err := fsutil.WriteFileAtomic(filepath.Join(dir, "config", file+".kubeconfig"), b, 0o600); err != nil {
			return err
		}
	}
	if err := writeTokenWebhookConfig(dir, s); err != nil {
		return err
	}
	stages, err := kwokStages()
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(dir, "config", "kwok.yaml"), stages, 0o644); err != nil {
		return err
	}
	opts, err := kwokOptions()
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(filepath.Join(dir, "config", "kwok-options.yaml"), opts, 0o644)
}

// healthClient is an HTTPS client trusting the cluster CA and presenting cert (a PKI base name);
// cert "" skips verification (controllers serve self-signed certificates).
func healthClient(dir, cert string) (*http.Client, error) {
	tc := &tls.Config{}
	if cert == "" {
		tc.InsecureSkipVerify = true // controller /healthz on loopback, self-signed
	} else {
		ca, err := os.ReadFile(filepath.Join(dir, "pki", "ca.crt"))
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		kp, err := tls.LoadX509KeyPair(filepath.Join(dir, "pki", cert+".crt"), filepath.Join(dir, "pki", cert+".key"))
		if err != nil {
			return nil, err
		}
		tc.RootCAs = pool
		tc.Certificates = []tls.Certificate{kp}
	}
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tc, DisableKeepAlives: true}}, nil
}

// healthy checks one component once.
func healthy(ctx context.Context, dir string, c component) error {
	var u, cert string
	switch c.kind {
	case "lb":
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(c.Port), time.Second)
		if err != nil {
			return err
		}
		conn.Close()
		return nil
	case "etcd":
		u, cert = url(c.Port)+"/health", "etcd"
	case "apiserver":
		u, cert = url(c.Port)+"/readyz", "admin"
	case "controller":
		u = url(c.Port) + "/healthz"
	case "kwok":
		u = "http://127.0.0.1:" + strconv.Itoa(c.Port) + "/healthz"
	}
	hc, err := healthClient(dir, cert)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", u, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

package bootstrap

import (
	"bytes"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Where things live on the machines.
const (
	// ConfigDir holds the configuration files nuv writes for kubeadm (0600: they carry secrets).
	ConfigDir = "/etc/kubernetes/nuv"
	// AdminConf is the admin kubeconfig kubeadm init writes; its presence means init is done.
	AdminConf = "/etc/kubernetes/admin.conf"
	// KubeletConf is the kubelet's kubeconfig kubeadm writes on a node that has joined.
	KubeletConf = "/etc/kubernetes/kubelet.conf"
	// PKIDir is kubeadm's certificate directory.
	PKIDir = "/etc/kubernetes/pki"
	// CRISocket is containerd's socket in nuv's node image.
	CRISocket = "unix:///run/containerd/containerd.sock"
	// APIServerPort is the port each API server listens on.
	APIServerPort = 6443
	// EtcdClientPort and EtcdPeerPort are etcd's ports.
	EtcdClientPort, EtcdPeerPort = 2379, 2380
)

const (
	kubeadmAPI     = "kubeadm.k8s.io/v1beta4"
	kubeletAPI     = "kubelet.config.k8s.io/v1beta1"
	kubeProxyAPI   = "kubeproxy.config.k8s.io/v1alpha1"
	defaultProxy   = "nftables"
	tokenTTL       = "2h0m0s"
	tokenGroup     = "system:bootstrappers:kubeadm:default-node-token"
	etcdClientCert = PKIDir + "/apiserver-etcd-client.crt"
	etcdClientKey  = PKIDir + "/apiserver-etcd-client.key"
	etcdCACert     = PKIDir + "/etcd/ca.crt"
	etcdCAKey      = PKIDir + "/etcd/ca.key"
)

// The subset of kubeadm's v1beta4, the kubelet's v1beta1 and kube-proxy's v1alpha1 configuration
// nuv writes (field names as the APIs spell them).
type (
	typeMeta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	arg struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	clusterConfiguration struct {
		typeMeta
		ClusterName          string     `json:"clusterName"`
		KubernetesVersion    string     `json:"kubernetesVersion"`
		ControlPlaneEndpoint string     `json:"controlPlaneEndpoint,omitempty"`
		APIServer            *apiServer `json:"apiServer,omitempty"`
		Etcd                 etcdConfig `json:"etcd"`
		Networking           *struct {
			PodSubnet     string `json:"podSubnet"`
			ServiceSubnet string `json:"serviceSubnet"`
		} `json:"networking,omitempty"`
	}
	apiServer struct {
		CertSANs []string `json:"certSANs,omitempty"`
	}
	etcdConfig struct {
		Local    *localEtcd    `json:"local,omitempty"`
		External *externalEtcd `json:"external,omitempty"`
	}
	localEtcd struct {
		ServerCertSANs []string `json:"serverCertSANs,omitempty"`
		PeerCertSANs   []string `json:"peerCertSANs,omitempty"`
		ExtraArgs      []arg    `json:"extraArgs,omitempty"`
	}
	externalEtcd struct {
		Endpoints []string `json:"endpoints"`
		CAFile    string   `json:"caFile"`
		CertFile  string   `json:"certFile"`
		KeyFile   string   `json:"keyFile"`
	}
	apiEndpoint struct {
		AdvertiseAddress string `json:"advertiseAddress"`
		BindPort         int    `json:"bindPort"`
	}
	nodeRegistration struct {
		Name             string `json:"name"`
		CRISocket        string `json:"criSocket"`
		KubeletExtraArgs []arg  `json:"kubeletExtraArgs,omitempty"`
	}
	bootstrapToken struct {
		Token  string   `json:"token"`
		TTL    string   `json:"ttl"`
		Usages []string `json:"usages"`
		Groups []string `json:"groups"`
	}
	initConfiguration struct {
		typeMeta
		BootstrapTokens  []bootstrapToken `json:"bootstrapTokens,omitempty"`
		CertificateKey   string           `json:"certificateKey,omitempty"`
		LocalAPIEndpoint apiEndpoint      `json:"localAPIEndpoint"`
		NodeRegistration nodeRegistration `json:"nodeRegistration"`
		SkipPhases       []string         `json:"skipPhases,omitempty"`
		Timeouts         *kubeadmTimeouts `json:"timeouts,omitempty"`
	}
	// kubeadmTimeouts are how long kubeadm waits for each thing (v1beta4's timeouts).
	kubeadmTimeouts struct {
		ControlPlaneComponentHealthCheck string `json:"controlPlaneComponentHealthCheck"`
		KubeletHealthCheck               string `json:"kubeletHealthCheck"`
		KubernetesAPICall                string `json:"kubernetesAPICall"`
		EtcdAPICall                      string `json:"etcdAPICall"`
		TLSBootstrap                     string `json:"tlsBootstrap"`
		Discovery                        string `json:"discovery"`
	}
	joinConfiguration struct {
		typeMeta
		ControlPlane *struct {
			LocalAPIEndpoint apiEndpoint `json:"localAPIEndpoint"`
			CertificateKey   string      `json:"certificateKey"`
		} `json:"controlPlane,omitempty"`
		Discovery struct {
			BootstrapToken struct {
				APIServerEndpoint string   `json:"apiServerEndpoint"`
				Token             string   `json:"token"`
				CACertHashes      []string `json:"caCertHashes"`
			} `json:"bootstrapToken"`
		} `json:"discovery"`
		NodeRegistration nodeRegistration `json:"nodeRegistration"`
		SkipPhases       []string         `json:"skipPhases,omitempty"`
		Timeouts         *kubeadmTimeouts `json:"timeouts,omitempty"`
	}
	kubeletConfiguration struct {
		typeMeta
		CgroupDriver                string            `json:"cgroupDriver"`
		FailCgroupV1                *bool             `json:"failCgroupV1,omitempty"`
		CgroupRoot                  string            `json:"cgroupRoot,omitempty"`
		FailSwapOn                  *bool             `json:"failSwapOn,omitempty"`
		ImageGCHighThresholdPercent int               `json:"imageGCHighThresholdPercent,omitempty"`
		EvictionHard                map[string]string `json:"evictionHard,omitempty"`
		// the standalone kubelet of an etcd machine
		Address                  string         `json:"address,omitempty"`
		StaticPodPath            string         `json:"staticPodPath,omitempty"`
		ContainerRuntimeEndpoint string         `json:"containerRuntimeEndpoint,omitempty"`
		Authentication           map[string]any `json:"authentication,omitempty"`
		Authorization            map[string]any `json:"authorization,omitempty"`
	}
	kubeProxyConfiguration struct {
		typeMeta
		Mode      string `json:"mode"`
		Conntrack *struct {
			MaxPerCore   *int32 `json:"maxPerCore,omitempty"`
			TCPBeLiberal bool   `json:"tcpBeLiberal,omitempty"`
		} `json:"conntrack,omitempty"`
	}
)

// skipPreflight: kubeadm's preflight checks assume a full machine (kernel configuration, swap
// off, images to pull); nuv's machines carry the images and the checks that matter are the
// steps' own.
var skipPreflight = []string{"preflight"}

func ptr[T any](v T) *T { return &v }

// marshalDocs renders documents as one multi-document YAML file.
func marshalDocs(docs ...any) ([]byte, error) {
	var b bytes.Buffer
	for i, d := range docs {
		y, err := yaml.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("render kubeadm configuration: %w", err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	return b.Bytes(), nil
}

func (c *Cluster) kubeletArgs(m Machine) []arg {
	args := []arg{{Name: "node-ip", Value: m.Address()}}
	if len(c.NodeLabels) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(c.NodeLabels)) {
			kv = append(kv, k+"="+c.NodeLabels[k])
		}
		args = append(args, arg{Name: "node-labels", Value: strings.Join(kv, ",")})
	}
	return args
}

func (c *Cluster) endpointHost() string {
	h, _, _ := net.SplitHostPort(c.Endpoint)
	return h
}

// clusterConfig is the ClusterConfiguration of the cluster.
func (c *Cluster) clusterConfig() (*clusterConfiguration, error) {
	v, err := parseVersion(c.KubernetesVersion)
	if err != nil {
		return nil, err
	}
	cc := &clusterConfiguration{typeMeta: typeMeta{kubeadmAPI, "ClusterConfiguration"},
		ClusterName: c.Name, KubernetesVersion: v.String(), ControlPlaneEndpoint: c.Endpoint}
	sans := []string{c.endpointHost()}
	for _, s := range c.CertSANs {
		if !contains(sans, s) {
			sans = append(sans, s)
		}
	}
	cc.APIServer = &apiServer{CertSANs: sans}
	cc.Networking = &struct {
		PodSubnet     string `json:"podSubnet"`
		ServiceSubnet string `json:"serviceSubnet"`
	}{c.PodCIDR, c.ServiceCIDR}
	if len(c.Etcd) > 0 {
		ext := &externalEtcd{CAFile: etcdCACert, CertFile: etcdClientCert, KeyFile: etcdClientKey}
		for _, m := range c.Etcd {
			ext.Endpoints = append(ext.Endpoints, "https://"+hostPort(m.Address(), EtcdClientPort))
		}
		cc.Etcd.External = ext
	} else {
		cc.Etcd.Local = &localEtcd{}
	}
	return cc, nil
}

func (c *Cluster) kubeletConfig() kubeletConfiguration {
	k := kubeletConfiguration{typeMeta: typeMeta{kubeletAPI, "KubeletConfiguration"}, CgroupDriver: "systemd"}
	if c.Host.CgroupV1 {
		k.FailCgroupV1 = ptr(false)
	}
	if c.Host.Containerized {
		k.CgroupRoot = "/kubelet"
		k.FailSwapOn = ptr(false)
		k.ImageGCHighThresholdPercent = 100
		k.EvictionHard = map[string]string{"nodefs.available": "0%", "nodefs.inodesFree": "0%", "imagefs.available": "0%"}
	}
	return k
}

func (c *Cluster) kubeProxyConfig() kubeProxyConfiguration {
	mode := c.KubeProxyMode
	if mode == "" {
		mode = defaultProxy
	}
	p := kubeProxyConfiguration{typeMeta: typeMeta{kubeProxyAPI, "KubeProxyConfiguration"}, Mode: mode}
	if c.Host.Containerized || mode == "nftables" {
		p.Conntrack = &struct {
			MaxPerCore   *int32 `json:"maxPerCore,omitempty"`
			TCPBeLiberal bool   `json:"tcpBeLiberal,omitempty"`
		}{}
		if c.Host.Containerized {
			// the conntrack table's size is the host's, shared by every container
			p.Conntrack.MaxPerCore = ptr(int32(0))
		}
		// kernels before 6.1 drop out-of-window TCP packets that nftables' NAT rewrites
		p.Conntrack.TCPBeLiberal = mode == "nftables"
	}
	return p
}

// timeouts are kubeadm's waits on nuv's machines, twice its defaults (4m for the control plane's
// and the kubelet's health, 1m an API call, 2m an etcd call, 5m the TLS bootstrap and the
// discovery): a machine's first minutes are its busiest (images unpacked, every static pod
// starting at once), and on a loaded host (a CI runner, the emulator's machines sharing two
// cores) the defaults are met by a control plane that would have come up, and the step fails
// with a cluster half made. nuv's own wait for a kubeadm left running (kubeadmWait) is longer.
func timeouts() *kubeadmTimeouts {
	return &kubeadmTimeouts{ControlPlaneComponentHealthCheck: "8m0s", KubeletHealthCheck: "8m0s", KubernetesAPICall: "2m0s",
		EtcdAPICall: "4m0s", TLSBootstrap: "10m0s", Discovery: "10m0s"}
}

// InitConfig is the kubeadm configuration of `kubeadm init` on the first control plane m.
func (c *Cluster) InitConfig(m Machine, s Secrets) ([]byte, error) {
	cc, err := c.clusterConfig()
	if err != nil {
		return nil, err
	}
	ic := initConfiguration{typeMeta: typeMeta{kubeadmAPI, "InitConfiguration"},
		BootstrapTokens: []bootstrapToken{{Token: s.Token, TTL: tokenTTL,
			Usages: []string{"signing", "authentication"}, Groups: []string{tokenGroup}}},
		CertificateKey:   s.CertificateKey,
		LocalAPIEndpoint: apiEndpoint{AdvertiseAddress: m.Address(), BindPort: APIServerPort},
		NodeRegistration: nodeRegistration{Name: m.Name(), CRISocket: CRISocket, KubeletExtraArgs: c.kubeletArgs(m)},
		SkipPhases:       skipPreflight,
		Timeouts:         timeouts(),
	}
	return marshalDocs(ic, cc, c.kubeletConfig(), c.kubeProxyConfig())
}

// UploadCertsConfig is the configuration of `kubeadm init phase upload-certs` on control plane m:
// the certificate key and the cluster (which certificates to upload: the external etcd client's
// too).
func (c *Cluster) UploadCertsConfig(m Machine, s Secrets) ([]byte, error) {
	cc, err := c.clusterConfig()
	if err != nil {
		return nil, err
	}
	ic := initConfiguration{typeMeta: typeMeta{kubeadmAPI, "InitConfiguration"}, CertificateKey: s.CertificateKey,
		LocalAPIEndpoint: apiEndpoint{AdvertiseAddress: m.Address(), BindPort: APIServerPort},
		NodeRegistration: nodeRegistration{Name: m.Name(), CRISocket: CRISocket}}
	return marshalDocs(ic, cc)
}

// JoinConfig is the kubeadm configuration of `kubeadm join` on m, a control plane or a worker.
func (c *Cluster) JoinConfig(m Machine, controlPlane bool, s Secrets) ([]byte, error) {
	if _, err := parseVersion(c.KubernetesVersion); err != nil {
		return nil, err
	}
	jc := joinConfiguration{typeMeta: typeMeta{kubeadmAPI, "JoinConfiguration"},
		NodeRegistration: nodeRegistration{Name: m.Name(), CRISocket: CRISocket, KubeletExtraArgs: c.kubeletArgs(m)},
		SkipPhases:       skipPreflight, Timeouts: timeouts()}
	jc.Discovery.BootstrapToken.APIServerEndpoint = c.Endpoint
	jc.Discovery.BootstrapToken.Token = s.Token
	jc.Discovery.BootstrapToken.CACertHashes = []string{s.CACertHash}
	if controlPlane {
		jc.ControlPlane = &struct {
			LocalAPIEndpoint apiEndpoint `json:"localAPIEndpoint"`
			CertificateKey   string      `json:"certificateKey"`
		}{apiEndpoint{m.Address(), APIServerPort}, s.CertificateKey}
	}
	// the kubelet's configuration comes from the cluster (kubeadm init uploaded it)
	return marshalDocs(jc)
}

// EtcdMemberConfig is the kubeadm configuration `kubeadm init phase etcd local` writes the static
// pod manifest of the external etcd member on m from: kubeadm's own flags for the member, and the
// cluster's membership (initialCluster: name=peerURL,...) and whether it joins an existing one.
func (c *Cluster) EtcdMemberConfig(m Machine, initialCluster []string, existing bool) ([]byte, error) {
	v, err := parseVersion(c.KubernetesVersion)
	if err != nil {
		return nil, err
	}
	state := "new"
	if existing {
		state = "existing"
	}
	ic := initConfiguration{typeMeta: typeMeta{kubeadmAPI, "InitConfiguration"},
		LocalAPIEndpoint: apiEndpoint{AdvertiseAddress: m.Address(), BindPort: APIServerPort},
		NodeRegistration: nodeRegistration{Name: m.Name(), CRISocket: CRISocket}}
	cc := clusterConfiguration{typeMeta: typeMeta{kubeadmAPI, "ClusterConfiguration"},
		ClusterName: c.Name, KubernetesVersion: v.String(),
		Etcd: etcdConfig{Local: &localEtcd{
			ServerCertSANs: []string{m.Address()}, PeerCertSANs: []string{m.Address()},
			ExtraArgs: []arg{{"initial-cluster", strings.Join(initialCluster, ",")}, {"initial-cluster-state", state}},
		}}}
	return marshalDocs(ic, cc)
}

// EtcdKubeletConfig is the configuration of an etcd machine's kubelet: standalone (no API
// server), serving only on loopback, running the static pods of /etc/kubernetes/manifests.
func (c *Cluster) EtcdKubeletConfig() ([]byte, error) {
	k := c.kubeletConfig()
	k.Address = "127.0.0.1"
	k.StaticPodPath = "/etc/kubernetes/manifests"
	k.ContainerRuntimeEndpoint = CRISocket
	k.Authentication = map[string]any{"anonymous": map[string]any{"enabled": false}, "webhook": map[string]any{"enabled": false}}
	k.Authorization = map[string]any{"mode": "AlwaysAllow"}
	return marshalDocs(k)
}

// etcdKubeletDropIn runs the kubelet of an etcd machine without the kubeconfigs kubeadm's drop-in
// names (there is no API server for it to join).
const etcdKubeletDropIn = `# nuv: the kubelet of an external etcd machine runs standalone, for the etcd static pod only
[Service]
ExecStart=
ExecStart=/usr/bin/kubelet --config=/var/lib/kubelet/config.yaml
`

func hostPort(host string, port int) string { return net.JoinHostPort(host, fmt.Sprint(port)) }

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

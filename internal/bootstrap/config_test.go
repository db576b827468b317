package bootstrap

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/golden"
)

var update = flag.Bool("update", false, "write the golden files")

// fixed secrets for golden files (not real ones: the test writes them into the configurations)
var goldenSecrets = Secrets{Token: "abcdef.0123456789abcdef", CertificateKey: strings.Repeat("0f", 32), CACertHash: "sha256:" + strings.Repeat("ab", 32)}

func goldenCluster(external bool, v1 bool) Cluster {
	c := Cluster{Name: "prod", KubernetesVersion: "1.36.3", Endpoint: "10.0.1.5:6443",
		CertSANs: []string{"api.prod.example.com", "10.0.1.5"}, PodCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/16",
		Host: Host{CgroupV1: v1, Containerized: v1}}
	for i := 0; i < 3; i++ {
		c.ControlPlanes = append(c.ControlPlanes, newRec("cp-"+string(rune('0'+i)), "10.0.1."+string(rune('1'+i))))
	}
	c.Workers = []Machine{newRec("worker-0", "10.0.2.10")}
	if external {
		for i := 0; i < 3; i++ {
			c.Etcd = append(c.Etcd, newRec("etcd-"+string(rune('0'+i)), "10.0.3."+string(rune('1'+i))))
		}
	}
	return c
}

// TestConfigs pins the kubeadm, kubelet and etcd configurations nuv generates: stacked and
// external etcd, on cgroup v1 container machines and on cgroup v2 machines, and nodes that
// register with nuv's labels (the kubelet's --node-labels, sorted).
func TestConfigs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		external bool
		v1       bool
		labels   map[string]string
	}{{"stacked-v1", false, true, nil}, {"stacked-v2", false, false, nil}, {"external-v1", true, true, nil}, {"external-v2", true, false, nil},
		{"stacked-labels", false, true, map[string]string{"nuv.dev/provider": "aws", "nuv.dev/bootstrap": "kubeadm", "nuv.dev/cluster": "prod", "nuv.dev/emulated": "aws"}}} {
		t.Run(tc.name, func(t *testing.T) {
			c := goldenCluster(tc.external, tc.v1)
			c.NodeLabels = tc.labels
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			check := func(file string, b []byte, err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
				golden.Check(t, filepath.Join("testdata", tc.name, file), string(b), *update)
			}
			b, err := c.InitConfig(c.ControlPlanes[0], goldenSecrets)
			check("init.yaml", b, err)
			b, err = c.JoinConfig(c.ControlPlanes[1], true, goldenSecrets)
			check("join-control-plane.yaml", b, err)
			b, err = c.JoinConfig(c.Workers[0], false, goldenSecrets)
			check("join-worker.yaml", b, err)
			b, err = c.HAProxyConfig()
			check("haproxy.cfg", b, err)
			if tc.external {
				b, err = c.EtcdMemberConfig(c.Etcd[0], []string{"etcd-0=https://10.0.3.1:2380"}, false)
				check("etcd-first-member.yaml", b, err)
				b, err = c.EtcdMemberConfig(c.Etcd[1], []string{"etcd-1=https://10.0.3.2:2380", "etcd-0=https://10.0.3.1:2380"}, true)
				check("etcd-next-member.yaml", b, err)
				b, err = c.EtcdKubeletConfig()
				check("etcd-kubelet.yaml", b, err)
			}
		})
	}
}

// TestValidate: bad input names the field and the value.
func TestValidate(t *testing.T) {
	ok := goldenCluster(false, false)
	for _, tc := range []struct {
		name string
		edit func(*Cluster)
		want string
	}{
		{"no name", func(c *Cluster) { c.Name = "" }, "cluster name is empty"},
		{"old version", func(c *Cluster) { c.KubernetesVersion = "1.29.0" }, `kubernetes version "1.29.0": nuv bootstraps 1.31 and later`},
		{"bad version", func(c *Cluster) { c.KubernetesVersion = "latest" }, `kubernetes version "latest" is not MAJOR.MINOR.PATCH`},
		{"endpoint without port", func(c *Cluster) { c.Endpoint = "10.0.1.5" }, `control-plane endpoint "10.0.1.5" is not host:port`},
		{"endpoint bad port", func(c *Cluster) { c.Endpoint = "lb:99999" }, `port "99999" is not 1-65535`},
		{"pod CIDR", func(c *Cluster) { c.PodCIDR = "10.244.0.0" }, `pod CIDR "10.244.0.0" is not a CIDR`},
		{"no control plane", func(c *Cluster) { c.ControlPlanes = nil }, "no control-plane machine"},
		{"even etcd", func(c *Cluster) { c.Etcd = []Machine{newRec("e0", "10.0.3.1"), newRec("e1", "10.0.3.2")} }, "2 etcd machines: an etcd cluster has an odd number"},
		{"machine twice", func(c *Cluster) { c.Workers = append(c.Workers, c.ControlPlanes[1]) }, `machine "cp-1" is both control plane and worker`},
		{"no address", func(c *Cluster) { c.Workers = []Machine{newRec("w", "")} }, `worker machine "w": address "" is not an IP address`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			c.ControlPlanes = append([]Machine(nil), ok.ControlPlanes...)
			tc.edit(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error with %q", err, tc.want)
			}
		})
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("a good cluster: %v", err)
	}
}

func TestCNIManifest(t *testing.T) {
	raw := "# would you kindly template this file\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: x\n---\n" +
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n      - name: x\n        env:\n        - name: POD_SUBNET\n          value: \"{{ .PodSubnet }}\"\n"
	got, err := CNIManifest(raw, "10.244.0.0/16", "10.0.1.5:6443")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/cni.yaml", got, *update)
	if _, err := CNIManifest("kind: DaemonSet\nspec: {}\n", "10.244.0.0/16", "x:1"); err == nil {
		t.Error("a DaemonSet without containers: no error")
	}
}

func TestCACertHash(t *testing.T) {
	ca, err := NewCA("kubernetes", now())
	if err != nil {
		t.Fatal(err)
	}
	h, err := CACertHash(ca.CertPEM)
	if err != nil || !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+64 {
		t.Errorf("CACertHash = %q, %v", h, err)
	}
	if _, err := CACertHash([]byte("not pem")); err == nil {
		t.Error("no error for a file without a certificate")
	}
}

func TestNewToken(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		tok, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		id, sec, ok := strings.Cut(tok, ".")
		if !ok || len(id) != 6 || len(sec) != 16 || strings.Trim(tok, "abcdefghijklmnopqrstuvwxyz0123456789.") != "" {
			t.Fatalf("token %q is not [a-z0-9]{6}.[a-z0-9]{16}", tok)
		}
		if seen[tok] {
			t.Fatalf("token repeated")
		}
		seen[tok] = true
	}
	if s := goldenSecrets.String() + goldenSecrets.GoString(); strings.Contains(s, goldenSecrets.Token) || strings.Contains(s, goldenSecrets.CertificateKey) {
		t.Errorf("Secrets print themselves: %s", s)
	}
}

// TestReplaceFlag: the API server's --etcd-servers line is rewritten in place, its indentation
// kept; a manifest without the flag is left as it is.
func TestReplaceFlag(t *testing.T) {
	const want = "--etcd-servers=https://10.0.2.9:2379,https://10.0.2.5:2379"
	for _, tc := range []struct {
		name, in, out string
		ok            bool
	}{
		{"rewritten", "spec:\n  containers:\n  - command:\n    - kube-apiserver\n    - --etcd-servers=https://10.0.2.4:2379,https://10.0.2.5:2379\n    - --etcd-cafile=/x\n",
			"spec:\n  containers:\n  - command:\n    - kube-apiserver\n    - " + want + "\n    - --etcd-cafile=/x\n", true},
		{"already right", "    - " + want + "\n", "    - " + want + "\n", true},
		{"no such flag", "    - kube-apiserver\n    - --etcd-cafile=/x\n", "    - kube-apiserver\n    - --etcd-cafile=/x\n", false},
	} {
		got, ok := replaceFlag(tc.in, want)
		if got != tc.out || ok != tc.ok {
			t.Errorf("%s: got %q %v, want %q %v", tc.name, got, ok, tc.out, tc.ok)
		}
	}
}

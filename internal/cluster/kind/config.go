package kind

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Node labels nuv puts on every node of a kind cluster it makes: the cluster, the provider and the
// node group (control-plane for control-plane nodes). They tell nuv's clusters from foreign ones
// and let Observe count each group's nodes.
const (
	LabelCluster   = kit.TagCluster
	LabelProvider  = "nuv.dev/provider"
	LabelNodeGroup = "nuv.dev/node-group"
)

// ControlPlaneGroup is the node-group label of control-plane nodes.
const ControlPlaneGroup = "control-plane"

// DefaultKubeProxyMode is nftables: on hosts whose iptables front-ends disagree (legacy and nft)
// kube-proxy's iptables mode breaks Service routing; nftables has one front-end.
const DefaultKubeProxyMode = "nftables"

// ConfigInput is what a kind cluster configuration is made from.
type ConfigInput struct {
	Spec *spec.Cluster
	// Image is the node image every node runs.
	Image string
	// Host is what the nodes must adapt to (cgroup v1, missing capabilities).
	Host Host
}

// Config turns a spec into kind's v1alpha4 cluster configuration: the control-plane nodes, one
// worker per node of each node group (with the group's labels and taints), the node image,
// networks, port mappings, the kubeadm, kubelet and containerd patches the host needs, and
// containerd's config_path for registry hosts (the mirror of nuv's registry, see registry.go).
func Config(in ConfigInput) (*v1alpha4.Cluster, error) {
	c := in.Spec
	s := &c.Spec
	cfg := &v1alpha4.Cluster{TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"}, Name: c.Metadata.Name}
	cps := s.ControlPlane.Count
	if cps == 0 {
		cps = 1
	}
	base := map[string]string{LabelCluster: c.Metadata.Name, LabelProvider: "kind"}
	maps.Copy(base, markLabels(c.Marks)) // the expiry and the owner, for gc by label
	for i := 0; i < cps; i++ {
		n := v1alpha4.Node{Role: v1alpha4.ControlPlaneRole, Image: in.Image, Labels: withGroup(base, ControlPlaneGroup, nil)}
		if i == 0 {
			for _, p := range Key.Get(c).Ports {
				n.ExtraPortMappings = append(n.ExtraPortMappings, portMapping(p))
			}
		}
		cfg.Nodes = append(cfg.Nodes, n)
	}
	for _, g := range s.NodeGroups {
		var patches []string
		if len(g.Taints) > 0 {
			p, err := taintPatch(g.Taints)
			if err != nil {
				return nil, fmt.Errorf("node group %s: %w", g.Name, err)
			}
			patches = append(patches, p)
		}
		for i := 0; i < g.Size(); i++ {
			cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole, Image: in.Image,
				Labels: withGroup(base, g.Name, g.Labels), KubeadmConfigPatches: slices.Clone(patches)})
		}
	}
	cfg.Networking.PodSubnet = s.Networking.PodCIDR
	cfg.Networking.ServiceSubnet = s.Networking.ServiceCIDR
	cfg.Networking.KubeProxyMode = v1alpha4.ProxyMode(kubeProxyMode(c))
	if cps == 1 {
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, singleLeaderPatchV1beta3)
		cfg.KubeadmConfigPatchesJSON6902 = append(cfg.KubeadmConfigPatchesJSON6902, singleLeaderPatchV1beta4)
	}
	if in.Host.CgroupV1 {
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches,
			"kind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1\nfailCgroupV1: false\n")
	}
	if in.Host.NoSysResource {
		cfg.ContainerdConfigPatches = append(cfg.ContainerdConfigPatches,
			"[plugins.\"io.containerd.grpc.v1.cri\"]\n  restrict_oom_score_adj = true\n")
	}
	// registry hosts from hosts.toml files (registry.go writes the mirror of nuv's registry there
	// when the spec asks for it; any cluster may ask later, without a replacement)
	cfg.ContainerdConfigPatches = append(cfg.ContainerdConfigPatches, containerdCertsPatch)
	return cfg, nil
}

// With one control plane there is one controller-manager: leader election has no one to elect
// among, and only delays a new cluster (a first attempt the API server refuses while it bootstraps
// its RBAC roles, a retry seconds later, before any controller runs: the node gets its pod range,
// and the pod network's DaemonSet its pod, only after that). The scheduler's election is left as
// it is: it is won long before a pod waits for it. kind's kubeadm configuration is v1beta4 from
// Kubernetes 1.36 on (extraArgs a list, extended by a JSON 6902 patch) and v1beta3 before (a map,
// merged); each patch applies only to its own API version.
var (
	singleLeaderPatchV1beta3 = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n" +
		"controllerManager:\n  extraArgs:\n    leader-elect: \"false\"\n"
	singleLeaderPatchV1beta4 = v1alpha4.PatchJSON6902{Group: "kubeadm.k8s.io", Version: "v1beta4", Kind: "ClusterConfiguration",
		Patch: "- op: add\n  path: /controllerManager/extraArgs/-\n  value: {name: leader-elect, value: \"false\"}\n"}
)

func kubeProxyMode(c *spec.Cluster) string {
	if m := Key.Get(c).KubeProxyMode; m != "" {
		return m
	}
	return DefaultKubeProxyMode
}

func withGroup(base map[string]string, group string, extra map[string]string) map[string]string {
	out := maps.Clone(base)
	maps.Copy(out, extra)
	out[LabelNodeGroup] = group
	return out
}

func portMapping(p PortMapping) v1alpha4.PortMapping {
	addr := p.ListenAddress
	if addr == "" {
		addr = "127.0.0.1"
	}
	host := p.HostPort
	if host == 0 {
		host = p.ContainerPort
	}
	proto := strings.ToUpper(p.Protocol)
	if proto == "" {
		proto = "TCP"
	}
	return v1alpha4.PortMapping{ContainerPort: int32(p.ContainerPort), HostPort: int32(host), ListenAddress: addr, Protocol: v1alpha4.PortMappingProtocol(proto)}
}

// taintPatch is the kubeadm JoinConfiguration patch that registers a worker with taints.
func taintPatch(taints []string) (string, error) {
	var b strings.Builder
	b.WriteString("kind: JoinConfiguration\nnodeRegistration:\n  taints:\n")
	for _, t := range taints {
		pt, err := spec.ParseTaint(t)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "  - key: %q\n", pt.Key)
		if pt.Value != "" {
			fmt.Fprintf(&b, "    value: %q\n", pt.Value)
		}
		fmt.Fprintf(&b, "    effect: %s\n", pt.Effect)
	}
	return b.String(), nil
}

// Render writes cfg as the YAML `kind create cluster --config` reads.
func Render(cfg *v1alpha4.Cluster) ([]byte, error) {
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("render kind config: %w", err)
	}
	return b, nil
}

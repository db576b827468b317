package kind

import (
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Section is the kind provider's spec section, `spec.kind:`.
type Section struct {
	// Image is the node image (default: nuv's node image for kubernetesVersion).
	Image string `yaml:"image,omitempty" json:"image,omitempty"`
	// KubeProxyMode is kube-proxy's mode: nftables (nuv's default), iptables, ipvs or none.
	KubeProxyMode string `yaml:"kubeProxyMode,omitempty" json:"kubeProxyMode,omitempty"`
	// Ports are extra port mappings from the host to the first control-plane node.
	Ports []PortMapping `yaml:"ports,omitempty" json:"ports,omitempty"`
}

// PortMapping publishes a node container's port on the host.
type PortMapping struct {
	ContainerPort int `yaml:"containerPort" json:"containerPort"`
	HostPort      int `yaml:"hostPort,omitempty" json:"hostPort,omitempty"`
	// ListenAddress is the host address (default 127.0.0.1: nuv publishes on loopback only).
	ListenAddress string `yaml:"listenAddress,omitempty" json:"listenAddress,omitempty"`
	// Protocol is TCP (default), UDP or SCTP.
	Protocol string `yaml:"protocol,omitempty" json:"protocol,omitempty"`
}

// Key names spec.kind: its decoder (the registry's), reader and writer.
var Key = spec.SectionKey[Section]("kind")

// Shorthand is the spec `nuv cluster create kind [NAME]` stands for: kind nodes are all real, so
// --nodes counts the control plane and the rest are workers.
func Shorthand(o cluster.CreateOptions) (*spec.Cluster, error) {
	if o.Flavor != "" || o.PortBase != 0 || o.Durability != "" {
		return nil, cluster.RefuseLocalOptions("kind", o)
	}
	c := cluster.BaseShorthand("kind", o)
	c.Spec.NodeGroups = nil
	if workers := o.Nodes - 1; workers > 0 {
		c.Spec.NodeGroups = []spec.NodeGroup{{Name: "workers", Count: &workers}}
	}
	return c, nil
}

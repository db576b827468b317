package local

import (
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Section is the local provider's spec section, `spec.local:`.
type Section struct {
	// Flavor makes nodes look like a distribution's (eks, aks, gke, kind, k3s, ...).
	Flavor string `yaml:"flavor,omitempty" json:"flavor,omitempty"`
	// PortBase, if set, takes loopback ports upwards from it.
	PortBase int `yaml:"portBase,omitempty" json:"portBase,omitempty"`
	// Durability is "fast" (etcd does not fsync: a host crash can lose recent writes; for throwaway
	// clusters) or "safe" (etcd fsyncs every write). Default: safe for a cluster that hosts nuv's
	// state store (NUV_STATE=kube:...@its kubeconfig), else fast.
	Durability string `yaml:"durability,omitempty" json:"durability,omitempty"`
}

// Key names spec.local: its decoder (the registry's), reader and writer.
var Key = spec.SectionKey[Section]("local")

// Shorthand is the spec `nuv cluster create local [NAME]` stands for: one node group of --nodes
// nodes of a version local clusters offer (default KubeVersion), with the flavor, port base and
// durability given.
func Shorthand(o cluster.CreateOptions) (*spec.Cluster, error) {
	if o.Version == "" {
		o.Version = KubeVersion
	}
	v := strings.TrimPrefix(o.Version, "v")
	ok := false
	for _, s := range SupportedVersions() {
		ok = ok || s == v
	}
	if !ok {
		return nil, cli.Usagef("nuv cluster create: unsupported --version %q (valid: %s)", o.Version, strings.Join(SupportedVersions(), ", "))
	}
	if _, err := cluster.LookupFlavor(o.Flavor); err != nil {
		return nil, cli.Usagef("nuv cluster create: %v", err)
	}
	if o.Durability != "" {
		if err := ValidDurability(o.Durability); err != nil {
			return nil, cli.Usagef("nuv cluster create: --durability %q: local clusters only, fast or safe", o.Durability)
		}
	}
	c := cluster.BaseShorthand("local", o)
	if o.Flavor != "" || o.PortBase != 0 || o.Durability != "" {
		Key.Set(c, &Section{Flavor: o.Flavor, PortBase: o.PortBase, Durability: o.Durability})
	}
	return c, nil
}

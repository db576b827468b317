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

// DecodeSection decodes and checks spec.local strictly (the registry's section decoder).
var DecodeSection = spec.Typed[Section]("local")

// sectionOf is c's spec.local (the zero section when it has none or it does not decode; Validate
// reports why).
func sectionOf(c *spec.Cluster) Section {
	s, _ := spec.DecodeSection[Section](c, "local")
	if s == nil {
		return Section{}
	}
	return *s
}

// SetSection sets c's spec.local (nil: none).
func SetSection(c *spec.Cluster, s *Section) {
	_ = c.SetSection("local", s) // a Section always marshals
}

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
		SetSection(c, &Section{Flavor: o.Flavor, PortBase: o.PortBase, Durability: o.Durability})
	}
	return c, nil
}

package local

import (
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Section is the local provider's spec section, `spec.local:` (defined with the record of a local
// cluster, which holds it).
type Section = localkube.Section

// Key names spec.local: its decoder (the registry's), reader and writer.
var Key = localkube.Key

// Shorthand is the spec `nuv cluster create local [NAME]` stands for: one node group of --nodes
// nodes of a version local clusters offer (default localkube.KubeVersion), with the flavor, port base and
// durability given.
func Shorthand(o cluster.CreateOptions) (*spec.Cluster, error) {
	if o.Version == "" {
		o.Version = localkube.KubeVersion
	}
	v := strings.TrimPrefix(o.Version, "v")
	ok := false
	for _, s := range localkube.SupportedVersions() {
		ok = ok || s == v
	}
	if !ok {
		return nil, cli.Usagef("nuv cluster create: unsupported --version %q (valid: %s)", o.Version, strings.Join(localkube.SupportedVersions(), ", "))
	}
	if _, err := cluster.LookupFlavor(o.Flavor); err != nil {
		return nil, cli.Usagef("nuv cluster create: %v", err)
	}
	if o.Durability != "" {
		if err := localkube.ValidDurability(o.Durability); err != nil {
			return nil, cli.Usagef("nuv cluster create: --durability %q: local clusters only, fast or safe", o.Durability)
		}
	}
	c := cluster.BaseShorthand("local", o)
	if o.Flavor != "" || o.PortBase != 0 || o.Durability != "" {
		Key.Set(c, &Section{Flavor: o.Flavor, PortBase: o.PortBase, Durability: o.Durability})
	}
	return c, nil
}

package localkube

import "github.com/nuv-dev/nuv/internal/cluster/spec"

// Section is the local provider's spec section, `spec.local:`, part of every local cluster's
// record (flavor and durability; the port base only counts for a creation).
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

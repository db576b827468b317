package spec

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/nuv-dev/nuv/internal/lazy"
)

var (
	dnsLabel   = lazy.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	versionRE  = lazy.MustCompile(`^v?(\d+)\.(\d+)(\.(\d+))?$`)
	labelKeyRE = lazy.MustCompile(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
)

// ValidName reports whether name can name a cluster: a DNS label of at most 40 characters.
func ValidName(name string) error {
	if len(name) > 40 || !dnsLabel.MatchString(name) {
		return fmt.Errorf("invalid name %q: use lower-case letters, digits and '-', at most 40 characters", name)
	}
	return nil
}

// NormalVersion returns v without a leading "v"; ok is false if v is not MAJOR.MINOR[.PATCH].
func NormalVersion(v string) (string, bool) {
	if !versionRE.MatchString(v) {
		return "", false
	}
	return strings.TrimPrefix(v, "v"), true
}

// validate checks what every provider agrees on; providers check their own rules (ValidateFunc).
func (c *Cluster) validate() []FieldError {
	var errs []FieldError
	add := func(path, f string, a ...any) { errs = append(errs, Errorf(path, f, a...)) }
	if c.APIVersion != APIVersion {
		add("apiVersion", "want %s, got %q", APIVersion, c.APIVersion)
	}
	if c.Kind != Kind {
		add("kind", "want %s, got %q", Kind, c.Kind)
	}
	if c.Metadata.Name == "" {
		add("metadata.name", "required")
	} else if err := ValidName(c.Metadata.Name); err != nil {
		add("metadata.name", "%v", err)
	}
	s := &c.Spec
	if s.Provider == "" {
		add("spec.provider", "required")
	}
	if s.KubernetesVersion != "" {
		if _, ok := NormalVersion(s.KubernetesVersion); !ok {
			add("spec.kubernetesVersion", "%q is not a version (want MAJOR.MINOR or MAJOR.MINOR.PATCH)", s.KubernetesVersion)
		}
	}
	if s.TTL != "" {
		if _, err := ParseTTL(s.TTL); err != nil {
			add("spec.ttl", "%v", err)
		}
	}
	if s.ControlPlane.Count < 0 || s.ControlPlane.Count > 5 {
		add("spec.controlPlane.count", "%d: must be between 1 and 5", s.ControlPlane.Count)
	}
	seen := map[string]bool{}
	for i, g := range s.NodeGroups {
		p := fmt.Sprintf("spec.nodeGroups[%d]", i)
		switch {
		case g.Name == "":
			add(p+".name", "required")
		case dnsLabel.MatchString(g.Name) && len(g.Name) <= 40:
			if seen[g.Name] {
				add(p+".name", "node group %q is listed twice", g.Name)
			}
			seen[g.Name] = true
		default:
			add(p+".name", "invalid node group name %q: use lower-case letters, digits and '-'", g.Name)
		}
		for _, f := range []struct {
			name string
			v    *int
		}{{"count", g.Count}, {"min", g.Min}, {"max", g.Max}} {
			if f.v != nil && (*f.v < 0 || *f.v > 1000) {
				add(p+"."+f.name, "%d: must be between 0 and 1000", *f.v)
			}
		}
		if g.Min != nil && g.Max != nil && *g.Min > *g.Max {
			add(p+".min", "min %d is above max %d", *g.Min, *g.Max)
		}
		if g.Count != nil && g.Min != nil && *g.Count < *g.Min {
			add(p+".count", "count %d is below min %d", *g.Count, *g.Min)
		}
		if g.Count != nil && g.Max != nil && *g.Count > *g.Max {
			add(p+".count", "count %d is above max %d", *g.Count, *g.Max)
		}
		for k := range g.Labels {
			if !labelKeyRE.MatchString(k) || len(k) > 253 {
				add(p+".labels."+k, "invalid label key %q", k)
			}
		}
		for j, t := range g.Taints {
			if _, err := ParseTaint(t); err != nil {
				add(fmt.Sprintf("%s.taints[%d]", p, j), "%v", err)
			}
		}
		switch g.Manager {
		case "", "managed", "karpenter":
		default:
			add(p+".manager", "%q: want managed or karpenter", g.Manager)
		}
		if g.DiskSize < 0 {
			add(p+".diskSize", "%d: must be positive", g.DiskSize)
		}
	}
	nets := map[string]netip.Prefix{}
	for _, f := range []struct{ path, v string }{
		{"spec.networking.podCIDR", s.Networking.PodCIDR},
		{"spec.networking.serviceCIDR", s.Networking.ServiceCIDR},
		{"spec.networking.vpcCIDR", s.Networking.VPCCIDR},
	} {
		if f.v == "" {
			continue
		}
		pfx, err := netip.ParsePrefix(f.v)
		if err != nil {
			add(f.path, "invalid CIDR %q", f.v)
			continue
		}
		if pfx.Masked() != pfx {
			add(f.path, "%q has host bits set (did you mean %s?)", f.v, pfx.Masked())
			continue
		}
		nets[f.path] = pfx
	}
	if a, ok := nets["spec.networking.podCIDR"]; ok {
		if b, ok := nets["spec.networking.serviceCIDR"]; ok && a.Overlaps(b) {
			add("spec.networking.serviceCIDR", "%s overlaps the pod network %s", b, a)
		}
	}
	for k := range s.Tags {
		if k == "" || len(k) > 128 {
			add("spec.tags", "invalid tag key %q", k)
		}
	}
	return append(errs, c.CheckSections()...)
}

// CheckSections refuses a section that is not the spec's provider's: a spec holds only the
// section of its own provider (spec.kind for provider kind).
func (c *Cluster) CheckSections() []FieldError {
	var errs []FieldError
	for _, k := range slices.Sorted(maps.Keys(c.Spec.Sections)) {
		if k != c.Spec.Provider {
			errs = append(errs, Errorf("spec."+k, "is for provider %s; this spec's provider is %s", k, c.Spec.Provider))
		}
	}
	return errs
}

// Overlaps reports whether two CIDRs overlap (both must parse).
func Overlaps(a, b string) (bool, error) {
	pa, err := netip.ParsePrefix(a)
	if err != nil {
		return false, fmt.Errorf("invalid CIDR %q", a)
	}
	pb, err := netip.ParsePrefix(b)
	if err != nil {
		return false, fmt.Errorf("invalid CIDR %q", b)
	}
	return pa.Overlaps(pb), nil
}

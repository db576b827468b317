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
	var errs fieldErrors
	c.validateHeader(&errs)
	s := &c.Spec
	if s.Provider == "" {
		errs.add("spec.provider", "required")
	}
	if s.KubernetesVersion != "" {
		if _, ok := NormalVersion(s.KubernetesVersion); !ok {
			errs.add("spec.kubernetesVersion", "%q is not a version (want MAJOR.MINOR or MAJOR.MINOR.PATCH)", s.KubernetesVersion)
		}
	}
	if s.TTL != "" {
		if _, err := ParseTTL(s.TTL); err != nil {
			errs.add("spec.ttl", "%v", err)
		}
	}
	if s.ControlPlane.Count < 0 || s.ControlPlane.Count > 5 {
		errs.add("spec.controlPlane.count", "%d: must be between 1 and 5", s.ControlPlane.Count)
	}
	seen := map[string]bool{}
	for i, g := range s.NodeGroups {
		validateNodeGroup(&errs, fmt.Sprintf("spec.nodeGroups[%d]", i), g, seen)
	}
	validateNetworking(&errs, s.Networking)
	for k := range s.Tags {
		if k == "" || len(k) > 128 {
			errs.add("spec.tags", "invalid tag key %q", k)
		}
	}
	return append(errs, c.CheckSections()...)
}

// fieldErrors gathers the problems found in a spec, in the order found.
type fieldErrors []FieldError

// add records a problem with the field at path.
func (e *fieldErrors) add(path, f string, a ...any) { *e = append(*e, Errorf(path, f, a...)) }

// validateHeader checks the spec's apiVersion, kind and name.
func (c *Cluster) validateHeader(errs *fieldErrors) {
	if c.APIVersion != APIVersion {
		errs.add("apiVersion", "want %s, got %q", APIVersion, c.APIVersion)
	}
	if c.Kind != Kind {
		errs.add("kind", "want %s, got %q", Kind, c.Kind)
	}
	if c.Metadata.Name == "" {
		errs.add("metadata.name", "required")
	} else if err := ValidName(c.Metadata.Name); err != nil {
		errs.add("metadata.name", "%v", err)
	}
}

// validateNodeGroup checks node group g, at path p: its name (unique among those seen), its
// counts, labels, taints, manager and disk size.
func validateNodeGroup(errs *fieldErrors, p string, g NodeGroup, seen map[string]bool) {
	switch {
	case g.Name == "":
		errs.add(p+".name", "required")
	case dnsLabel.MatchString(g.Name) && len(g.Name) <= 40:
		if seen[g.Name] {
			errs.add(p+".name", "node group %q is listed twice", g.Name)
		}
		seen[g.Name] = true
	default:
		errs.add(p+".name", "invalid node group name %q: use lower-case letters, digits and '-'", g.Name)
	}
	validateCounts(errs, p, g)
	for k := range g.Labels {
		if !labelKeyRE.MatchString(k) || len(k) > 253 {
			errs.add(p+".labels."+k, "invalid label key %q", k)
		}
	}
	for j, t := range g.Taints {
		if _, err := ParseTaint(t); err != nil {
			errs.add(fmt.Sprintf("%s.taints[%d]", p, j), "%v", err)
		}
	}
	switch g.Manager {
	case "", "managed", "karpenter":
	default:
		errs.add(p+".manager", "%q: want managed or karpenter", g.Manager)
	}
	if g.DiskSize < 0 {
		errs.add(p+".diskSize", "%d: must be positive", g.DiskSize)
	}
}

// validateCounts checks node group g's count, min and max, at path p: each between 0 and 1000,
// and count between min and max.
func validateCounts(errs *fieldErrors, p string, g NodeGroup) {
	for _, f := range []struct {
		name string
		v    *int
	}{{"count", g.Count}, {"min", g.Min}, {"max", g.Max}} {
		if f.v != nil && (*f.v < 0 || *f.v > 1000) {
			errs.add(p+"."+f.name, "%d: must be between 0 and 1000", *f.v)
		}
	}
	if g.Min != nil && g.Max != nil && *g.Min > *g.Max {
		errs.add(p+".min", "min %d is above max %d", *g.Min, *g.Max)
	}
	if g.Count != nil && g.Min != nil && *g.Count < *g.Min {
		errs.add(p+".count", "count %d is below min %d", *g.Count, *g.Min)
	}
	if g.Count != nil && g.Max != nil && *g.Count > *g.Max {
		errs.add(p+".count", "count %d is above max %d", *g.Count, *g.Max)
	}
}

// validateNetworking checks the networks are CIDRs without host bits, and that the service
// network does not overlap the pod network.
func validateNetworking(errs *fieldErrors, n Networking) {
	nets := map[string]netip.Prefix{}
	for _, f := range []struct{ path, v string }{
		{"spec.networking.podCIDR", n.PodCIDR},
		{"spec.networking.serviceCIDR", n.ServiceCIDR},
		{"spec.networking.vpcCIDR", n.VPCCIDR},
	} {
		if f.v == "" {
			continue
		}
		pfx, err := netip.ParsePrefix(f.v)
		if err != nil {
			errs.add(f.path, "invalid CIDR %q", f.v)
			continue
		}
		if pfx.Masked() != pfx {
			errs.add(f.path, "%q has host bits set (did you mean %s?)", f.v, pfx.Masked())
			continue
		}
		nets[f.path] = pfx
	}
	if a, ok := nets["spec.networking.podCIDR"]; ok {
		if b, ok := nets["spec.networking.serviceCIDR"]; ok && a.Overlaps(b) {
			errs.add("spec.networking.serviceCIDR", "%s overlaps the pod network %s", b, a)
		}
	}
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

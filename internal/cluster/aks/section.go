package aks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/lazy"
)

// Section is the typed `spec.aks` section of a cluster spec.
type Section struct {
	// Subscription is the Azure subscription id (default: AZURE_SUBSCRIPTION_ID).
	Subscription string
	// ResourceGroup holds the cluster (default: <cluster>-rg). nuv creates it, tags it
	// nuv.dev/cluster=<name> and deletes it with the cluster, unless ExistingResourceGroup.
	ResourceGroup string
	// ExistingResourceGroup says the resource group exists and is not nuv's: nuv neither creates
	// nor deletes it.
	ExistingResourceGroup bool
	// NetworkPlugin is azure (the default), kubenet or none.
	NetworkPlugin string
	// DNSPrefix of the API server's FQDN (default: the cluster's name).
	DNSPrefix string
	// SKUTier is Free (the default), Standard or Premium.
	SKUTier string
}

var sectionFields = []string{"subscription", "resourceGroup", "existingResourceGroup", "networkPlugin", "dnsPrefix", "skuTier"}

var (
	rgNameRE   = lazy.MustCompile(`^[-\w._()]{1,90}$`)
	poolNameRE = lazy.MustCompile(`^[a-z][a-z0-9]{0,11}$`)
	dnsRE      = lazy.MustCompile(`^[a-zA-Z0-9][-a-zA-Z0-9]{0,52}[a-zA-Z0-9]$`)
)

// DecodeSection decodes and checks spec.aks strictly (the registry's section decoder): it returns
// the section as written.
func DecodeSection(c *spec.Cluster) (any, []spec.FieldError) {
	m, errs := spec.FreeSection(c, "aks")
	if len(errs) == 0 {
		_, errs = section(c, nil)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return m, nil
}

// section decodes c's spec.aks strictly: an unknown field or a value of the wrong type is an
// error with its field path.
func section(c *spec.Cluster, getenv func(string) string) (Section, []spec.FieldError) {
	var s Section
	var errs []spec.FieldError
	for k, v := range c.SectionMap("aks") {
		path := "spec.aks." + k
		str := func(dst *string) {
			if x, ok := v.(string); ok {
				*dst = x
			} else {
				errs = append(errs, spec.Errorf(path, "want a string, got %v", v))
			}
		}
		switch k {
		case "subscription":
			str(&s.Subscription)
		case "resourceGroup":
			str(&s.ResourceGroup)
		case "networkPlugin":
			str(&s.NetworkPlugin)
		case "dnsPrefix":
			str(&s.DNSPrefix)
		case "skuTier":
			str(&s.SKUTier)
		case "existingResourceGroup":
			if b, ok := v.(bool); ok {
				s.ExistingResourceGroup = b
			} else {
				errs = append(errs, spec.Errorf(path, "want true or false, got %v", v))
			}
		default:
			errs = append(errs, spec.Errorf(path, "unknown field (valid: %s)", strings.Join(sectionFields, ", ")))
		}
	}
	if s.Subscription == "" && getenv != nil {
		s.Subscription = getenv("AZURE_SUBSCRIPTION_ID")
	}
	if s.ResourceGroup == "" {
		s.ResourceGroup = c.Metadata.Name + "-rg"
	}
	if s.NetworkPlugin == "" {
		s.NetworkPlugin = "azure"
	}
	if s.DNSPrefix == "" {
		s.DNSPrefix = c.Metadata.Name
	}
	if s.SKUTier == "" {
		s.SKUTier = "Free"
	}
	return s, errs
}

// Validate checks what an AKS cluster can be, before any call to Azure (what the service offers
// is checked by Observe against the service itself).
func (p *Provider) Validate(c *spec.Cluster) []spec.FieldError {
	s, errs := section(c, p.getenv())
	add := func(path, f string, a ...any) { errs = append(errs, spec.Errorf(path, f, a...)) }
	if s.Subscription == "" {
		add("spec.aks.subscription", "required (or set AZURE_SUBSCRIPTION_ID)")
	} else if !uuidRE.MatchString(s.Subscription) {
		add("spec.aks.subscription", "%q is not a subscription id (a UUID)", s.Subscription)
	}
	if !rgNameRE.MatchString(s.ResourceGroup) || strings.HasSuffix(s.ResourceGroup, ".") {
		add("spec.aks.resourceGroup", "%q is not a resource group name (1-90 letters, digits, '-', '_', '.', '(', ')')", s.ResourceGroup)
	}
	switch s.NetworkPlugin {
	case "azure", "kubenet", "none":
	default:
		add("spec.aks.networkPlugin", "%q: want azure, kubenet or none", s.NetworkPlugin)
	}
	switch s.SKUTier {
	case "Free", "Standard", "Premium":
	default:
		add("spec.aks.skuTier", "%q: want Free, Standard or Premium", s.SKUTier)
	}
	if !dnsRE.MatchString(s.DNSPrefix) {
		add("spec.aks.dnsPrefix", "%q: 2-54 letters, digits and '-', starting and ending with a letter or digit", s.DNSPrefix)
	}
	sp := &c.Spec
	if sp.Region == "" {
		add("spec.region", "required: the Azure region (e.g. eastus)")
	}
	for i, z := range sp.Zones {
		if _, err := strconv.Atoi(z); err != nil {
			add("spec.zones["+strconv.Itoa(i)+"]", "%q: Azure zones are numbers (1, 2, 3)", z)
		}
	}
	if sp.ControlPlane.Count > 1 {
		add("spec.controlPlane.count", "%d: the AKS control plane is managed by Azure (spec.aks.skuTier: Standard gives its uptime SLA); leave count out", sp.ControlPlane.Count)
	}
	if sp.Registry {
		add("spec.registry", "an AKS cluster cannot pull from nuv's loopback registry")
	}
	if sp.Networking.VPCCIDR != "" {
		add("spec.networking.vpcCIDR", "AKS clusters have no VPC (the network plugin makes theirs)")
	}
	if s.NetworkPlugin == "none" && sp.Networking.PodCIDR != "" {
		add("spec.networking.podCIDR", "network plugin none takes no pod CIDR")
	}
	if len(sp.NodeGroups) == 0 {
		add("spec.nodeGroups", "required: an AKS cluster needs a system node pool (the first group)")
	}
	for i, g := range sp.NodeGroups {
		path := "spec.nodeGroups[" + strconv.Itoa(i) + "]"
		if !poolNameRE.MatchString(g.Name) {
			add(path+".name", "%q: an AKS node pool name starts with a lower-case letter and has at most 12 lower-case letters and digits", g.Name)
		}
		if g.Manager == "karpenter" {
			add(path+".manager", "karpenter is for EKS; AKS node pools are managed (leave manager out)")
		}
		if i == 0 && g.Spot {
			add(path+".spot", "the first group is the system pool, which cannot be spot")
		}
		if i == 0 && g.Size() < 1 {
			add(path+".count", "the system pool needs at least one node")
		}
		if (g.Min == nil) != (g.Max == nil) {
			add(path+".min", "the autoscaler needs both min and max")
		}
	}
	errs = append(errs, c.CheckSections()...)
	slices.SortFunc(errs, func(a, b spec.FieldError) int { return strings.Compare(a.Path, b.Path) })
	return errs
}

var uuidRE = lazy.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// vmSize is a group's VM size (instanceType), Standard_D2s_v3 by default.
func vmSize(g spec.NodeGroup) string {
	if g.InstanceType == "" {
		return DefaultVMSize
	}
	return g.InstanceType
}

// DefaultVMSize is the VM size of a node group that names none.
const DefaultVMSize = "Standard_D2s_v3"

func groupPath(i int, field string) string { return fmt.Sprintf("spec.nodeGroups[%d].%s", i, field) }

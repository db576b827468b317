package azure

import (
	"slices"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// The service's offer: what ARM and AKS accept in the emulator. Values outside it are refused as
// the real service refuses them, so a client's handling of bad input can be tested end to end.

// APIVersion is the Microsoft.ContainerService api-version nuv's own client sends
// (armcontainerservice v6.6.0); the emulator serves every published one (aksVersions).
const APIVersion = "2025-02-01"

// ResourcesAPIVersion is the Microsoft.Resources api-version nuv's own client sends (armresources
// v1.2.0); the emulator serves every published one (resourcesVersions).
const ResourcesAPIVersion = "2021-04-01"

// SkusAPIVersion is the newest Microsoft.Compute/skus api-version (all are served: skusVersions).
const SkusAPIVersion = "2021-07-01"

// Region is one Azure region of the offer.
type Region struct {
	Name, Display string
	Zones         []string
}

// Regions are the regions AKS is offered in.
var Regions = []Region{
	{"eastus", "East US", []string{"1", "2", "3"}},
	{"eastus2", "East US 2", []string{"1", "2", "3"}},
	{"centralus", "Central US", []string{"1", "2", "3"}},
	{"westus", "West US", nil},
	{"westus2", "West US 2", []string{"1", "2", "3"}},
	{"northeurope", "North Europe", []string{"1", "2", "3"}},
	{"westeurope", "West Europe", []string{"1", "2", "3"}},
	{"uksouth", "UK South", []string{"1", "2", "3"}},
	{"southeastasia", "Southeast Asia", []string{"1", "2", "3"}},
	{"japaneast", "Japan East", []string{"1", "2", "3"}},
}

// region finds a region by name or display name ("East US"), case and spaces ignored.
func region(name string) (Region, bool) {
	n := NormalizeLocation(name)
	for _, r := range Regions {
		if r.Name == n {
			return r, true
		}
	}
	return Region{}, false
}

// NormalizeLocation turns "East US" into "eastus".
func NormalizeLocation(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "")) }

func regionNames() string {
	var n []string
	for _, r := range Regions {
		n = append(n, r.Name)
	}
	return strings.Join(n, ",")
}

// vmSizes are the VM sizes offered, with the regions that lack them.
var vmSizes = lazy.Value[map[string][]string]{New: func() map[string][]string {
	return map[string][]string{
		"Standard_B2s":     nil,
		"Standard_B4ms":    nil,
		"Standard_D2s_v3":  nil,
		"Standard_D4s_v3":  nil,
		"Standard_D8s_v3":  nil,
		"Standard_D2s_v5":  nil,
		"Standard_D4s_v5":  nil,
		"Standard_D2as_v5": nil,
		"Standard_D4as_v5": nil,
		"Standard_DS2_v2":  nil,
		"Standard_DS3_v2":  nil,
		"Standard_E4s_v5":  nil,
		"Standard_F4s_v2":  nil,
		"Standard_NC6s_v3": {"westus", "centralus", "uksouth", "southeastasia", "japaneast", "eastus2"},
	}
}}

// vmSizeIn reports whether size is offered in region (case-insensitive, as ARM is).
func vmSizeIn(size, regionName string) (string, bool) {
	for k, missing := range vmSizes.Get() {
		if strings.EqualFold(k, size) {
			return k, !slices.Contains(missing, NormalizeLocation(regionName))
		}
	}
	return "", false
}

func vmSizeNames() []string {
	var n []string
	for k := range vmSizes.Get() {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// kubeVersions are the minor versions offered, each with its patch versions; the last is the default.
var kubeVersions = []struct {
	Minor   string
	Patches []string
}{
	{"1.34", []string{"1.34.6", "1.34.8"}},
	{"1.35", []string{"1.35.3", "1.35.5"}},
	{"1.36", []string{"1.36.1", "1.36.3"}},
}

// DefaultKubernetesVersion is the version of a cluster that names none.
const DefaultKubernetesVersion = "1.36"

// resolveVersion returns the patch version v ("1.35" or "1.35.3") stands for; ok false if not offered.
func resolveVersion(v string) (string, bool) {
	for _, kv := range kubeVersions {
		if v == kv.Minor {
			return kv.Patches[len(kv.Patches)-1], true
		}
		if slices.Contains(kv.Patches, v) {
			return v, true
		}
	}
	return "", false
}

func versionList() string {
	var n []string
	for _, kv := range kubeVersions {
		n = append(n, kv.Patches...)
	}
	return strings.Join(n, ", ")
}

// minorOf is "1.35" of "1.35.3".
func minorOf(v string) string {
	p := strings.Split(v, ".")
	if len(p) < 2 {
		return v
	}
	return p[0] + "." + p[1]
}

// lessVersion compares dotted versions numerically.
func lessVersion(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if len(pa[i]) != len(pb[i]) {
			return len(pa[i]) < len(pb[i])
		}
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return len(pa) < len(pb)
}

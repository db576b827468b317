package azure

import (
	"slices"
	"strings"
)

// The api-versions the emulator serves: every version Azure has published for each resource type
// it serves, so a client built on any SDK release (each sends the version it was generated from)
// is answered. A version Azure has not published is refused as ARM refuses it. The answers keep
// the emulator's one shape (the newest fields); request fields an older version defines and the
// emulator does not keep are accepted and ignored, as ARM accepts a body of the version named.

// aksVersions are the Microsoft.ContainerService api-versions of managedClusters, from the
// folders of Azure's REST API specifications
// (github.com/Azure/azure-rest-api-specs, specification/containerservice/resource-manager/
// Microsoft.ContainerService/aks/stable/<version>/managedClusters.json and
// .../aks/preview/<version>/managedClusters.json, and the package tags of that folder's readme.md).
var aksVersions = []string{
	// stable
	"2017-08-31", "2018-03-31", "2019-02-01", "2019-04-01", "2019-06-01", "2019-08-01", "2019-10-01", "2019-11-01",
	"2020-01-01", "2020-02-01", "2020-03-01", "2020-04-01", "2020-06-01", "2020-07-01", "2020-09-01", "2020-11-01", "2020-12-01",
	"2021-02-01", "2021-03-01", "2021-05-01", "2021-07-01", "2021-08-01", "2021-09-01", "2021-10-01",
	"2022-01-01", "2022-02-01", "2022-03-01", "2022-04-01", "2022-06-01", "2022-07-01", "2022-09-01", "2022-11-01",
	"2023-01-01", "2023-02-01", "2023-03-01", "2023-04-01", "2023-05-01", "2023-06-01", "2023-07-01", "2023-08-01",
	"2023-09-01", "2023-10-01", "2023-11-01",
	"2024-01-01", "2024-02-01", "2024-05-01", "2024-07-01", "2024-08-01", "2024-09-01", "2024-10-01",
	"2025-01-01", "2025-02-01", "2025-03-01", "2025-04-01", "2025-05-01", "2025-06-01", "2025-07-01", "2025-08-01",
	"2025-09-01", "2025-10-01",
	"2026-01-01", "2026-02-01", "2026-03-01", "2026-04-01", "2026-05-01", "2026-06-01", "2026-07-01", "2026-08-01", "2026-10-01",
	// preview
	"2018-08-01-preview", "2021-11-01-preview",
	"2022-01-02-preview", "2022-02-02-preview", "2022-03-02-preview", "2022-04-02-preview", "2022-05-02-preview",
	"2022-06-02-preview", "2022-07-02-preview", "2022-08-02-preview", "2022-08-03-preview", "2022-09-02-preview",
	"2022-10-02-preview", "2022-11-02-preview",
	"2023-01-02-preview", "2023-02-02-preview", "2023-03-02-preview", "2023-04-02-preview", "2023-05-02-preview",
	"2023-06-02-preview", "2023-07-02-preview", "2023-08-02-preview", "2023-09-02-preview", "2023-10-02-preview",
	"2023-11-02-preview",
	"2024-01-02-preview", "2024-02-02-preview", "2024-03-02-preview", "2024-04-02-preview", "2024-05-02-preview",
	"2024-06-02-preview", "2024-07-02-preview", "2024-09-02-preview", "2024-10-02-preview",
	"2025-01-02-preview", "2025-02-02-preview", "2025-03-02-preview", "2025-04-02-preview", "2025-05-02-preview",
	"2025-06-02-preview", "2025-07-02-preview", "2025-08-02-preview", "2025-09-02-preview", "2025-10-02-preview",
	"2026-01-02-preview", "2026-02-02-preview", "2026-03-02-preview", "2026-04-02-preview", "2026-05-02-preview",
	"2026-06-02-preview", "2026-07-02-preview", "2026-08-02-preview", "2026-10-02-preview",
}

// agentPoolsSince is the first api-version with managedClusters/agentPools and
// listClusterUserCredential (the 2019-02-01 specification; earlier versions have neither).
const agentPoolsSince = "2019-02-01"

// kubernetesVersionsSince is the first api-version with locations/kubernetesVersions
// (ManagedClusters_ListKubernetesVersions: the 2023-03-01 and 2023-03-02-preview specifications
// have it, 2023-02-01 and 2023-02-02-preview not).
const kubernetesVersionsSince = "2023-03-01"

// resourcesVersions are the Microsoft.Resources api-versions of resource groups, resources and
// providers, from the package tags of azure-rest-api-specs
// specification/resources/resource-manager/Microsoft.Resources/resources/readme.md
// (stable/<version>/resources.json).
var resourcesVersions = []string{
	"2015-11-01", "2016-02-01", "2016-07-01", "2016-09-01", "2017-05-10", "2018-02-01", "2018-05-01",
	"2019-03-01", "2019-05-01", "2019-05-10", "2019-07-01", "2019-08-01", "2019-10-01",
	"2020-06-01", "2020-08-01", "2020-10-01", "2021-01-01", "2021-04-01", "2022-09-01", "2023-07-01",
	"2024-03-01", "2024-07-01", "2024-11-01", "2025-03-01", "2025-04-01",
}

// skusVersions are the Microsoft.Compute/skus api-versions, from azure-rest-api-specs
// specification/compute/resource-manager/Microsoft.Compute (the resource skus operation of
// compute.json 2017-03-30 and Skus/stable/<version>/skus.json).
var skusVersions = []string{"2017-03-30", "2017-09-01", "2019-04-01", "2021-07-01"}

// apiType is a resource type as ARM checks api-versions: the versions published for it, and
// whether a resource provider serves it (an unpublished version is then NoRegisteredProviderFound,
// naming the request's location) or ARM itself (InvalidApiVersionParameter).
type apiType struct {
	name     string
	provider bool
	versions []string
	// first, when set, is the date of the first version of versions that serves the type
	// (previews by their date): a type published later than the provider's first version.
	// Filtered when asked rather than at init, so that the emulator costs nothing before it serves.
	first string
}

var (
	groupsType   = &apiType{name: "resourceGroups", versions: resourcesVersions}
	skusType     = &apiType{name: "skus", provider: true, versions: skusVersions}
	clustersType = &apiType{name: "managedClusters", provider: true, versions: aksVersions}
	poolsType    = &apiType{name: "managedClusters/agentPools", provider: true, versions: aksVersions, first: agentPoolsSince}
	credsType    = &apiType{name: "managedClusters", provider: true, versions: aksVersions, first: agentPoolsSince}
	locsType     = &apiType{name: "locations/operations", provider: true, versions: aksVersions}
	kubeVersType = &apiType{name: "locations/kubernetesVersions", provider: true, versions: aksVersions, first: kubernetesVersionsSince}
)

// since are the versions of vs dated first or later (previews by their date).
func since(vs []string, first string) []string {
	var out []string
	for _, v := range vs {
		if v[:10] >= first {
			out = append(out, v)
		}
	}
	return out
}

// published are the versions Azure published for t.
func (t *apiType) published() []string {
	if t.first == "" {
		return t.versions
	}
	return since(t.versions, t.first)
}

// serves says whether t serves api-version v (ARM compares them case-insensitively).
func (t *apiType) serves(v string) bool {
	return slices.ContainsFunc(t.published(), func(x string) bool { return strings.EqualFold(x, v) })
}

// newestFirst is t's versions newest first, as ARM lists them in errors and in a provider's
// resource types.
func (t *apiType) newestFirst() []string {
	out := slices.Clone(t.published())
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(b, a) })
	return out
}

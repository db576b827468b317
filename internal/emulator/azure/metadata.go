package azure

import (
	"net/http"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// ARM's cloud metadata (GET /metadata/endpoints?api-version=...), which clients read to discover a
// custom cloud from its resource manager alone: the az CLI's `az cloud register
// --endpoint-resource-manager` and Terraform's azurerm `metadata_host` (go-azure-sdk's
// environments.FromEndpoint) ask with api-version 2022-09-01 and read one object, the cloud of
// the endpoint asked; clients of the older form (api-version 2015-01-01 of msrestazure, 2019-05-01
// of the az CLI's ARM_CLOUD_METADATA_URL) read a list of clouds. The document names the
// emulator's resource manager, its authority (loginEndpoint, audiences, tenant) and suffixes;
// the audiences are the ones the authority issues tokens for and ARM accepts.

// CloudName is the name of the emulator's cloud in its metadata document.
const CloudName = "NuvAzureEmulator"

// metadataObjectSince is the first api-version answered with one object rather than a list.
const metadataObjectSince = "2022-09-01"

// dateVersion is the form of an api-version (a date, a -preview suffix allowed).
var dateVersion = lazy.MustCompile(`^\d{4}-\d{2}-\d{2}(-preview)?$`)

// metadataDomain is the DNS suffix of the services the emulator does not serve (storage, key
// vault, ...): names under .localhost never leave the machine (RFC 6761), so a client following
// them reaches nothing in Azure with the emulator's tokens.
const metadataDomain = "nuv-emulator.localhost"

// cloudMetadata is the cloud's document; base is the emulator's URL.
func (s *Server) cloudMetadata(base string) map[string]any {
	s.Mu.Lock()
	tenant := s.St.TenantID
	s.Mu.Unlock()
	unserved := func(sub string) string { return "https://" + sub + "." + metadataDomain + "/" }
	return map[string]any{
		"name":            CloudName,
		"portal":          unserved("portal"),
		"resourceManager": base + "/",
		"authentication": map[string]any{
			"loginEndpoint":    base + "/",
			"audiences":        []string{base + "/", base},
			"tenant":           tenant,
			"identityProvider": "AAD",
		},
		"media":                                 unserved("media"),
		"graphAudience":                         unserved("graph"),
		"graph":                                 unserved("graph"),
		"batch":                                 unserved("batch"),
		"vmImageAliasDoc":                       unserved("vmimagealiases"),
		"activeDirectoryDataLake":               unserved("datalake"),
		"sqlManagement":                         unserved("sql"),
		"gallery":                               unserved("gallery"),
		"microsoftGraphResourceId":              unserved("graph"),
		"appInsightsResourceId":                 unserved("appinsights"),
		"appInsightsTelemetryChannelResourceId": unserved("dc.appinsights"),
		"attestationResourceId":                 unserved("attest"),
		"synapseAnalyticsResourceId":            unserved("synapse"),
		"logAnalyticsResourceId":                unserved("loganalytics"),
		"ossrDbmsResourceId":                    unserved("ossrdbms"),
		"suffixes": map[string]any{
			"azureDataLakeStoreFileSystem":        "datalakestore." + metadataDomain,
			"acrLoginServer":                      "acr." + metadataDomain,
			"sqlServerHostname":                   "sql." + metadataDomain,
			"azureDataLakeAnalyticsCatalogAndJob": "datalakeanalytics." + metadataDomain,
			"keyVaultDns":                         "vault." + metadataDomain,
			"storage":                             "storage." + metadataDomain,
			"azureFrontDoorEndpointSuffix":        "frontdoor." + metadataDomain,
			"storageSyncEndpointSuffix":           "storagesync." + metadataDomain,
			"mhsmDns":                             "managedhsm." + metadataDomain,
			"mysqlServerEndpoint":                 "mysql." + metadataDomain,
			"postgresqlServerEndpoint":            "postgres." + metadataDomain,
			"mariadbServerEndpoint":               "mariadb." + metadataDomain,
			"synapseAnalytics":                    "synapse." + metadataDomain,
			"attestationEndpoint":                 "attest." + metadataDomain,
		},
	}
}

// metadataEndpoints answers /metadata/endpoints (no token needed, as ARM's): one object from
// api-version 2022-09-01 on, a list of the one cloud before it.
func (s *Server) metadataEndpoints(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeARMError(w, aerr(405, "MethodNotAllowed", "The requested resource does not support http method '%s'.", r.Method))
		return
	}
	v := r.URL.Query().Get("api-version")
	if v == "" {
		writeARMError(w, aerr(400, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests."))
		return
	}
	if !dateVersion.Get().MatchString(v) {
		writeARMError(w, aerr(400, "InvalidApiVersionParameter", "The api-version '%s' is invalid. The supported versions are of the form 'yyyy-mm-dd' (nuv emulator: 2022-09-01 answers one object, earlier versions a list).", v))
		return
	}
	doc := s.cloudMetadata(s.BaseURL())
	if v[:10] >= metadataObjectSince {
		writeJSON(w, 200, doc)
		return
	}
	writeJSON(w, 200, []any{doc})
}

package pricing

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"cloud.google.com/go/auth"
)

// OffEnv turns the estimate off when set to "off" (no price API is asked).
const OffEnv = "NUV_PRICES"

// FromEnv is the Book nuv's commands use: the three clouds' price APIs at the endpoints the
// environment names (AWS_ENDPOINT_URL_PRICING or AWS_ENDPOINT_URL, NUV_AZURE_PRICES with the CA of
// NUV_AZURE_CA_FILE, CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDBILLING), else the emulator's when the
// cloud's API is an emulator on loopback (NUV_AZURE_RESOURCE_MANAGER,
// CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER: a plan against an emulator never asks the real price
// APIs), else the clouds' own; and the cache under home. gcpCreds gets Google's Application Default Credentials. It returns nil
// when NUV_PRICES=off.
func FromEnv(getenv func(string) string, home string, gcpCreds func(ctx context.Context) (*auth.Credentials, error)) (*Book, error) {
	if getenv(OffEnv) == "off" {
		return nil, nil
	}
	awsEndpoint := getenv("AWS_ENDPOINT_URL_PRICING")
	if awsEndpoint == "" {
		awsEndpoint = getenv("AWS_ENDPOINT_URL")
	}
	azurePrices := getenv("NUV_AZURE_PRICES")
	if arm := getenv("NUV_AZURE_RESOURCE_MANAGER"); azurePrices == "" && loopback(arm) {
		azurePrices = arm // nuv's emulator serves ARM and the prices on one address
	}
	gcpCatalog := getenv(GCPEndpointEnv)
	if gkeAPI := getenv("CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER"); gcpCatalog == "" && loopback(gkeAPI) {
		gcpCatalog = gkeAPI // the same for GKE's API and the catalogue
	}
	client, err := azureClient(getenv("NUV_AZURE_CA_FILE"))
	if err != nil {
		return nil, err
	}
	return &Book{
		Sources: map[string]Source{
			"aws":   &AWS{Endpoint: awsEndpoint, Profile: getenv("AWS_PROFILE")},
			"azure": &Azure{BaseURL: azurePrices, Client: client},
			"gcp":   &GCP{Endpoint: gcpCatalog, Credentials: gcpCreds},
		},
		Cache:   &Cache{Path: CachePath(home)},
		Timeout: 2 * time.Second,
	}, nil
}

// loopback reports whether u is a URL on a loopback address (nuv's emulators).
func loopback(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return false
	}
	if p.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(p.Hostname())
	return ip != nil && ip.IsLoopback()
}

// azureClient is an HTTP client that trusts the system's CAs and, when caFile is set, that file's
// (nuv's Azure emulator serves TLS with a CA of its own).
func azureClient(caFile string) (*http.Client, error) {
	if caFile == "" {
		return http.DefaultClient, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("NUV_AZURE_CA_FILE: %w", err)
	}
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("NUV_AZURE_CA_FILE=%s holds no PEM certificate", caFile)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	return &http.Client{Transport: tr}, nil
}

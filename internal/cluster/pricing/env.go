package pricing

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"time"

	"cloud.google.com/go/auth"
)

// OffEnv turns the estimate off when set to "off" (no price API is asked).
const OffEnv = "NUV_PRICES"

// FromEnv is the Book nuv's commands use: the three clouds' price APIs at the endpoints the
// environment names (AWS_ENDPOINT_URL_PRICING or AWS_ENDPOINT_URL, NUV_AZURE_PRICES with the CA of
// NUV_AZURE_CA_FILE, CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDBILLING; the clouds' own otherwise) and
// the cache under home. gcpCreds gets Google's Application Default Credentials. It returns nil
// when NUV_PRICES=off.
func FromEnv(getenv func(string) string, home string, gcpCreds func(ctx context.Context) (*auth.Credentials, error)) (*Book, error) {
	if getenv(OffEnv) == "off" {
		return nil, nil
	}
	awsEndpoint := getenv("AWS_ENDPOINT_URL_PRICING")
	if awsEndpoint == "" {
		awsEndpoint = getenv("AWS_ENDPOINT_URL")
	}
	client, err := azureClient(getenv("NUV_AZURE_CA_FILE"))
	if err != nil {
		return nil, err
	}
	return &Book{
		Sources: map[string]Source{
			"aws":   &AWS{Endpoint: awsEndpoint, Profile: getenv("AWS_PROFILE")},
			"azure": &Azure{BaseURL: getenv("NUV_AZURE_PRICES"), Client: client},
			"gcp":   &GCP{Endpoint: getenv(GCPEndpointEnv), Credentials: gcpCreds},
		},
		Cache:   &Cache{Path: CachePath(home)},
		Timeout: 2 * time.Second,
	}, nil
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

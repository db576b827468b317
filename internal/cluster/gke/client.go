package gke

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	container "cloud.google.com/go/container/apiv1"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcinsecure "google.golang.org/grpc/credentials/insecure"
)

// EndpointEnv overrides the GKE API endpoint, as for gcloud: http://127.0.0.1:PORT/ (a loopback
// endpoint without TLS, such as nuv's emulator) or https://HOST/.
const EndpointEnv = "CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER"

// Scopes are the OAuth scopes nuv asks for.
var Scopes = []string{"https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/userinfo.email"}

// Conn is a connected ClusterManager client and where its credentials came from.
type Conn struct {
	Client *container.ClusterManagerClient
	// Source says where the credentials came from; Endpoint is host:port; Loopback is set for a
	// loopback endpoint without TLS (the emulator).
	Source   string
	Endpoint string
	Loopback bool
	creds    *auth.Credentials
}

// Credentials finds Application Default Credentials as Google's libraries do (the file named by
// GOOGLE_APPLICATION_CREDENTIALS, then gcloud's application_default_credentials.json, then the
// metadata server on Google Cloud) and gets a token, so missing, refused or expired credentials
// are one error naming what was tried, before anything is made. source says where they came from.
func Credentials(ctx context.Context, getenv func(string) string) (creds *auth.Credentials, source string, err error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	opts := &credentials.DetectOptions{Scopes: Scopes}
	wellKnown := wellKnownFile(getenv)
	tried := []string{"GOOGLE_APPLICATION_CREDENTIALS (unset)"}
	if f := getenv("GOOGLE_APPLICATION_CREDENTIALS"); f != "" {
		opts.CredentialsFile, source = f, "GOOGLE_APPLICATION_CREDENTIALS="+f
		tried = []string{source}
		if _, err := os.Stat(f); err != nil {
			return nil, "", fmt.Errorf("no Google credentials: GOOGLE_APPLICATION_CREDENTIALS names %s: %w", f, err)
		}
	} else if wellKnown != "" {
		if _, err := os.Stat(wellKnown); err == nil {
			opts.CredentialsFile, source = wellKnown, "gcloud's application default credentials "+wellKnown
		} else {
			tried = append(tried, "gcloud's application default credentials "+wellKnown+" (missing)")
		}
	}
	if opts.CredentialsFile == "" {
		tried = append(tried, "the metadata server of Google Cloud (not on Google Cloud)")
		if !onGCE(getenv) {
			return nil, "", fmt.Errorf("no Google credentials: tried %s; set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, run `gcloud auth application-default login`, or `eval \"$(nuv emulator env)\"` for nuv's GKE emulator", strings.Join(tried, ", "))
		}
		source = "the metadata server"
	}
	creds, err = credentials.DetectDefault(opts)
	if err != nil {
		return nil, "", fmt.Errorf("Google credentials from %s: %w", source, err)
	}
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := creds.Token(tctx); err != nil {
		return nil, "", fmt.Errorf("Google credentials from %s were refused (expired, revoked or deleted?): %w", source, err)
	}
	return creds, source, nil
}

func wellKnownFile(getenv func(string) string) string {
	if d := getenv("CLOUDSDK_CONFIG"); d != "" {
		return filepath.Join(d, "application_default_credentials.json")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "gcloud", "application_default_credentials.json")
	}
	return ""
}

// onGCE reports whether a metadata server is configured or this looks like a Google Cloud VM
// (the product name DMI reports), without a network probe.
func onGCE(getenv func(string) string) bool {
	if getenv("GCE_METADATA_HOST") != "" {
		return true
	}
	b, err := os.ReadFile("/sys/class/dmi/id/product_name")
	return err == nil && strings.Contains(string(b), "Google")
}

// tokenCreds puts an ADC access token on every gRPC call; only used on loopback connections
// without TLS (the emulator), where gRPC's own ADC transport cannot be used.
type tokenCreds struct{ creds *auth.Credentials }

func (t tokenCreds) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	tok, err := t.creds.Token(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]string{"authorization": "Bearer " + tok.Value}, nil
}

func (tokenCreds) RequireTransportSecurity() bool { return false }

// endpoint reads EndpointEnv: host:port and whether it is a loopback endpoint without TLS.
func endpoint(getenv func(string) string) (hostport string, plaintext bool, err error) {
	v := getenv(EndpointEnv)
	if v == "" {
		return "container.googleapis.com:443", false, nil
	}
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return "", false, fmt.Errorf("%s=%q: want http://127.0.0.1:PORT/ or https://HOST/", EndpointEnv, v)
	}
	host, port := u.Hostname(), u.Port()
	switch u.Scheme {
	case "http":
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return "", false, fmt.Errorf("%s=%q: plain http is only for a loopback endpoint (the emulator); use https", EndpointEnv, v)
		}
		if port == "" {
			port = "80"
		}
		return net.JoinHostPort(host, port), true, nil
	case "https":
		if port == "" {
			port = "443"
		}
		return net.JoinHostPort(host, port), false, nil
	}
	return "", false, fmt.Errorf("%s=%q: want an http or https URL", EndpointEnv, v)
}

// connect returns the provider's client, connecting on first use.
func (p *Provider) connect(ctx context.Context) (*Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil {
		return p.conn, nil
	}
	c, err := Connect(ctx, p.Getenv)
	if err != nil {
		return nil, err
	}
	p.conn = c
	return c, nil
}

// Connect makes a ClusterManager client from the environment: the endpoint (EndpointEnv) and
// Application Default Credentials, checked by getting a token.
func Connect(ctx context.Context, getenv func(string) string) (*Conn, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	hostport, plaintext, err := endpoint(getenv)
	if err != nil {
		return nil, err
	}
	creds, source, err := Credentials(ctx, getenv)
	if err != nil {
		return nil, err
	}
	var opts []option.ClientOption
	if plaintext {
		cc, err := grpc.NewClient(hostport, grpc.WithTransportCredentials(grpcinsecure.NewCredentials()), grpc.WithPerRPCCredentials(tokenCreds{creds}))
		if err != nil {
			return nil, fmt.Errorf("GKE API at %s: %w", hostport, err)
		}
		opts = append(opts, option.WithGRPCConn(cc))
	} else {
		opts = append(opts, option.WithEndpoint(hostport), option.WithAuthCredentials(creds))
	}
	client, err := container.NewClusterManagerClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("GKE API at %s: %w", hostport, err)
	}
	return &Conn{Client: client, creds: creds, Source: source, Endpoint: hostport, Loopback: plaintext}, nil
}

// retry retries what GKE asks clients to retry: quota throttling and unavailability.
func retry() gax.CallOption {
	return gax.WithRetry(func() gax.Retryer {
		return gax.OnCodes([]codes.Code{codes.ResourceExhausted, codes.Unavailable}, gax.Backoff{Initial: 200 * time.Millisecond, Max: 5 * time.Second, Multiplier: 2})
	})
}

// Close closes the provider's connection, if any.
func (p *Provider) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		return nil
	}
	err := p.conn.Client.Close()
	p.conn = nil
	return err
}

var errNoCluster = errors.New("no such GKE cluster")

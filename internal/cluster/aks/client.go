package aks

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	acs "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// clients are the SDK clients of one subscription.
type clients struct {
	groups    *armresources.ResourceGroupsClient
	providers *armresources.ProvidersClient
	clusters  *acs.ManagedClustersClient
	pools     *acs.AgentPoolsClient
	raw       *arm.Client // Microsoft.Compute/skus, read through the SDK's pipeline
	endpoint  string
}

// clientOptions are the SDK options from the environment: AZURE_AUTHORITY_HOST (an Azure AD
// authority other than the public cloud's), NUV_AZURE_RESOURCE_MANAGER (an ARM endpoint other
// than management.azure.com, e.g. nuv's emulator) and NUV_AZURE_CA_FILE (a CA to trust besides
// the system's).
func clientOptions(getenv func(string) string) (azcore.ClientOptions, bool, error) {
	cfg := cloud.AzurePublic
	custom := false
	if h := getenv("AZURE_AUTHORITY_HOST"); h != "" {
		cfg.ActiveDirectoryAuthorityHost = h
		custom = !strings.Contains(h, "login.microsoftonline.") && !strings.Contains(h, "login.chinacloudapi.cn")
	}
	if ep := getenv("NUV_AZURE_RESOURCE_MANAGER"); ep != "" {
		ep = strings.TrimSuffix(ep, "/")
		cfg.Services = map[cloud.ServiceName]cloud.ServiceConfiguration{cloud.ResourceManager: {Endpoint: ep, Audience: ep}}
	}
	o := azcore.ClientOptions{Cloud: cfg, Retry: policy.RetryOptions{MaxRetries: 6, RetryDelay: 500 * time.Millisecond, MaxRetryDelay: 10 * time.Second}}
	if ca := getenv("NUV_AZURE_CA_FILE"); ca != "" {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		b, err := os.ReadFile(ca)
		if err != nil {
			return o, custom, fmt.Errorf("NUV_AZURE_CA_FILE: %w", err)
		}
		if !pool.AppendCertsFromPEM(b) {
			return o, custom, fmt.Errorf("NUV_AZURE_CA_FILE=%s holds no PEM certificate", ca)
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
		o.Transport = &http.Client{Transport: tr}
	}
	return o, custom, nil
}

// credential finds Azure credentials the way the issue asks: the environment (a service principal
// with a secret: AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET), workload identity
// (AZURE_FEDERATED_TOKEN_FILE), then the Azure CLI's login, in that order. It gets a token for
// ARM from the first that works, so bad credentials fail here, before anything is made; the error
// names what was tried and why each failed.
func credential(ctx context.Context, getenv func(string) string, co azcore.ClientOptions, custom bool) (azcore.TokenCredential, error) {
	type candidate struct {
		name string
		cred azcore.TokenCredential
		err  error
	}
	var cands []candidate
	tenant, client, secret := getenv("AZURE_TENANT_ID"), getenv("AZURE_CLIENT_ID"), getenv("AZURE_CLIENT_SECRET")
	if tenant != "" && client != "" && secret != "" {
		c, err := azidentity.NewClientSecretCredential(tenant, client, secret, &azidentity.ClientSecretCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: custom})
		cands = append(cands, candidate{"environment (AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET)", c, err})
	} else {
		cands = append(cands, candidate{"environment", nil, errors.New("AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET are not all set")})
	}
	if file := getenv("AZURE_FEDERATED_TOKEN_FILE"); file != "" && tenant != "" && client != "" {
		c, err := azidentity.NewWorkloadIdentityCredential(&azidentity.WorkloadIdentityCredentialOptions{ClientOptions: co, TenantID: tenant, ClientID: client, TokenFilePath: file, DisableInstanceDiscovery: custom})
		cands = append(cands, candidate{"workload identity (AZURE_FEDERATED_TOKEN_FILE)", c, err})
	} else {
		cands = append(cands, candidate{"workload identity", nil, errors.New("AZURE_FEDERATED_TOKEN_FILE, AZURE_TENANT_ID and AZURE_CLIENT_ID are not all set")})
	}
	if _, err := lookPath("az"); err == nil {
		c, err := azidentity.NewAzureCLICredential(&azidentity.AzureCLICredentialOptions{TenantID: tenant})
		cands = append(cands, candidate{"Azure CLI (az login)", c, err})
	} else {
		cands = append(cands, candidate{"Azure CLI", nil, errors.New("az is not installed")})
	}
	scope := strings.TrimSuffix(co.Cloud.Services[cloud.ResourceManager].Audience, "/") + "/.default"
	var tried []string
	for _, c := range cands {
		err := c.err
		if err == nil {
			tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_, err = c.cred.GetToken(tctx, policy.TokenRequestOptions{Scopes: []string{scope}})
			cancel()
			if err == nil {
				return c.cred, nil
			}
		}
		tried = append(tried, fmt.Sprintf("%s: %s", c.name, firstLine(err)))
	}
	return nil, fmt.Errorf("no usable Azure credentials; tried, in order:\n  %s", strings.Join(tried, "\n  "))
}

var aadstsRE = lazy.MustCompile(`AADSTS\d+: [^\n"]*`)

// firstLine keeps the useful part of an SDK error (they run over many lines): Azure AD's
// AADSTS code and description when there is one.
func firstLine(err error) string {
	s := strings.TrimSpace(err.Error())
	if m := aadstsRE.FindString(s); m != "" {
		head, _, _ := strings.Cut(s, "\n")
		return strings.TrimSpace(head) + " " + m
	}
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "---") || strings.HasPrefix(l, "To troubleshoot") || strings.HasPrefix(l, "RESPONSE") || strings.HasPrefix(l, "POST ") || strings.HasPrefix(l, "GET ") || strings.HasPrefix(l, "{") || strings.HasPrefix(l, "}") || strings.HasPrefix(l, "\"") {
			continue
		}
		keep = append(keep, l)
		if strings.Contains(l, "AADSTS") || len(keep) >= 3 {
			break
		}
	}
	return strings.Join(keep, " ")
}

// clientsFor builds the SDK clients of a subscription (and checks the credentials).
func (p *Provider) clientsFor(ctx context.Context, subscription string) (*clients, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.cache[subscription]; ok {
		return c, nil
	}
	co, custom, err := clientOptions(p.getenv())
	if err != nil {
		return nil, err
	}
	if p.cred == nil {
		if p.cred, err = credential(ctx, p.getenv(), co, custom); err != nil {
			return nil, err
		}
	}
	ao := &arm.ClientOptions{ClientOptions: co}
	c := &clients{endpoint: co.Cloud.Services[cloud.ResourceManager].Endpoint}
	if c.groups, err = armresources.NewResourceGroupsClient(subscription, p.cred, ao); err != nil {
		return nil, err
	}
	if c.providers, err = armresources.NewProvidersClient(subscription, p.cred, ao); err != nil {
		return nil, err
	}
	f, err := acs.NewClientFactory(subscription, p.cred, ao)
	if err != nil {
		return nil, err
	}
	c.clusters, c.pools = f.NewManagedClustersClient(), f.NewAgentPoolsClient()
	if c.raw, err = arm.NewClient("nuv-aks", "v1.0.0", p.cred, ao); err != nil {
		return nil, err
	}
	if p.cache == nil {
		p.cache = map[string]*clients{}
	}
	p.cache[subscription] = c
	return c, nil
}

// notFound reports an ARM 404.
func notFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusNotFound
}

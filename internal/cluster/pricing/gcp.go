package pricing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"cloud.google.com/go/auth"
	billing "cloud.google.com/go/billing/apiv1"
	"cloud.google.com/go/billing/apiv1/billingpb"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/nuv-dev/nuv/internal/cluster"
)

// ComputeEngineService is Compute Engine's service in the Cloud Billing Catalog.
const ComputeEngineService = "services/6F81-5844-456A"

// GCPEndpointEnv overrides the Cloud Billing API's endpoint, as for gcloud: http://127.0.0.1:PORT/
// (nuv's emulator) or https://HOST/.
const GCPEndpointEnv = "CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDBILLING"

// GCPCatalogURL is the Cloud Billing API's own endpoint.
const GCPCatalogURL = "https://cloudbilling.googleapis.com"

// GCP reads Compute Engine's on-demand vCPU and memory prices from the Cloud Billing Catalog API
// (ListSkus of Compute Engine, through the Go client cloud.google.com/go/billing/apiv1 over REST)
// and prices a machine type as vCPUs x the series' core price + GiB x its RAM price, the way
// Compute Engine bills predefined machine types.
type GCP struct {
	// Endpoint is the API's base URL (default GCPCatalogURL;
	// CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDBILLING points it at nuv's emulator).
	Endpoint string
	// Credentials returns Application Default Credentials (the catalogue asks for a token or key).
	Credentials func(ctx context.Context) (*auth.Credentials, error)

	mu     sync.Mutex
	client *billing.CloudCatalogClient
	skus   []*billingpb.Sku // the service's SKUs, read once per process
}

// Where is the endpoint.
func (g *GCP) Where(cluster.Machines) string {
	if g.Endpoint == "" {
		return GCPCatalogURL
	}
	return strings.TrimSuffix(g.Endpoint, "/")
}

// list reads Compute Engine's SKUs (every page) once.
func (g *GCP) list(ctx context.Context) ([]*billingpb.Sku, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.skus != nil {
		return g.skus, nil
	}
	if g.client == nil {
		if g.Credentials == nil {
			return nil, errors.New("no Google credentials to ask the Cloud Billing Catalog API with")
		}
		creds, err := g.Credentials(ctx)
		if err != nil {
			return nil, err
		}
		c, err := billing.NewCloudCatalogRESTClient(ctx, option.WithEndpoint(g.Where(cluster.Machines{})), option.WithAuthCredentials(creds))
		if err != nil {
			return nil, fmt.Errorf("Cloud Billing Catalog API at %s: %w", g.Where(cluster.Machines{}), err)
		}
		g.client = c
	}
	it := g.client.ListSkus(ctx, &billingpb.ListSkusRequest{Parent: ComputeEngineService, CurrencyCode: "USD", PageSize: 5000})
	var out []*billingpb.Sku
	for {
		s, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("Cloud Billing Catalog API: %w", err)
		}
		out = append(out, s)
	}
	g.skus = out
	return out, nil
}

// Price prices m as its vCPUs and memory at its series' on-demand core and RAM prices in m's
// region.
func (g *GCP) Price(ctx context.Context, m cluster.Machines) (Price, error) {
	if m.VCPUs <= 0 || m.MemoryGiB <= 0 {
		return Price{}, &NoPrice{fmt.Sprintf("nuv does not know the vCPUs and memory of %s", m.Type)}
	}
	series, _, _ := strings.Cut(m.Type, "-")
	series = strings.ToUpper(series)
	skus, err := g.list(ctx)
	if err != nil {
		return Price{}, err
	}
	core, okCore := unitPrice(skus, series, "Instance Core", m.Region)
	ram, okRAM := unitPrice(skus, series, "Instance Ram", m.Region)
	if !okCore || !okRAM {
		return Price{}, &NoPrice{fmt.Sprintf("the Cloud Billing Catalog API has no on-demand %s core and RAM prices in %s", series, m.Region)}
	}
	return Price{USDPerHour: m.VCPUs*core + m.MemoryGiB*ram,
		Source: fmt.Sprintf("Cloud Billing Catalog API %s on-demand, %s vCPU + RAM", m.Region, series)}, nil
}

// unitPrice finds the on-demand SKU of a series' predefined cores or RAM ("E2 Instance Core
// running in ...", "N1 Predefined Instance Ram running in ...") offered in region and returns its
// first-tier hourly unit price in USD.
func unitPrice(skus []*billingpb.Sku, series, what, region string) (float64, bool) {
	for _, s := range skus {
		d := s.GetDescription()
		if s.GetCategory().GetUsageType() != "OnDemand" || s.GetCategory().GetResourceFamily() != "Compute" ||
			!strings.HasPrefix(d, series+" ") || !strings.Contains(d, what) ||
			strings.Contains(d, "Custom") || strings.Contains(d, "Sole Tenancy") || !slices.Contains(s.GetServiceRegions(), region) {
			continue
		}
		for _, pi := range s.GetPricingInfo() {
			for _, r := range pi.GetPricingExpression().GetTieredRates() {
				if r.GetStartUsageAmount() != 0 || r.GetUnitPrice().GetCurrencyCode() != "USD" {
					continue
				}
				p := r.GetUnitPrice()
				return float64(p.GetUnits()) + float64(p.GetNanos())/1e9, true
			}
		}
	}
	return 0, false
}

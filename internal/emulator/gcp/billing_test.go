package gcp_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	billing "cloud.google.com/go/billing/apiv1"
	"cloud.google.com/go/billing/apiv1/billingpb"
	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"

	"github.com/nuv-dev/nuv/internal/cluster/gke"
	"github.com/nuv-dev/nuv/internal/emulator/gcp"
)

// catalogClient is the Cloud Billing Catalog Go client (REST) against e, with the emulator's
// Application Default Credentials.
func catalogClient(t *testing.T, e *testEmulator, opts ...option.ClientOption) *billing.CloudCatalogClient {
	t.Helper()
	creds, _, err := gke.Credentials(context.Background(), e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	c, err := billing.NewCloudCatalogRESTClient(context.Background(), append([]option.ClientOption{option.WithEndpoint(e.URL), option.WithAuthCredentials(creds)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func listAll(c *billing.CloudCatalogClient, req *billingpb.ListSkusRequest) ([]*billingpb.Sku, error) {
	it := c.ListSkus(context.Background(), req)
	var out []*billingpb.Sku
	for {
		s, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
}

// TestBillingCatalogListSkus reads Compute Engine's SKUs through the official client: every
// page once, each SKU a series' core or RAM in one region with a USD hourly rate; another
// service, another currency or a call without a token fail with Google's codes.
func TestBillingCatalogListSkus(t *testing.T) {
	e := startEmulator(t, "", gcp.Options{})
	c := catalogClient(t, e)
	tests := []struct {
		name     string
		req      *billingpb.ListSkusRequest
		wantN    int
		wantCode codes.Code
	}{
		// 4 regions x 10 series x {core, RAM} x {on demand, preemptible}.
		{name: "all, one page", req: &billingpb.ListSkusRequest{Parent: gcp.ComputeService, CurrencyCode: "USD"}, wantN: 160},
		{name: "all, pages of 7", req: &billingpb.ListSkusRequest{Parent: gcp.ComputeService, PageSize: 7}, wantN: 160},
		{name: "another service", req: &billingpb.ListSkusRequest{Parent: "services/0000-0000-0000"}, wantCode: codes.NotFound},
		{name: "another currency", req: &billingpb.ListSkusRequest{Parent: gcp.ComputeService, CurrencyCode: "EUR"}, wantCode: codes.InvalidArgument},
		{name: "a bad page token", req: &billingpb.ListSkusRequest{Parent: gcp.ComputeService, PageToken: "nope"}, wantCode: codes.InvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			skus, err := listAll(c, tc.req)
			if tc.wantCode != codes.OK {
				var ae *apierror.APIError
				if !errors.As(err, &ae) || ae.GRPCStatus().Code() != tc.wantCode {
					t.Fatalf("err = %v, want %v", err, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, s := range skus {
				if seen[s.GetSkuId()] {
					t.Fatalf("SKU %s came twice", s.GetSkuId())
				}
				seen[s.GetSkuId()] = true
				r := s.GetPricingInfo()[0].GetPricingExpression().GetTieredRates()[0].GetUnitPrice()
				if len(s.GetServiceRegions()) != 1 || r.GetCurrencyCode() != "USD" || r.GetNanos() <= 0 || !strings.Contains(s.GetDescription(), "Instance") {
					t.Errorf("SKU %+v", s)
				}
			}
			if len(skus) != tc.wantN {
				t.Fatalf("%d SKUs, want %d", len(skus), tc.wantN)
			}
		})
	}

	// Without credentials: UNAUTHENTICATED.
	anon, err := billing.NewCloudCatalogRESTClient(context.Background(), option.WithEndpoint(e.URL), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	_, err = listAll(anon, &billingpb.ListSkusRequest{Parent: gcp.ComputeService})
	var ae *apierror.APIError
	if !errors.As(err, &ae) || ae.GRPCStatus().Code() != codes.Unauthenticated {
		t.Fatalf("without a token: %v, want UNAUTHENTICATED", err)
	}
	// A method the emulator does not serve says so.
	_, err = anon.ListServices(context.Background(), &billingpb.ListServicesRequest{}).Next()
	if !errors.As(err, &ae) || ae.GRPCStatus().Code() != codes.Unimplemented {
		t.Fatalf("ListServices: %v, want UNIMPLEMENTED", err)
	}
}

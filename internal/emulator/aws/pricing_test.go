package aws

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/aws/smithy-go"
)

// pricingClient is the AWS SDK's Price List client against e, signed for us-east-1 as the real
// API's endpoint is.
func pricingClient(e *testEmulator) *pricing.Client {
	cfg := e.Cfg.Copy()
	cfg.Region = "us-east-1"
	return pricing.NewFromConfig(cfg, func(o *pricing.Options) { o.RetryMaxAttempts = 1 })
}

func termMatch(kv ...string) []types.Filter {
	var out []types.Filter
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, types.Filter{Type: types.FilterTypeTermMatch, Field: aws.String(kv[i]), Value: aws.String(kv[i+1])})
	}
	return out
}

// onDemand reads the hourly USD price and the attributes of a price list document.
func onDemand(t *testing.T, doc string) (string, map[string]string) {
	t.Helper()
	var p struct {
		Product struct {
			Attributes map[string]string `json:"attributes"`
		} `json:"product"`
		Terms struct {
			OnDemand map[string]struct {
				PriceDimensions map[string]struct {
					Unit         string            `json:"unit"`
					PricePerUnit map[string]string `json:"pricePerUnit"`
				} `json:"priceDimensions"`
			} `json:"OnDemand"`
		} `json:"terms"`
	}
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		t.Fatalf("price list document: %v\n%s", err, doc)
	}
	for _, term := range p.Terms.OnDemand {
		for _, d := range term.PriceDimensions {
			if d.Unit != "Hrs" {
				t.Fatalf("unit %q, want Hrs", d.Unit)
			}
			return d.PricePerUnit["USD"], p.Product.Attributes
		}
	}
	t.Fatalf("no on-demand term in %s", doc)
	return "", nil
}

// TestPricingGetProducts runs the SDK's GetProducts against the emulator's price list: the
// filters nuv sends select exactly one product, each attribute narrows, and what the emulator does
// not serve fails with the API's error codes.
func TestPricingGetProducts(t *testing.T) {
	e := startEmulator(t, "", 0)
	c := pricingClient(e)
	ctx := context.Background()
	linux := []string{"operatingSystem", "Linux", "tenancy", "Shared", "capacitystatus", "Used", "preInstalledSw", "NA"}
	tests := []struct {
		name     string
		service  string
		filters  []types.Filter
		max      int32
		wantN    int
		wantUSD  string
		wantCode string
	}{
		{name: "m5.large us-east-1 Linux", filters: termMatch(append([]string{"instanceType", "m5.large", "regionCode", "us-east-1"}, linux...)...), wantN: 1, wantUSD: "0.0960000000"},
		{name: "m5.large eu-west-1 Linux", filters: termMatch(append([]string{"instanceType", "m5.large", "regionCode", "eu-west-1"}, linux...)...), wantN: 1, wantUSD: "0.1075200000"},
		{name: "t3.medium (burstable, by memory)", filters: termMatch(append([]string{"instanceType", "t3.medium", "regionCode", "us-east-1"}, linux...)...), wantN: 1, wantUSD: "0.0416000000"},
		{name: "case of values ignored", filters: termMatch("instanceType", "M5.LARGE", "regionCode", "us-east-1", "operatingSystem", "linux", "tenancy", "shared", "capacitystatus", "used", "preInstalledSw", "na"), wantN: 1, wantUSD: "0.0960000000"},
		{name: "Windows costs more", filters: termMatch("instanceType", "m5.large", "regionCode", "us-east-1", "operatingSystem", "Windows", "tenancy", "Shared", "capacitystatus", "Used"), wantN: 1, wantUSD: "0.1420000000"},
		{name: "without tenancy and capacity: four products", filters: termMatch("instanceType", "m5.large", "regionCode", "us-east-1", "operatingSystem", "Linux"), wantN: 4},
		{name: "unknown instance type: no product", filters: termMatch("instanceType", "m5.huge", "regionCode", "us-east-1"), wantN: 0},
		{name: "region without a price list: no product", filters: termMatch("instanceType", "m5.large", "regionCode", "mars-north-1"), wantN: 0},
		{name: "unknown filter field", filters: termMatch("instanceTypo", "m5.large"), wantCode: "InvalidParameterException"},
		{name: "filter type not served", filters: []types.Filter{{Type: types.FilterTypeContains, Field: aws.String("instanceType"), Value: aws.String("m5")}}, wantCode: "InvalidParameterException"},
		{name: "another service", service: "AmazonRDS", filters: termMatch("instanceType", "db.m5.large"), wantCode: "NotFoundException"},
		{name: "MaxResults over 100", filters: termMatch("instanceType", "m5.large"), max: 101, wantCode: "InvalidParameterException"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := "AmazonEC2"
			if tc.service != "" {
				svc = tc.service
			}
			in := &pricing.GetProductsInput{ServiceCode: aws.String(svc), Filters: tc.filters, FormatVersion: aws.String("aws_v1")}
			if tc.max != 0 {
				in.MaxResults = aws.Int32(tc.max)
			}
			out, err := c.GetProducts(ctx, in)
			if tc.wantCode != "" {
				var ae smithy.APIError
				if !errors.As(err, &ae) || ae.ErrorCode() != tc.wantCode || ae.ErrorMessage() == "" {
					t.Fatalf("err = %v, want %s with a message", err, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(out.PriceList) != tc.wantN {
				t.Fatalf("%d products, want %d", len(out.PriceList), tc.wantN)
			}
			for _, doc := range out.PriceList {
				usd, attrs := onDemand(t, doc)
				if tc.wantUSD != "" && usd != tc.wantUSD {
					t.Errorf("USD %s, want %s", usd, tc.wantUSD)
				}
				for _, f := range tc.filters {
					if !strings.EqualFold(attrs[*f.Field], *f.Value) {
						t.Errorf("product %s=%q does not match the filter %s=%q", *f.Field, attrs[*f.Field], *f.Field, *f.Value)
					}
				}
			}
		})
	}
}

// TestPricingPages: the SDK's paginator reads every product of a query in pages, each once; a
// NextToken of another query is refused; operations the emulator does not serve say so.
func TestPricingPages(t *testing.T) {
	e := startEmulator(t, "", 0)
	c := pricingClient(e)
	ctx := context.Background()
	in := &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), Filters: termMatch("instanceType", "m5.large"), MaxResults: aws.Int32(7)}
	pages := pricing.NewGetProductsPaginator(c, in)
	seen := map[string]bool{}
	n := 0
	var token string
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.PriceList) > 7 {
			t.Fatalf("page of %d products, MaxResults 7", len(out.PriceList))
		}
		if out.NextToken != nil && token == "" {
			token = *out.NextToken
		}
		n++
		for _, doc := range out.PriceList {
			if seen[doc] {
				t.Fatal("a product came twice")
			}
			seen[doc] = true
		}
	}
	// 6 regions x 2 operating systems x 2 tenancies x 2 capacity statuses.
	if len(seen) != 48 || n != 7 {
		t.Fatalf("%d products in %d pages, want 48 in 7", len(seen), n)
	}
	_, err := c.GetProducts(ctx, &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), Filters: termMatch("instanceType", "c5.large"), NextToken: aws.String(token)})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "InvalidNextTokenException" {
		t.Fatalf("another query's NextToken: %v, want InvalidNextTokenException", err)
	}
	_, err = c.DescribeServices(ctx, &pricing.DescribeServicesInput{})
	if !errors.As(err, &ae) || ae.ErrorCode() != "UnknownOperationException" || !strings.Contains(ae.ErrorMessage(), "DescribeServices") {
		t.Fatalf("DescribeServices: %v, want UnknownOperationException naming it", err)
	}
}

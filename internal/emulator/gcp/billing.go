package gcp

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"cloud.google.com/go/billing/apiv1/billingpb"
	"google.golang.org/genproto/googleapis/type/money"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// The Cloud Billing Catalog API's ListSkus in REST (GET /v1/services/SERVICE/skus, what the Go
// client cloud.google.com/go/billing/apiv1 calls over REST, and what `nuv emulator env` exports as
// CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDBILLING). The emulator's catalogue is Compute Engine's
// predefined vCPU and memory SKUs of the series it offers, on-demand and preemptible, one SKU per
// series, resource and region, with plausible prices it makes up (nobody's price list). Calls need
// the emulator's bearer token like the GKE API. Another service, another currency or another method
// fails with Google's error naming what the emulator serves.

// ComputeService is Compute Engine's service name in the catalogue.
const ComputeService = "services/6F81-5844-456A"

const skuMaxPage = 5000

// seriesRates are the emulator's us-central1 on-demand prices of a series: per vCPU hour and per
// GiB hour, and the words of its SKU descriptions ("N1 Predefined", "N2D AMD").
var seriesRates = lazy.Value[map[string]struct {
	core, ram float64
	label     string
}]{New: func() map[string]struct {
	core, ram float64
	label     string
} {
	type r = struct {
		core, ram float64
		label     string
	}
	return map[string]r{
		"e2": {0.0218, 0.0029, "E2"}, "n1": {0.0316, 0.0042, "N1 Predefined"}, "n2": {0.0316, 0.0042, "N2"},
		"n2d": {0.0275, 0.0037, "N2D AMD"}, "n4": {0.0301, 0.0040, "N4"}, "c2d": {0.0338, 0.0045, "C2D AMD"},
		"c3": {0.0348, 0.0047, "C3"}, "c4": {0.0365, 0.0049, "C4"}, "t2d": {0.0275, 0.0037, "T2D AMD"}, "g2": {0.0250, 0.0029, "G2"},
	}
}}

// regionPlace is each region's place in SKU descriptions and its price factor against us-central1.
var regionPlace = lazy.Value[map[string]struct {
	place  string
	factor float64
}]{New: func() map[string]struct {
	place  string
	factor float64
} {
	type p = struct {
		place  string
		factor float64
	}
	return map[string]p{"us-central1": {"Iowa", 1}, "us-east1": {"South Carolina", 1}, "europe-west1": {"Belgium", 1.1}, "asia-east1": {"Taiwan", 1.16}}
}}

// skuCatalog is every SKU, in a stable order.
var skuCatalog = lazy.Value[[]*billingpb.Sku]{New: func() []*billingpb.Sku {
	var out []*billingpb.Sku
	rates, places := seriesRates.Get(), regionPlace.Get()
	var series, regs []string
	for k := range rates {
		series = append(series, k)
	}
	for k := range places {
		regs = append(regs, k)
	}
	sort.Strings(series)
	sort.Strings(regs)
	for _, region := range regs {
		pl := places[region]
		for _, se := range series {
			rt := rates[se]
			for _, res := range []struct {
				what, unit, unitDesc, base string
				price                      float64
			}{{"Core", "h", "hour", "s", rt.core}, {"Ram", "GiBy.h", "gibibyte hour", "By.s", rt.ram}} {
				for _, usage := range []string{"OnDemand", "Preemptible"} {
					price := res.price * pl.factor
					desc := fmt.Sprintf("%s Instance %s running in %s", rt.label, res.what, pl.place)
					if usage == "Preemptible" {
						price *= 0.3
						desc = "Spot Preemptible " + desc
					}
					id := skuID(region, se, res.what, usage)
					units := int64(price)
					out = append(out, &billingpb.Sku{
						Name: ComputeService + "/skus/" + id, SkuId: id, Description: desc,
						Category:       &billingpb.Category{ServiceDisplayName: "Compute Engine", ResourceFamily: "Compute", ResourceGroup: strings.ToUpper(se) + res.what, UsageType: usage},
						ServiceRegions: []string{region}, ServiceProviderName: "Google",
						PricingInfo: []*billingpb.PricingInfo{{PricingExpression: &billingpb.PricingExpression{
							UsageUnit: res.unit, UsageUnitDescription: res.unitDesc, BaseUnit: res.base,
							BaseUnitDescription: "second", BaseUnitConversionFactor: 3600, DisplayQuantity: 1,
							TieredRates: []*billingpb.PricingExpression_TierRate{{StartUsageAmount: 0,
								UnitPrice: &money.Money{CurrencyCode: "USD", Units: units, Nanos: int32((price - float64(units)) * 1e9)}}},
						}, CurrencyConversionRate: 1}},
					})
				}
			}
		}
	}
	return out
}}

// skuID is a stable SKU id made from what the SKU prices (XXXX-XXXX-XXXX, as the catalogue's).
func skuID(parts ...string) string {
	h := uint64(14695981039346656037)
	for _, c := range strings.Join(parts, "|") {
		h = (h ^ uint64(c)) * 1099511628211
	}
	s := strings.ToUpper(strconv.FormatUint(h, 16))
	for len(s) < 12 {
		s = "0" + s
	}
	return s[:4] + "-" + s[4:8] + "-" + s[8:12]
}

// billing serves the Cloud Billing Catalog API under /v1/services/.
func (s *Server) billing(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/v1/")
	parent, ok := strings.CutSuffix(rest, "/skus")
	if r.Method != http.MethodGet || !ok || strings.Count(parent, "/") != 1 {
		restError(w, status.Errorf(codes.Unimplemented, "nuv emulator does not implement %s %s of the Cloud Billing Catalog API (it serves GET /v1/services/SERVICE/skus)", r.Method, r.URL.Path))
		return
	}
	if _, err := s.gate(r.Context(), "ListSkus", r.Header.Get("Authorization"), r.URL.Path); err != nil {
		restError(w, err)
		return
	}
	if parent != ComputeService {
		restError(w, status.Errorf(codes.NotFound, "Service %s not found (nuv emulator's catalogue holds Compute Engine, %s, only)", parent, ComputeService))
		return
	}
	q := r.URL.Query()
	for k := range q {
		switch k {
		case "currencyCode", "pageSize", "pageToken", "$alt", "startTime", "endTime":
		default:
			restError(w, status.Errorf(codes.InvalidArgument, "Invalid JSON payload received. Unknown name %q: Cannot bind query parameter. Field %q could not be found in request message.", k, k))
			return
		}
	}
	if c := q.Get("currencyCode"); c != "" && c != "USD" {
		restError(w, status.Errorf(codes.InvalidArgument, "currencyCode %s: nuv emulator's catalogue is in USD only", c))
		return
	}
	if q.Get("startTime") != "" || q.Get("endTime") != "" {
		restError(w, status.Errorf(codes.Unimplemented, "nuv emulator serves the current prices only (startTime/endTime asked)"))
		return
	}
	size := skuMaxPage
	if v := q.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			restError(w, status.Errorf(codes.InvalidArgument, "pageSize %q is not a count", v))
			return
		}
		if n > 0 && n < skuMaxPage {
			size = n
		}
	}
	all := skuCatalog.Get()
	start := 0
	if tok := q.Get("pageToken"); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		n, err2 := strconv.Atoi(strings.TrimPrefix(string(b), "skus:"))
		if err != nil || err2 != nil || !strings.HasPrefix(string(b), "skus:") || n < 0 || n > len(all) {
			restError(w, status.Errorf(codes.InvalidArgument, "Invalid page token %q", tok))
			return
		}
		start = n
	}
	end := min(start+size, len(all))
	resp := &billingpb.ListSkusResponse{Skus: all[start:end]}
	if end < len(all) {
		resp.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte("skus:" + strconv.Itoa(end)))
	}
	b, err := protojson.Marshal(resp)
	if err != nil {
		restError(w, status.Errorf(codes.Internal, "encode ListSkus: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(b)
}

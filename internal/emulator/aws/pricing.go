package aws

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// The Price List Query API (service "pricing", awsJson1_1: POST / with X-Amz-Target
// AWSPriceListService.OPERATION), as the AWS SDK's pricing client calls it. The emulator serves
// GetProducts of service AmazonEC2 over a small catalogue of its own: every instance type of its
// EC2 catalogue in a few regions, Linux and Windows, shared and dedicated tenancy, used and
// reserved-unused capacity, with plausible prices the emulator makes up (they are nobody's price
// list). Filters are TERM_MATCH on the products' attributes; an attribute no product has, another
// filter type, another service or another operation fail with the API's error, naming what the
// emulator serves.

const pricingTargetPrefix = "AWSPriceListService."

// pricingRegion is a region of the emulated price list: its location name, its usage-type
// prefix and its price factor against us-east-1.
type pricingRegion struct {
	location, prefix string
	factor           float64
}

var pricingRegions = lazy.Value[map[string]pricingRegion]{New: func() map[string]pricingRegion {
	return map[string]pricingRegion{
		"us-east-1":      {"US East (N. Virginia)", "", 1},
		"us-east-2":      {"US East (Ohio)", "USE2-", 1},
		"us-west-2":      {"US West (Oregon)", "USW2-", 1},
		"eu-west-1":      {"EU (Ireland)", "EU-", 1.12},
		"eu-central-1":   {"EU (Frankfurt)", "EUC1-", 1.19},
		"ap-northeast-1": {"Asia Pacific (Tokyo)", "APN1-", 1.28},
	}
}}

// familyPrice is the emulator's us-east-1 Linux price of a family's "large" size (per GiB of
// memory for the burstable families, whose sizes differ in memory only).
var familyPrice = lazy.Value[map[string]float64]{New: func() map[string]float64 {
	return map[string]float64{
		"t3": 0.0104, "t3a": 0.0094, "t4g": 0.0084, // per GiB
		"m5": 0.096, "m6i": 0.096, "m7i": 0.1008, "m6a": 0.0864, "m6g": 0.077, "m7g": 0.0816,
		"c5": 0.085, "c6i": 0.085, "c7i": 0.0893, "c6g": 0.068, "c7g": 0.0725,
		"r5": 0.126, "r6i": 0.126, "r7i": 0.1323, "r6g": 0.1008,
	}
}}

// priceProduct is one product of the emulated price list: its attributes and hourly price.
type priceProduct struct {
	sku   string
	attrs map[string]string
	usd   float64
}

// priceCatalog is every product, in a stable order.
var priceCatalog = lazy.Value[[]priceProduct]{New: func() []priceProduct {
	var out []priceProduct
	fams := familyPrice.Get()
	for _, region := range sortedKeys(pricingRegions.Get()) {
		reg := pricingRegions.Get()[region]
		for _, fam := range sortedKeys(instanceCatalog.Get()) {
			f := instanceCatalog.Get()[fam]
			for _, size := range sortedKeys(f.sizes) {
				cpus, mib := f.sizes[size][0], f.sizes[size][1]
				base := fams[fam] * float64(cpus) / 2
				if strings.HasPrefix(fam, "t") {
					base = fams[fam] * float64(mib) / 1024
				}
				typ := fam + "." + size
				for _, os := range []string{"Linux", "Windows"} {
					for _, tenancy := range []string{"Shared", "Dedicated"} {
						for _, capStatus := range []string{"Used", "UnusedCapacityReservation"} {
							usd := base * reg.factor
							if os == "Windows" {
								usd += 0.046 * float64(cpus) / 2
							}
							if tenancy == "Dedicated" {
								usd *= 1.1
							}
							usage := reg.prefix + "BoxUsage:" + typ
							if tenancy == "Dedicated" {
								usage = reg.prefix + "DedicatedUsage:" + typ
							}
							if capStatus != "Used" {
								usage = reg.prefix + "UnusedBox:" + typ
							}
							attrs := map[string]string{
								"servicecode": "AmazonEC2", "productFamily": "Compute Instance", "instanceType": typ, "instanceFamily": instanceFamilyName(fam),
								"vcpu": strconv.Itoa(cpus), "memory": strconv.FormatFloat(float64(mib)/1024, 'f', -1, 64) + " GiB",
								"regionCode": region, "location": reg.location, "locationType": "AWS Region",
								"operatingSystem": os, "tenancy": tenancy, "capacitystatus": capStatus, "preInstalledSw": "NA",
								"licenseModel": "No License required", "usagetype": usage, "operation": "RunInstances",
								"processorArchitecture": archName(f.arch), "servicename": "Amazon Elastic Compute Cloud",
							}
							out = append(out, priceProduct{sku: productSKU(attrs), attrs: attrs, usd: usd})
						}
					}
				}
			}
		}
	}
	return out
}}

func instanceFamilyName(fam string) string {
	switch fam[0] {
	case 't', 'm':
		return "General purpose"
	case 'c':
		return "Compute optimized"
	}
	return "Memory optimized"
}

func archName(arch string) string {
	if arch == "arm64" {
		return "64-bit (Arm)"
	}
	return "64-bit"
}

// productSKU is a stable identifier of a product made from its attributes.
func productSKU(attrs map[string]string) string {
	h := sha256.New()
	for _, k := range sortedKeys(attrs) {
		fmt.Fprintf(h, "%s=%s\n", k, attrs[k])
	}
	return strings.ToUpper(hex.EncodeToString(h.Sum(nil))[:16])
}

// priceAttributes are the attribute names products carry (what a filter may name).
func priceAttributes() []string {
	seen := map[string]bool{}
	for _, p := range priceCatalog.Get() {
		for k := range p.attrs {
			seen[k] = true
		}
	}
	return sortedKeys(seen)
}

// pricingFilter and getProductsInput are GetProducts' request in awsJson1_1.
type pricingFilter struct {
	Type  string `json:"Type"`
	Field string `json:"Field"`
	Value string `json:"Value"`
}

type getProductsInput struct {
	ServiceCode   string          `json:"ServiceCode"`
	Filters       []pricingFilter `json:"Filters"`
	FormatVersion string          `json:"FormatVersion"`
	NextToken     string          `json:"NextToken"`
	MaxResults    *int            `json:"MaxResults"`
}

type getProductsOutput struct {
	FormatVersion string   `json:"FormatVersion"`
	PriceList     []string `json:"PriceList"`
	NextToken     string   `json:"NextToken,omitempty"`
}

// routePricing finds the Price List operation of rq (its X-Amz-Target).
func (s *Server) routePricing(rq *request) (string, func() (any, error), *apiError) {
	target := rq.http.Header.Get("X-Amz-Target")
	op, ok := strings.CutPrefix(target, pricingTargetPrefix)
	if !ok || rq.http.Method != http.MethodPost {
		return "", nil, errf(400, "UnknownOperationException", "nuv emulator serves the Price List Query API as POST / with X-Amz-Target %sOPERATION (got %s %q)", pricingTargetPrefix, rq.http.Method, target)
	}
	if op != "GetProducts" {
		return op, nil, errf(400, "UnknownOperationException", "nuv emulator does not implement the Price List operation %s (it serves GetProducts of AmazonEC2)", op)
	}
	var in getProductsInput
	dec := json.NewDecoder(strings.NewReader(string(rq.body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return op, nil, errf(400, "SerializationException", "GetProducts: the request body is not a GetProductsRequest: %v", err)
	}
	return op, func() (any, error) { return getProducts(in) }, nil
}

// getProducts answers GetProducts: the products every filter matches, MaxResults (1-100, 100 by
// default) at a time, with a NextToken for the rest.
func getProducts(in getProductsInput) (any, error) {
	if in.ServiceCode == "" {
		return nil, errf(400, "InvalidParameterException", "Input provided is not valid: ServiceCode is required")
	}
	if in.ServiceCode != "AmazonEC2" {
		return nil, errf(400, "NotFoundException", "The requested resource could not be found: service %s (nuv emulator's price list holds AmazonEC2 only)", in.ServiceCode)
	}
	if in.FormatVersion != "" && in.FormatVersion != "aws_v1" {
		return nil, errf(400, "InvalidParameterException", "Input provided is not valid: FormatVersion %q (the only format is aws_v1)", in.FormatVersion)
	}
	limit := 100
	if in.MaxResults != nil {
		if *in.MaxResults < 1 || *in.MaxResults > 100 {
			return nil, errf(400, "InvalidParameterException", "Input provided is not valid: MaxResults %d is not between 1 and 100", *in.MaxResults)
		}
		limit = *in.MaxResults
	}
	attrs := priceAttributes()
	for _, f := range in.Filters {
		if f.Type != "TERM_MATCH" {
			return nil, errf(400, "InvalidParameterException", "Input provided is not valid: filter type %q on %s (nuv emulator implements TERM_MATCH only)", f.Type, f.Field)
		}
		if !containsFold(attrs, f.Field) {
			return nil, errf(400, "InvalidParameterException", "Input provided is not valid: %s is not an attribute of AmazonEC2 products (they have: %s)", f.Field, strings.Join(attrs, ", "))
		}
	}
	var match []priceProduct
	for _, p := range priceCatalog.Get() {
		if productMatches(p, in.Filters) {
			match = append(match, p)
		}
	}
	start := 0
	query := filterDigest(in)
	if in.NextToken != "" {
		n, ok := parsePriceToken(in.NextToken, query)
		if !ok || n > len(match) {
			return nil, errf(400, "InvalidNextTokenException", "The pagination token is invalid (it belongs to another query, or was made up)")
		}
		start = n
	}
	end := min(start+limit, len(match))
	out := getProductsOutput{FormatVersion: "aws_v1", PriceList: []string{}}
	for _, p := range match[start:end] {
		out.PriceList = append(out.PriceList, p.document())
	}
	if end < len(match) {
		out.NextToken = priceToken(end, query)
	}
	return out, nil
}

func productMatches(p priceProduct, filters []pricingFilter) bool {
	for _, f := range filters {
		v, ok := p.attrs[f.Field]
		if !ok {
			for k, x := range p.attrs {
				if strings.EqualFold(k, f.Field) {
					v, ok = x, true
				}
			}
		}
		if !ok || !strings.EqualFold(v, f.Value) {
			return false
		}
	}
	return true
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// filterDigest identifies a query, so a NextToken serves only the query that made it.
func filterDigest(in getProductsInput) string {
	fs := make([]string, len(in.Filters))
	for i, f := range in.Filters {
		fs[i] = strings.ToLower(f.Field) + "=" + strings.ToLower(f.Value)
	}
	sort.Strings(fs)
	sum := sha256.Sum256([]byte(in.ServiceCode + "|" + strings.Join(fs, "&")))
	return hex.EncodeToString(sum[:6])
}

func priceToken(offset int, query string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(query + ":" + strconv.Itoa(offset)))
}

func parsePriceToken(tok, query string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, false
	}
	q, n, ok := strings.Cut(string(b), ":")
	off, err := strconv.Atoi(n)
	return off, ok && err == nil && q == query && off >= 0
}

// document is the product as the Price List API gives it: a JSON string with the product, its
// service code and its on-demand term.
func (p priceProduct) document() string {
	term := p.sku + ".OD" + p.sku[:6]
	doc := map[string]any{
		"product":         map[string]any{"productFamily": p.attrs["productFamily"], "attributes": p.attrs, "sku": p.sku},
		"serviceCode":     "AmazonEC2",
		"version":         "20261101000000",
		"publicationDate": "2026-11-01T00:00:00Z",
		"terms": map[string]any{"OnDemand": map[string]any{term: map[string]any{
			"offerTermCode": "OD" + p.sku[:6], "sku": p.sku, "effectiveDate": "2026-11-01T00:00:00Z", "termAttributes": map[string]string{},
			"priceDimensions": map[string]any{term + ".HR": map[string]any{
				"rateCode": term + ".HR", "unit": "Hrs", "beginRange": "0", "endRange": "Inf", "appliesTo": []string{},
				"description":  fmt.Sprintf("$%.4f per On Demand %s %s Instance Hour", p.usd, p.attrs["operatingSystem"], p.attrs["instanceType"]),
				"pricePerUnit": map[string]string{"USD": strconv.FormatFloat(p.usd, 'f', 10, 64)},
			}},
		}}},
	}
	b, _ := json.Marshal(doc)
	return string(b)
}

package azure

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// The Retail Prices API (GET /api/retail/prices, anonymous; on prices.azure.com for Azure, on the
// emulator's own address here, which `nuv emulator env` exports as NUV_AZURE_PRICES). The emulator
// answers from a small catalogue of its own: each VM size it offers in each region, as the
// pay-as-you-go Linux and Windows meters, the Spot and Low Priority meters and a one-year
// reservation, with plausible prices it makes up (nobody's price list). $filter takes the API's
// fields compared with eq and joined by and; another operator, an unknown field or a currency
// other than USD is answered 400 naming what the emulator serves. Pages hold 100 items and link to
// the next with NextPageLink ($skip), as the API's do.

// RetailPricesPath is the path of the Retail Prices API.
const RetailPricesPath = "/api/retail/prices"

const retailPageSize = 100

// retailBase is the emulator's eastus Linux price of each VM size, in USD per hour.
var retailBase = lazy.Value[map[string]float64]{New: func() map[string]float64 {
	return map[string]float64{
		"Standard_B2s": 0.0416, "Standard_B4ms": 0.166,
		"Standard_D2s_v3": 0.096, "Standard_D4s_v3": 0.192, "Standard_D8s_v3": 0.384,
		"Standard_D2s_v5": 0.096, "Standard_D4s_v5": 0.192, "Standard_D2as_v5": 0.086, "Standard_D4as_v5": 0.172,
		"Standard_DS2_v2": 0.146, "Standard_DS3_v2": 0.293, "Standard_E4s_v5": 0.252, "Standard_F4s_v2": 0.169,
		"Standard_NC6s_v3": 3.06,
	}
}}

// retailFactor is each region's price against eastus.
var retailFactor = lazy.Value[map[string]float64]{New: func() map[string]float64 {
	return map[string]float64{"eastus": 1, "eastus2": 1, "centralus": 1.05, "westus": 1.1, "westus2": 1, "northeurope": 1.08,
		"westeurope": 1.15, "uksouth": 1.13, "southeastasia": 1.2, "japaneast": 1.27}
}}

// retailItem is one price of the Retail Prices API.
type retailItem struct {
	CurrencyCode         string  `json:"currencyCode"`
	TierMinimumUnits     float64 `json:"tierMinimumUnits"`
	ReservationTerm      string  `json:"reservationTerm,omitempty"`
	RetailPrice          float64 `json:"retailPrice"`
	UnitPrice            float64 `json:"unitPrice"`
	ArmRegionName        string  `json:"armRegionName"`
	Location             string  `json:"location"`
	EffectiveStartDate   string  `json:"effectiveStartDate"`
	MeterID              string  `json:"meterId"`
	MeterName            string  `json:"meterName"`
	ProductID            string  `json:"productId"`
	SkuID                string  `json:"skuId"`
	ProductName          string  `json:"productName"`
	SkuName              string  `json:"skuName"`
	ServiceName          string  `json:"serviceName"`
	ServiceID            string  `json:"serviceId"`
	ServiceFamily        string  `json:"serviceFamily"`
	UnitOfMeasure        string  `json:"unitOfMeasure"`
	Type                 string  `json:"type"`
	IsPrimaryMeterRegion bool    `json:"isPrimaryMeterRegion"`
	ArmSkuName           string  `json:"armSkuName"`
}

// retailFields are the fields $filter may name, with how to read them from an item.
var retailFields = lazy.Value[map[string]func(retailItem) string]{New: func() map[string]func(retailItem) string {
	return map[string]func(retailItem) string{
		"armRegionName": func(i retailItem) string { return i.ArmRegionName },
		"location":      func(i retailItem) string { return i.Location },
		"meterId":       func(i retailItem) string { return i.MeterID },
		"meterName":     func(i retailItem) string { return i.MeterName },
		"productId":     func(i retailItem) string { return i.ProductID },
		"skuId":         func(i retailItem) string { return i.SkuID },
		"productName":   func(i retailItem) string { return i.ProductName },
		"skuName":       func(i retailItem) string { return i.SkuName },
		"serviceName":   func(i retailItem) string { return i.ServiceName },
		"serviceId":     func(i retailItem) string { return i.ServiceID },
		"serviceFamily": func(i retailItem) string { return i.ServiceFamily },
		"priceType":     func(i retailItem) string { return i.Type },
		"armSkuName":    func(i retailItem) string { return i.ArmSkuName },
	}
}}

// retailCatalog is every price, in a stable order.
var retailCatalog = lazy.Value[[]retailItem]{New: func() []retailItem {
	var out []retailItem
	sizes := retailBase.Get()
	names := make([]string, 0, len(sizes))
	for n := range sizes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, reg := range Regions {
		for _, size := range names {
			if _, ok := vmSizeIn(size, reg.Name); !ok {
				continue
			}
			linux := round4(sizes[size] * retailFactor.Get()[reg.Name])
			short := strings.ReplaceAll(strings.TrimPrefix(size, "Standard_"), "_", " ")
			series := seriesOf(short)
			item := func(sku, product, typ, term string, price float64) retailItem {
				id := retailID(reg.Name, size, sku, product, typ)
				return retailItem{CurrencyCode: "USD", ReservationTerm: term, RetailPrice: price, UnitPrice: price,
					ArmRegionName: reg.Name, Location: reg.Display, EffectiveStartDate: "2026-11-01T00:00:00Z",
					MeterID: id[:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:32], MeterName: sku,
					ProductID: "DZH" + strings.ToUpper(id[:9]), SkuID: "DZH" + strings.ToUpper(id[:9]) + "/" + strings.ToUpper(id[9:13]),
					ProductName: product, SkuName: sku, ServiceName: "Virtual Machines", ServiceID: "DZH313Z7MMC8", ServiceFamily: "Compute",
					UnitOfMeasure: "1 Hour", Type: typ, IsPrimaryMeterRegion: true, ArmSkuName: size}
			}
			product := "Virtual Machines " + series + " Series"
			out = append(out,
				item(short, product, "Consumption", "", linux),
				item(short, product+" Windows", "Consumption", "", round4(linux+0.046*float64(cpusOf(short))/2)),
				item(short+" Spot", product, "Consumption", "", round4(linux*0.2)),
				item(short+" Low Priority", product, "Consumption", "", round4(linux*0.2)),
				item(short, product, "Reservation", "1 Year", math.Round(linux*8760*0.62)),
			)
		}
	}
	return out
}}

func round4(v float64) float64 { return math.Round(v*10000) / 10000 }

var sizeRE = lazy.MustCompile(`^([A-Z]+)(\d+)([a-z]*)`)

// seriesOf is a size's series in product names ("D2s v3" -> "DSv3").
func seriesOf(short string) string {
	m := sizeRE.Get().FindStringSubmatch(short)
	if m == nil {
		return short
	}
	version := ""
	if _, v, ok := strings.Cut(short, " "); ok {
		version = v
	}
	return m[1] + strings.ToUpper(m[3]) + version
}

func cpusOf(short string) int {
	m := sizeRE.Get().FindStringSubmatch(short)
	if m == nil {
		return 2
	}
	n, _ := strconv.Atoi(m[2])
	return n
}

func retailID(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "|")))
	return hex.EncodeToString(sum[:])
}

// retailTerm is one "field eq 'value'" of $filter.
var retailTerm = lazy.MustCompile(`^\s*(\w+)\s+eq\s+'((?:[^']|'')*)'\s*$`)

// retailAnd separates the terms of $filter.
var retailAnd = lazy.MustCompile(`(?i)\s+and\s+`)

// retailPrices serves GET /api/retail/prices.
func (s *Server) retailPrices(w http.ResponseWriter, r *http.Request) {
	bad := func(format string, a ...any) {
		writeJSON(w, http.StatusBadRequest, map[string]any{"Error": map[string]string{"Code": "BadRequest", "Message": fmt.Sprintf(format, a...)}})
	}
	if r.Method != http.MethodGet {
		bad("The Retail Prices API is read with GET (nuv emulator)")
		return
	}
	q := r.URL.Query()
	for k := range q {
		if k != "$filter" && k != "$skip" && k != "currencyCode" && k != "api-version" {
			bad("Invalid query parameter %s (nuv emulator serves $filter, $skip, currencyCode and api-version)", k)
			return
		}
	}
	if c := q.Get("currencyCode"); c != "" && !strings.EqualFold(strings.Trim(c, "'"), "USD") {
		bad("nuv emulator carries prices in USD only (currencyCode %s)", c)
		return
	}
	type cond struct{ field, value string }
	var conds []cond
	if f := strings.TrimSpace(q.Get("$filter")); f != "" {
		for _, part := range retailAnd.Get().Split(f, -1) {
			m := retailTerm.Get().FindStringSubmatch(part)
			if m == nil {
				bad("Invalid OData parameters supplied: %q (nuv emulator implements FIELD eq 'VALUE' joined by and)", strings.TrimSpace(part))
				return
			}
			field := ""
			for k := range retailFields.Get() {
				if strings.EqualFold(k, m[1]) {
					field = k
				}
			}
			if field == "" {
				known := make([]string, 0, len(retailFields.Get()))
				for k := range retailFields.Get() {
					known = append(known, k)
				}
				sort.Strings(known)
				bad("Invalid OData parameters supplied: %s is not a field of the prices (fields: %s)", m[1], strings.Join(known, ", "))
				return
			}
			conds = append(conds, cond{field, strings.ReplaceAll(m[2], "''", "'")})
		}
	}
	skip := 0
	if v := q.Get("$skip"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			bad("Invalid OData parameters supplied: $skip %q is not a count", v)
			return
		}
		skip = n
	}
	var match []retailItem
	for _, it := range retailCatalog.Get() {
		ok := true
		for _, c := range conds {
			if !strings.EqualFold(retailFields.Get()[c.field](it), c.value) {
				ok = false
				break
			}
		}
		if ok {
			match = append(match, it)
		}
	}
	start := min(skip, len(match))
	end := min(start+retailPageSize, len(match))
	page := match[start:end]
	if page == nil {
		page = []retailItem{}
	}
	var next *string
	if end < len(match) {
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("$skip", strconv.Itoa(end))
		scheme := "https"
		if r.TLS == nil {
			scheme = "http"
		}
		link := scheme + "://" + r.Host + RetailPricesPath + "?" + nq.Encode()
		next = &link
	}
	writeJSON(w, http.StatusOK, map[string]any{"BillingCurrency": "USD", "CustomerEntityId": "Default", "CustomerEntityType": "Retail",
		"Items": page, "NextPageLink": next, "Count": len(page)})
}

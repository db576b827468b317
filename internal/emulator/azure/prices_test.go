package azure

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

type retailAnswer struct {
	Status       int
	Items        []retailItem `json:"Items"`
	NextPageLink *string      `json:"NextPageLink"`
	Count        int          `json:"Count"`
	Error        struct{ Code, Message string }
}

// retailGet asks the emulator's Retail Prices API with the query q.
func (e *testEmulator) retailGet(t *testing.T, link string) retailAnswer {
	t.Helper()
	resp, err := e.HTTP.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a retailAnswer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatalf("%s: not JSON: %v", link, err)
	}
	a.Status = resp.StatusCode
	return a
}

// TestRetailPricesFilter asks the Retail Prices API what nuv asks (and more) over TLS, anonymous:
// each field of $filter narrows the items, and what the emulator does not implement is a 400
// naming it.
func TestRetailPricesFilter(t *testing.T) {
	e := startEmulator(t, "", 0)
	nuvFilter := "serviceName eq 'Virtual Machines' and armRegionName eq 'westeurope' and armSkuName eq 'Standard_D2s_v3' and priceType eq 'Consumption'"
	tests := []struct {
		name, filter string
		extra        url.Values
		wantN        int
		wantStatus   int
		wantMsg      string
		check        func(t *testing.T, items []retailItem)
	}{
		{name: "nuv's query: Linux, Windows, Spot, Low Priority", filter: nuvFilter, wantN: 4, check: func(t *testing.T, items []retailItem) {
			for _, it := range items {
				if it.SkuName == "D2s v3" && !strings.HasSuffix(it.ProductName, "Windows") && it.RetailPrice != 0.1104 {
					t.Errorf("Linux D2s v3 in westeurope: %v, want 0.1104", it.RetailPrice)
				}
				if it.UnitOfMeasure != "1 Hour" || it.CurrencyCode != "USD" || it.ArmRegionName != "westeurope" || it.Type != "Consumption" {
					t.Errorf("item %+v", it)
				}
			}
		}},
		{name: "reservations apart", filter: "armRegionName eq 'eastus' and armSkuName eq 'Standard_D2s_v3' and priceType eq 'Reservation'", wantN: 1, check: func(t *testing.T, items []retailItem) {
			if items[0].ReservationTerm != "1 Year" {
				t.Errorf("reservation term %q", items[0].ReservationTerm)
			}
		}},
		{name: "field names and values in any case", filter: "ARMREGIONNAME eq 'EastUS' AND armSkuName eq 'standard_d2s_v3' and skuName eq 'D2s v3 Spot'", wantN: 1},
		{name: "size not offered in the region", filter: "armRegionName eq 'westus' and armSkuName eq 'Standard_NC6s_v3'", wantN: 0},
		{name: "unknown size", filter: "armSkuName eq 'Standard_Z99'", wantN: 0},
		{name: "quote in a value", filter: "meterName eq 'it''s'", wantN: 0},
		{name: "unknown field", filter: "armSkuNam eq 'Standard_D2s_v3'", wantStatus: 400, wantMsg: "armSkuNam is not a field"},
		{name: "operator not implemented", filter: "contains(armSkuName, 'D2')", wantStatus: 400, wantMsg: "eq 'VALUE' joined by and"},
		{name: "or not implemented", filter: "armSkuName eq 'a' or armSkuName eq 'b'", wantStatus: 400, wantMsg: "Invalid OData"},
		{name: "another currency", filter: nuvFilter, extra: url.Values{"currencyCode": {"'EUR'"}}, wantStatus: 400, wantMsg: "USD only"},
		{name: "unknown parameter", filter: nuvFilter, extra: url.Values{"$top": {"3"}}, wantStatus: 400, wantMsg: "$top"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := url.Values{"$filter": {tc.filter}}
			for k, v := range tc.extra {
				q[k] = v
			}
			a := e.retailGet(t, e.URL+RetailPricesPath+"?"+q.Encode())
			if tc.wantStatus != 0 {
				if a.Status != tc.wantStatus || a.Error.Code != "BadRequest" || !strings.Contains(a.Error.Message, tc.wantMsg) {
					t.Fatalf("status %d error %+v, want %d with %q", a.Status, a.Error, tc.wantStatus, tc.wantMsg)
				}
				return
			}
			if a.Status != http.StatusOK || len(a.Items) != tc.wantN || a.Count != tc.wantN || a.NextPageLink != nil {
				t.Fatalf("status %d, %d items (Count %d, next %v), want %d", a.Status, len(a.Items), a.Count, a.NextPageLink, tc.wantN)
			}
			if tc.check != nil {
				tc.check(t, a.Items)
			}
		})
	}
}

// TestRetailPricesPages: a query of more than a page is read whole by following NextPageLink,
// every item once.
func TestRetailPricesPages(t *testing.T) {
	e := startEmulator(t, "", 0)
	link := e.URL + RetailPricesPath + "?" + url.Values{"$filter": {"serviceName eq 'Virtual Machines' and priceType eq 'Consumption'"}}.Encode()
	seen := map[string]bool{}
	pages := 0
	for link != "" {
		a := e.retailGet(t, link)
		if a.Status != 200 || len(a.Items) > retailPageSize {
			t.Fatalf("page %d: status %d, %d items", pages, a.Status, len(a.Items))
		}
		pages++
		for _, it := range a.Items {
			if seen[it.MeterID] {
				t.Fatalf("meter %s (%s %s) came twice", it.MeterID, it.ArmRegionName, it.SkuName)
			}
			seen[it.MeterID] = true
		}
		link = ""
		if a.NextPageLink != nil {
			link = *a.NextPageLink
		}
	}
	// 10 regions x 14 sizes, one missing in 6 regions, x 4 consumption meters.
	if want := (10*14 - 6) * 4; len(seen) != want || pages != (want+retailPageSize-1)/retailPageSize {
		t.Fatalf("%d items in %d pages, want %d", len(seen), pages, want)
	}
}

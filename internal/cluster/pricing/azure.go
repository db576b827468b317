package pricing

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster"
)

// AzurePricesURL is the Retail Prices API's own base URL.
const AzurePricesURL = "https://prices.azure.com"

// Azure reads virtual machines' pay-as-you-go prices from the Retail Prices API (anonymous, OData
// $filter on serviceName, armRegionName, armSkuName and priceType), keeping the Linux price: the
// meter that is neither Spot, Low Priority nor Windows.
type Azure struct {
	// BaseURL is the API's base URL (default AzurePricesURL; NUV_AZURE_PRICES points it at nuv's
	// emulator).
	BaseURL string
	// Client makes the requests (default http.DefaultClient).
	Client *http.Client
}

// Where is the base URL.
func (a *Azure) Where(cluster.Machines) string { return a.base() }

func (a *Azure) base() string {
	if a.BaseURL == "" {
		return AzurePricesURL
	}
	return strings.TrimSuffix(a.BaseURL, "/")
}

// azureItem is the part of a Retail Prices item nuv reads.
type azureItem struct {
	RetailPrice   float64 `json:"retailPrice"`
	CurrencyCode  string  `json:"currencyCode"`
	UnitOfMeasure string  `json:"unitOfMeasure"`
	ArmSkuName    string  `json:"armSkuName"`
	ArmRegionName string  `json:"armRegionName"`
	SkuName       string  `json:"skuName"`
	ProductName   string  `json:"productName"`
	Type          string  `json:"type"`
}

type azurePage struct {
	Items        []azureItem `json:"Items"`
	NextPageLink string      `json:"NextPageLink"`
}

// azureMaxPages bounds the pages read for one VM size (a size has a handful of meters).
const azureMaxPages = 5

// Price asks for the Consumption prices of m's VM size in m's region, following NextPageLink.
func (a *Azure) Price(ctx context.Context, m cluster.Machines) (Price, error) {
	filter := fmt.Sprintf("serviceName eq 'Virtual Machines' and armRegionName eq '%s' and armSkuName eq '%s' and priceType eq 'Consumption'",
		odataString(m.Region), odataString(m.Type))
	next := a.base() + "/api/retail/prices?" + url.Values{"$filter": {filter}}.Encode()
	client := a.Client
	if client == nil {
		client = http.DefaultClient
	}
	for range azureMaxPages {
		page, err := a.get(ctx, client, next)
		if err != nil {
			return Price{}, err
		}
		for _, it := range page.Items {
			if linuxMeter(it) && strings.EqualFold(it.ArmSkuName, m.Type) && it.UnitOfMeasure == "1 Hour" && it.CurrencyCode == "USD" {
				return Price{USDPerHour: it.RetailPrice, Source: "Azure Retail Prices API " + m.Region + " pay-as-you-go, Linux"}, nil
			}
		}
		if page.NextPageLink == "" {
			break
		}
		next = page.NextPageLink
	}
	return Price{}, &NoPrice{fmt.Sprintf("the Azure Retail Prices API has no pay-as-you-go Linux price of %s in %s", m.Type, m.Region)}
}

func (a *Azure) get(ctx context.Context, client *http.Client, u string) (*azurePage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("Azure Retail Prices API: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("Azure Retail Prices API: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("Azure Retail Prices API: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Code, Message string } `json:"Error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
			return nil, fmt.Errorf("Azure Retail Prices API: %s %s: %s", resp.Status, e.Error.Code, e.Error.Message)
		}
		return nil, fmt.Errorf("Azure Retail Prices API: %s", resp.Status)
	}
	var page azurePage
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, fmt.Errorf("Azure Retail Prices API: not a price page: %w", err)
	}
	return &page, nil
}

// linuxMeter reports whether an item is the regular Linux meter of its size: the API lists Spot,
// Low Priority and Windows meters beside it.
func linuxMeter(it azureItem) bool {
	if it.Type != "" && it.Type != "Consumption" {
		return false
	}
	return !strings.Contains(it.SkuName, "Spot") && !strings.Contains(it.SkuName, "Low Priority") && !strings.HasSuffix(it.ProductName, "Windows")
}

// odataString escapes a value for an OData string literal (” for ').
func odataString(s string) string { return strings.ReplaceAll(s, "'", "''") }

package pricing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/aws/smithy-go"

	"github.com/nuv-dev/nuv/internal/cluster"
)

// AWSPriceRegion is where the Price List Query API is asked (it serves every region's prices
// from a few endpoints; us-east-1 is one).
const AWSPriceRegion = "us-east-1"

// AWS reads EC2 on-demand prices from the Price List Query API (GetProducts of service AmazonEC2,
// Linux, shared tenancy, no pre-installed software) through the AWS SDK, with the SDK's default
// credential chain.
type AWS struct {
	// Endpoint is the API endpoint when it is not AWS's (AWS_ENDPOINT_URL_PRICING, or
	// AWS_ENDPOINT_URL: nuv's emulator); a machine's own Endpoint comes first.
	Endpoint string
	// Profile is the shared-config profile (AWS_PROFILE); "" is the default.
	Profile string

	mu      sync.Mutex
	clients map[string]*awspricing.Client
}

// Where is the endpoint asked for m.
func (a *AWS) Where(m cluster.Machines) string {
	if m.Endpoint != "" {
		return m.Endpoint
	}
	return a.Endpoint
}

func (a *AWS) client(ctx context.Context, endpoint string) (*awspricing.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.clients[endpoint]; ok {
		return c, nil
	}
	opts := []func(*config.LoadOptions) error{config.WithRegion(AWSPriceRegion), config.WithRetryMaxAttempts(1)}
	if a.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(a.Profile))
	}
	if endpoint != "" {
		opts = append(opts, config.WithBaseEndpoint(endpoint))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	c := awspricing.NewFromConfig(cfg)
	if a.clients == nil {
		a.clients = map[string]*awspricing.Client{}
	}
	a.clients[endpoint] = c
	return c, nil
}

// Price asks GetProducts for the one product of m's instance type in m's region and reads its
// on-demand hourly price in USD.
func (a *AWS) Price(ctx context.Context, m cluster.Machines) (Price, error) {
	c, err := a.client(ctx, a.Where(m))
	if err != nil {
		return Price{}, err
	}
	match := func(field, value string) types.Filter {
		return types.Filter{Type: types.FilterTypeTermMatch, Field: aws.String(field), Value: aws.String(value)}
	}
	out, err := c.GetProducts(ctx, &awspricing.GetProductsInput{
		ServiceCode:   aws.String("AmazonEC2"),
		FormatVersion: aws.String("aws_v1"),
		MaxResults:    aws.Int32(10),
		Filters: []types.Filter{
			match("instanceType", m.Type), match("regionCode", m.Region), match("operatingSystem", "Linux"),
			match("tenancy", "Shared"), match("capacitystatus", "Used"), match("preInstalledSw", "NA"),
		},
	})
	if err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return Price{}, fmt.Errorf("AWS Price List API: %s: %s", ae.ErrorCode(), ae.ErrorMessage())
		}
		return Price{}, fmt.Errorf("AWS Price List API: %w", err)
	}
	for _, doc := range out.PriceList {
		usd, err := onDemandUSD(doc)
		if err != nil {
			return Price{}, fmt.Errorf("AWS Price List API: product of %s in %s: %w", m.Type, m.Region, err)
		}
		return Price{USDPerHour: usd, Source: "AWS Price List API " + m.Region + " on-demand, Linux"}, nil
	}
	return Price{}, &NoPrice{fmt.Sprintf("the AWS Price List API has no on-demand Linux price of %s in %s", m.Type, m.Region)}
}

// awsProduct is the part of a Price List product document nuv reads.
type awsProduct struct {
	Terms struct {
		OnDemand map[string]struct {
			PriceDimensions map[string]struct {
				Unit         string            `json:"unit"`
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

// onDemandUSD reads the hourly USD price of a product document's on-demand term.
func onDemandUSD(doc string) (float64, error) {
	var p awsProduct
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		return 0, fmt.Errorf("not a price list document: %w", err)
	}
	for _, term := range p.Terms.OnDemand {
		for _, dim := range term.PriceDimensions {
			if !strings.EqualFold(dim.Unit, "Hrs") {
				continue
			}
			s, ok := dim.PricePerUnit["USD"]
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return 0, fmt.Errorf("pricePerUnit.USD %q: %w", s, err)
			}
			return v, nil
		}
	}
	return 0, errors.New("no on-demand hourly USD price in its terms")
}

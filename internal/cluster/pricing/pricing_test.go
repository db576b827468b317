package pricing_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/auth"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
	"github.com/nuv-dev/nuv/internal/cluster/gke"
	"github.com/nuv-dev/nuv/internal/cluster/pricing"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	awsemu "github.com/nuv-dev/nuv/internal/emulator/aws"
	"github.com/nuv-dev/nuv/internal/emulator/azure"
	"github.com/nuv-dev/nuv/internal/emulator/gcp"
)

// clouds are the three emulators on loopback and the environment `nuv emulator env` gives for
// them.
type clouds struct {
	env  map[string]string
	home string
}

func (c *clouds) getenv(k string) string { return c.env[k] }

func startClouds(t *testing.T) *clouds {
	t.Helper()
	c := &clouds{home: t.TempDir(), env: map[string]string{"HOME": t.TempDir()}}
	// AWS: the SDK's default chain reads the process environment.
	awsDir := t.TempDir()
	a, err := awsemu.New(awsemu.Options{Dir: awsDir})
	if err != nil {
		t.Fatal(err)
	}
	addr := clustertest.Serve(t, func(ctx context.Context, ln net.Listener) error { return awsemu.Serve(ctx, ln, a) })
	key, secret, _, region := a.Credentials()
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret, "AWS_REGION": region,
		"AWS_CONFIG_FILE": filepath.Join(awsDir, "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(awsDir, "none"), "AWS_PROFILE": ""} {
		t.Setenv(k, v)
	}
	c.env["AWS_ENDPOINT_URL"] = "http://" + addr

	azDir := t.TempDir()
	z, err := azure.New(azure.Options{Dir: azDir})
	if err != nil {
		t.Fatal(err)
	}
	addr = clustertest.Serve(t, func(ctx context.Context, ln net.Listener) error { return azure.Serve(ctx, ln, z) })
	c.env["NUV_AZURE_PRICES"] = "https://" + addr
	c.env["NUV_AZURE_CA_FILE"] = azure.CAFile(azDir)

	gDir := t.TempDir()
	g, err := gcp.New(gcp.Options{Dir: gDir})
	if err != nil {
		t.Fatal(err)
	}
	addr = clustertest.Serve(t, func(ctx context.Context, ln net.Listener) error { return gcp.Serve(ctx, ln, g) })
	for i := 0; i < 100 && gcp.Ping(context.Background(), addr) != nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	c.env[pricing.GCPEndpointEnv] = "http://" + addr + "/"
	c.env["GOOGLE_APPLICATION_CREDENTIALS"] = filepath.Join(gDir, gcp.CredentialsFileName)
	return c
}

func (c *clouds) book(t *testing.T) *pricing.Book {
	t.Helper()
	b, err := pricing.FromEnv(c.getenv, c.home, func(ctx context.Context) (*auth.Credentials, error) {
		creds, _, err := gke.Credentials(ctx, c.getenv)
		return creds, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSources asks each cloud's price API through nuv's clients (the AWS SDK, HTTPS with the
// emulator's CA, the Cloud Billing Go client with Application Default Credentials) what a plan
// asks: one machine type in one region.
func TestSources(t *testing.T) {
	c := startClouds(t)
	b := c.book(t)
	tests := []struct {
		name       string
		m          cluster.Machines
		wantUSD    float64
		wantSource string
		wantNo     string
	}{
		{name: "aws m5.large", m: cluster.Machines{Cloud: "aws", Region: "us-east-1", Type: "m5.large"}, wantUSD: 0.096, wantSource: "AWS Price List API us-east-1 on-demand, Linux"},
		{name: "aws t3.medium eu-west-1", m: cluster.Machines{Cloud: "aws", Region: "eu-west-1", Type: "t3.medium"}, wantUSD: 0.0416 * 1.12, wantSource: "AWS Price List API eu-west-1 on-demand, Linux"},
		{name: "aws unknown type", m: cluster.Machines{Cloud: "aws", Region: "us-east-1", Type: "m5.huge"}, wantNo: "has no on-demand Linux price of m5.huge in us-east-1"},
		{name: "azure D2s_v3 westeurope", m: cluster.Machines{Cloud: "azure", Region: "westeurope", Type: "Standard_D2s_v3"}, wantUSD: 0.1104, wantSource: "Azure Retail Prices API westeurope pay-as-you-go, Linux"},
		{name: "azure size not in region", m: cluster.Machines{Cloud: "azure", Region: "westus", Type: "Standard_NC6s_v3"}, wantNo: "no pay-as-you-go Linux price of Standard_NC6s_v3 in westus"},
		{name: "gcp e2-standard-4", m: cluster.Machines{Cloud: "gcp", Region: "us-central1", Type: "e2-standard-4", VCPUs: 4, MemoryGiB: 16}, wantUSD: 4*0.0218 + 16*0.0029, wantSource: "Cloud Billing Catalog API us-central1 on-demand, E2 vCPU + RAM"},
		{name: "gcp n1-standard-2 us-east1", m: cluster.Machines{Cloud: "gcp", Region: "us-east1", Type: "n1-standard-2", VCPUs: 2, MemoryGiB: 7.5}, wantUSD: 2*0.0316 + 7.5*0.0042, wantSource: "Cloud Billing Catalog API us-east1 on-demand, N1 vCPU + RAM"},
		{name: "gcp region without prices", m: cluster.Machines{Cloud: "gcp", Region: "mars1", Type: "e2-medium", VCPUs: 1, MemoryGiB: 4}, wantNo: "no on-demand E2 core and RAM prices in mars1"},
		{name: "gcp custom type", m: cluster.Machines{Cloud: "gcp", Region: "us-central1", Type: "custom-4-8192"}, wantNo: "does not know the vCPUs and memory of custom-4-8192"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := b.Sources[tc.m.Cloud].Price(context.Background(), tc.m)
			if tc.wantNo != "" {
				var np *pricing.NoPrice
				if !errors.As(err, &np) || !strings.Contains(err.Error(), tc.wantNo) {
					t.Fatalf("err = %v, want no price: %q", err, tc.wantNo)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := p.USDPerHour - tc.wantUSD; d > 1e-6 || d < -1e-6 || p.Source != tc.wantSource {
				t.Fatalf("price %+v, want %v from %q", p, tc.wantUSD, tc.wantSource)
			}
		})
	}
}

// fakeProvider is a provider's mapping of resources to machines: node groups of "type" x
// "count" in the cloud and region of its fields.
type fakeProvider struct{}

func (fakeProvider) Machines(_ *spec.Cluster, r cluster.Resource) []cluster.Machines {
	if r.Kind != "group" {
		return nil
	}
	n := len(r.Fields["count"])
	return []cluster.Machines{{Cloud: r.Fields["cloud"], Region: r.Fields["region"], Type: r.Fields["type"], Count: n, VCPUs: 2, MemoryGiB: 8}}
}

func group(name, cloud, region, typ string, count int) cluster.Change {
	return cluster.Change{Action: cluster.Create, Key: "group/" + name, Desired: &cluster.Resource{Kind: "group", Name: name,
		Fields: map[string]string{"cloud": cloud, "region": region, "type": typ, "count": strings.Repeat("x", count)}}}
}

// TestEstimateCache: an estimate prices each change; the answers land in the cache (0600) and
// the next plan reads them from there, saying how old they are, without asking the API.
func TestEstimateCache(t *testing.T) {
	c := startClouds(t)
	b := c.book(t)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	b.Now = func() time.Time { return now }
	plan := &cluster.Plan{Cluster: "c", Provider: "fake", Changes: []cluster.Change{
		group("a", "aws", "us-east-1", "m5.large", 2), group("b", "aws", "us-east-1", "m5.large", 1),
		{Action: cluster.Create, Key: "net/n", Desired: &cluster.Resource{Kind: "net", Name: "n"}},
		group("c", "aws", "us-east-1", "m5.huge", 1),
	}}
	est := b.Estimate(context.Background(), fakeProvider{}, nil, plan)
	if len(est.Lines) != 3 || est.Unpriced != 1 || est.USDPerHour < 0.288-1e-9 || est.USDPerHour > 0.288+1e-9 {
		t.Fatalf("estimate %+v", est)
	}
	if got := est.Lines[0].Items[0].Describe(now); got != "$0.192/h (2 x m5.large at $0.096/h, AWS Price List API us-east-1 on-demand, Linux)" {
		t.Fatalf("line: %s", got)
	}
	fi, err := os.Stat(pricing.CachePath(c.home))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file: %v %v", fi, err)
	}

	// The API now points nowhere: the cached price serves, with its age; the type without a
	// price is asked again (and fails now for another reason).
	c.env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:1"
	later := now.Add(3 * time.Hour)
	b2 := c.book(t)
	b2.Now = func() time.Time { return later }
	b2.Sources["aws"] = b.Sources["aws"] // same endpoint key as the cached answers
	est = b2.Estimate(context.Background(), fakeProvider{}, nil, plan)
	if !est.Lines[0].Items[0].Cached || est.Lines[0].Items[0].Describe(later) != "$0.192/h (2 x m5.large at $0.096/h, AWS Price List API us-east-1 on-demand, Linux, cached 3h ago)" {
		t.Fatalf("cached line: %+v %s", est.Lines[0].Items[0], est.Lines[0].Items[0].Describe(later))
	}
	// Past the cache's age the API is asked again.
	b2.Now = func() time.Time { return now.Add(25 * time.Hour) }
	est = b2.Estimate(context.Background(), fakeProvider{}, nil, plan)
	if est.Lines[0].Items[0].Cached {
		t.Fatal("a price older than a day was served from the cache")
	}
}

// TestEstimateNeverFailsOrHangs: a price API that accepts connections and never answers, or one
// that is not there, costs at most the time limit and gives "no price" with the reason.
func TestEstimateNeverFailsOrHangs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close() // held open, never answered
		}
	}()
	b := &pricing.Book{Timeout: 300 * time.Millisecond, Sources: map[string]pricing.Source{
		"azure": &pricing.Azure{BaseURL: "http://" + ln.Addr().String()},
		"gcp":   &pricing.GCP{Endpoint: "http://127.0.0.1:1"},
	}}
	plan := &cluster.Plan{Cluster: "c", Changes: []cluster.Change{
		group("a", "azure", "westeurope", "Standard_D2s_v3", 1), group("b", "gcp", "us-central1", "e2-standard-2", 1), group("c", "moon", "x", "y", 1)}}
	t0 := time.Now()
	est := b.Estimate(context.Background(), fakeProvider{}, nil, plan)
	if took := time.Since(t0); took > 2*time.Second {
		t.Fatalf("the estimate took %s with a time limit of 300ms", took)
	}
	want := []string{
		"no price for 1 x Standard_D2s_v3 (the price API did not answer within 300ms)",
		"no price for 1 x e2-standard-2 (no Google credentials to ask the Cloud Billing Catalog API with)",
		`no price for 1 x y (nuv reads no price list of cloud "moon")`,
	}
	for i, w := range want {
		if got := est.Lines[i].Items[0].Describe(time.Now()); got != w {
			t.Errorf("line %d: %s, want %s", i, got, w)
		}
	}
	if est.Unpriced != 3 || est.USDPerHour != 0 {
		t.Fatalf("estimate %+v", est)
	}
}

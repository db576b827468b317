package azure

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	acs "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
)

// testEmulator is an emulator serving on loopback for one test, with SDK clients pointed at it.
type testEmulator struct {
	*Server
	URL      string
	Dir      string
	Creds    Credentials
	HTTP     *http.Client
	Cred     azcore.TokenCredential
	Opts     *arm.ClientOptions
	Groups   *armresources.ResourceGroupsClient
	Clusters *acs.ManagedClustersClient
	Pools    *acs.AgentPoolsClient
	// Stop stops serving and closes the server (a restart: startEmulatorAt on the same address).
	Stop func()
	Addr string
}

func startEmulator(t testing.TB, dir string, delay time.Duration) *testEmulator {
	t.Helper()
	return startEmulatorAt(t, dir, delay, "127.0.0.1:0")
}

// startEmulatorAt serves an emulator with state in dir on addr until the test ends or Stop.
func startEmulatorAt(t testing.TB, dir string, delay time.Duration, addr string) *testEmulator {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	s, err := New(Options{Dir: dir, Delay: delay})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, s) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("emulator stopped with %v", err)
		}
	}
	t.Cleanup(stop)
	e := &testEmulator{Server: s, URL: "https://" + ln.Addr().String(), Dir: dir, Creds: s.Credentials(), Stop: stop, Addr: ln.Addr().String()}
	e.HTTP, err = Client(dir)
	if err != nil {
		t.Fatal(err)
	}
	e.Cred, e.Opts = e.clients(t, e.Creds.ClientSecret)
	e.Groups, err = armresources.NewResourceGroupsClient(e.Creds.SubscriptionID, e.Cred, e.Opts)
	if err != nil {
		t.Fatal(err)
	}
	f, err := acs.NewClientFactory(e.Creds.SubscriptionID, e.Cred, e.Opts)
	if err != nil {
		t.Fatal(err)
	}
	e.Clusters, e.Pools = f.NewManagedClustersClient(), f.NewAgentPoolsClient()
	return e
}

// clients makes a credential (ClientSecretCredential on the emulator's authority) and ARM client
// options for the emulator, with secret as the client secret.
func (e *testEmulator) clients(t testing.TB, secret string) (azcore.TokenCredential, *arm.ClientOptions) {
	t.Helper()
	cfg := cloud.Configuration{ActiveDirectoryAuthorityHost: e.URL + "/",
		Services: map[cloud.ServiceName]cloud.ServiceConfiguration{cloud.ResourceManager: {Endpoint: e.URL, Audience: e.URL}}}
	co := azcore.ClientOptions{Cloud: cfg, Transport: e.HTTP, Retry: policy.RetryOptions{RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 2 * time.Second}}
	cred, err := azidentity.NewClientSecretCredential(e.Creds.TenantID, e.Creds.ClientID, secret,
		&azidentity.ClientSecretCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: true})
	if err != nil {
		t.Fatal(err)
	}
	return cred, &arm.ClientOptions{ClientOptions: co}
}

// errCode returns the ARM error code of err ("" when it is not a response error).
func errCode(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %s", code)
	}
	if got := errCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

package azure

import (
	"context"
	"net/http"
	"path/filepath"
	"time"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// DefaultPort is where `nuv emulator up` serves ARM unless NUV_AZURE_EMULATOR_PORT says otherwise.
const DefaultPort = 5003

// Dir is the Azure emulator's directory under nuv's home.
func Dir(home string) string { return filepath.Join(home, "emulator", "azure") }

// Process is what the serving process records once it listens (server.json; never a secret).
type Process struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	Addr  string `json:"addr"`
	Dir   string `json:"dir"`
}

// URL is the ARM endpoint and authority host: https://addr.
func (p Process) URL() string { return "https://" + p.Addr }

// daemon is the Azure emulator run as a detached process.
var daemon = emucore.Daemon{Name: "azure emulator", PortEnv: "NUV_AZURE_EMULATOR_PORT", Ping: Ping}

// WriteProcess records p atomically in dir.
func WriteProcess(dir string, p Process) error { return emucore.WriteRecord(dir, emucore.Record(p)) }

// ReadProcess reads the recorded process; os.ErrNotExist when the emulator was never started.
func ReadProcess(dir string) (Process, error) {
	r, err := emucore.ReadRecord(dir)
	return Process(r), err
}

// Status reports whether the recorded emulator runs and answers.
func Status(ctx context.Context, dir string) (Process, bool, error) {
	r, ok, err := daemon.Status(ctx, dir)
	return Process(r), ok, err
}

// Client is an HTTP client trusting the emulator's CA in dir.
func Client(dir string) (*http.Client, error) {
	tc, err := ClientTLS(CAFile(dir))
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tc, Proxy: nil}, Timeout: 30 * time.Second}, nil
}

// Ping asks the emulator at addr for its health.
func Ping(ctx context.Context, dir, addr string) error {
	c, err := Client(dir)
	if err != nil {
		return err
	}
	return emucore.Ping(ctx, c, "https", addr, "azure emulator")
}

// UpOptions say how to start the emulator process (Command runs the serving process; Up appends
// --dir and --addr).
type UpOptions = emucore.UpOptions

// Up starts the emulator as a detached process unless it runs, and returns its record.
func Up(ctx context.Context, o UpOptions) (Process, bool, error) {
	r, started, err := daemon.Up(ctx, o)
	return Process(r), started, err
}

// Down stops the recorded emulator. Its state stays, and the control planes keep running.
func Down(ctx context.Context, dir string) (bool, error) { return daemon.Down(ctx, dir) }

// Env is what `nuv emulator env` prints for Azure clients: the service principal (azidentity's
// EnvironmentCredential reads AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET), the
// authority host (AZURE_AUTHORITY_HOST), the subscription, and nuv's own variables for the ARM
// endpoint, the CA to trust and the Retail Prices API (NUV_AZURE_RESOURCE_MANAGER, NUV_AZURE_CA_FILE,
// NUV_AZURE_PRICES).
func Env(p Process, c Credentials) []string {
	return []string{
		"AZURE_TENANT_ID=" + c.TenantID,
		"AZURE_CLIENT_ID=" + c.ClientID,
		"AZURE_CLIENT_SECRET=" + c.ClientSecret,
		"AZURE_SUBSCRIPTION_ID=" + c.SubscriptionID,
		"AZURE_AUTHORITY_HOST=" + p.URL() + "/",
		"NUV_AZURE_RESOURCE_MANAGER=" + p.URL(),
		"NUV_AZURE_CA_FILE=" + CAFile(p.Dir),
		"NUV_AZURE_PRICES=" + p.URL(),
	}
}

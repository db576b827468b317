package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/proc"
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

func (p Process) record() proc.Record { return proc.Record{PID: p.PID, Start: p.Start} }

func processFile(dir string) string { return filepath.Join(dir, "server.json") }

// WriteProcess records p atomically in dir.
func WriteProcess(dir string, p Process) error {
	b, _ := json.MarshalIndent(p, "", "  ")
	return fsutil.WriteFileAtomic(processFile(dir), append(b, '\n'), 0o644)
}

// ReadProcess reads the recorded process; os.ErrNotExist when the emulator was never started.
func ReadProcess(dir string) (Process, error) {
	var p Process
	b, err := os.ReadFile(processFile(dir))
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("%s: %w", processFile(dir), err)
	}
	return p, nil
}

// Status reports whether the recorded emulator runs and answers.
func Status(ctx context.Context, dir string) (Process, bool, error) {
	p, err := ReadProcess(dir)
	if errors.Is(err, os.ErrNotExist) {
		return p, false, nil
	}
	if err != nil {
		return p, false, err
	}
	if !p.record().Alive() {
		return p, false, nil
	}
	return p, Ping(ctx, dir, p.Addr) == nil, nil
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
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := Client(dir)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/_nuv/health", nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("azure emulator at %s answered HTTP %d", addr, resp.StatusCode)
	}
	return nil
}

// UpOptions say how to start the emulator process.
type UpOptions struct {
	Dir  string
	Port int // 0: any free port
	// Command runs the serving process; Up appends --dir and --addr.
	Command []string
	Env     []string
	Timeout time.Duration
}

// Up starts the emulator as a detached process unless it runs, and returns its record.
func Up(ctx context.Context, o UpOptions) (Process, bool, error) {
	if p, ok, err := Status(ctx, o.Dir); err == nil && ok {
		return p, false, nil
	}
	if len(o.Command) == 0 {
		return Process{}, false, errors.New("azure emulator up: no command to run the emulator")
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return Process{}, false, fmt.Errorf("azure emulator directory %s: %w", o.Dir, err)
	}
	addr, err := proc.LoopbackAddr(o.Port, "NUV_AZURE_EMULATOR_PORT")
	if err != nil {
		return Process{}, false, fmt.Errorf("azure emulator %w", err)
	}
	_ = os.Remove(processFile(o.Dir))
	args := append(append([]string{}, o.Command[1:]...), "--dir", o.Dir, "--addr", addr)
	var r Process
	_, err = proc.LaunchReady(ctx, proc.Command{Path: o.Command[0], Args: args, Env: o.Env, Log: filepath.Join(o.Dir, "emulator.log"), LogMode: 0o600},
		"the azure emulator", o.Timeout, func(ctx context.Context, p proc.Process) bool {
			var err error
			r, err = ReadProcess(o.Dir)
			return err == nil && r.PID == p.PID && Ping(ctx, o.Dir, r.Addr) == nil
		})
	if err != nil {
		return Process{}, false, err
	}
	return r, true, nil
}

// Down stops the recorded emulator. Its state stays, and the control planes keep running.
func Down(ctx context.Context, dir string) (bool, error) {
	p, err := ReadProcess(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer os.Remove(processFile(dir))
	stopped, err := p.record().Stop(ctx, 10*time.Second)
	if err != nil {
		return false, fmt.Errorf("stop the azure emulator: %w", err)
	}
	return stopped, nil
}

// Env is what `nuv emulator env` prints for Azure clients: the service principal (azidentity's
// EnvironmentCredential reads AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET), the
// authority host (AZURE_AUTHORITY_HOST), the subscription, and nuv's own variables for the ARM
// endpoint and the CA to trust (NUV_AZURE_RESOURCE_MANAGER, NUV_AZURE_CA_FILE).
func Env(p Process, c Credentials) []string {
	return []string{
		"AZURE_TENANT_ID=" + c.TenantID,
		"AZURE_CLIENT_ID=" + c.ClientID,
		"AZURE_CLIENT_SECRET=" + c.ClientSecret,
		"AZURE_SUBSCRIPTION_ID=" + c.SubscriptionID,
		"AZURE_AUTHORITY_HOST=" + p.URL() + "/",
		"NUV_AZURE_RESOURCE_MANAGER=" + p.URL(),
		"NUV_AZURE_CA_FILE=" + CAFile(p.Dir),
	}
}

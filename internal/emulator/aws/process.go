package aws

import (
	"context"
	"net/http"
	"path/filepath"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// DefaultPort is where `nuv emulator up` listens unless NUV_EMULATOR_PORT says otherwise. It
// should stay the same across restarts: the control planes of EKS clusters call the emulator there.
const DefaultPort = 5002

// Dir is the emulator's directory under nuv's home.
func Dir(home string) string { return filepath.Join(home, "emulator") }

// Process is what `nuv emulator serve` records once it listens (server.json; never the secret).
type Process struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	Addr  string `json:"addr"` // 127.0.0.1:port
	Dir   string `json:"dir"`
}

// URL is the endpoint clients use (AWS_ENDPOINT_URL).
func (p Process) URL() string { return "http://" + p.Addr }

// daemon is the AWS emulator run as a detached process.
var daemon = emucore.Daemon{Name: "emulator", PortEnv: "NUV_EMULATOR_PORT", Ping: func(ctx context.Context, _, addr string) error { return Ping(ctx, addr) }}

// WriteProcess records p atomically in dir.
func WriteProcess(dir string, p Process) error { return emucore.WriteRecord(dir, emucore.Record(p)) }

// ReadProcess reads the recorded process; os.ErrNotExist when the emulator was never started.
func ReadProcess(dir string) (Process, error) {
	r, err := emucore.ReadRecord(dir)
	return Process(r), err
}

// Credentials are what clients need to call the emulator.
type Credentials struct {
	AccessKeyID, SecretAccessKey, Account, Region string
}

// ReadCredentials reads the credentials the emulator in dir issued (os.ErrNotExist before its
// first start).
func ReadCredentials(dir string) (Credentials, error) {
	st, err := loadState(dir)
	if err != nil {
		return Credentials{}, err
	}
	return Credentials{st.AccessKeyID, st.SecretAccessKey, st.Account, st.Region}, nil
}

// Status reports whether the recorded emulator runs and answers.
func Status(ctx context.Context, dir string) (Process, bool, error) {
	r, ok, err := daemon.Status(ctx, dir)
	return Process(r), ok, err
}

// Ping asks the emulator at addr for its health.
func Ping(ctx context.Context, addr string) error {
	return emucore.Ping(ctx, http.DefaultClient, "http", addr, "emulator")
}

// UpOptions say how to start the emulator process (Command runs `emulator serve`; Up appends
// --dir and --addr; Timeout 0 is 15s).
type UpOptions = emucore.UpOptions

// Up starts the emulator as a detached process unless it runs, and returns its record.
func Up(ctx context.Context, o UpOptions) (Process, bool, error) {
	r, started, err := daemon.Up(ctx, o)
	return Process(r), started, err
}

// Down stops the recorded emulator (SIGTERM, then SIGKILL after 10s). Its state stays on disk, and
// the control planes of EKS clusters keep running.
func Down(ctx context.Context, dir string) (bool, error) { return daemon.Down(ctx, dir) }

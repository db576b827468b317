package emulatorcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/nuv-dev/nuv/internal/cluster/pricing"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	awsemu "github.com/nuv-dev/nuv/internal/emulator/aws"
	"github.com/nuv-dev/nuv/internal/emulator/gcp"
)

// The GKE emulator (package gcp) runs as its own process on its own port, beside the AWS one:
// `nuv emulator up|down|status|env` act on both; `nuv emulator faults gcp ...` on its faults.

// gcpDir is the GKE emulator's directory.
func gcpDir(home string) string { return gcp.Dir(awsemu.Dir(home)) }

// GCPPort is NUV_EMULATOR_GCP_PORT, else any free port when NUV_EMULATOR_PORT is set (a chosen
// AWS port says nothing of which one the GKE emulator may take; set both to keep both fixed), else
// gcp.DefaultPort.
func GCPPort(getenv func(string) string) (int, error) {
	if getenv("NUV_EMULATOR_GCP_PORT") == "" && getenv("NUV_EMULATOR_PORT") != "" {
		return 0, nil
	}
	return portEnv(getenv, "NUV_EMULATOR_GCP_PORT", gcp.DefaultPort)
}

// EnsureGCP starts the GKE emulator (`<nuv> emulator serve-gcp`) unless it runs.
func EnsureGCP(ctx context.Context, env *cli.Env, home string) (awsemu.Process, bool, error) {
	port, err := GCPPort(env.Getenv)
	if err != nil {
		return awsemu.Process{}, false, err
	}
	var extra []string
	if p := env.Getenv("NUV_EMULATOR_GCP_PROJECT"); p != "" {
		extra = []string{"--project", p}
	}
	cmd, err := serveCommand(env, "serve-gcp", extra...)
	if err != nil {
		return awsemu.Process{}, false, err
	}
	return awsemu.Up(ctx, awsemu.UpOptions{Dir: gcpDir(home), Port: port, Command: cmd})
}

// Status prints the GKE emulator's status line; false when it does not run.
func (gcpCloud) Status(ctx context.Context, home string) (Status, error) {
	st := Status{Cloud: "gcp", label: gcpCloud{}.Label()}
	p, ok, err := awsemu.Status(ctx, gcpDir(home))
	if err != nil || !ok {
		return st, err
	}
	st.Running, st.URL, st.PID, st.State = true, p.URL(), p.PID, p.Dir
	return st, nil
}

// gcpEnv prints what points Google clients at the GKE emulator: gcloud's and nuv's endpoint
// override and the Cloud Billing Catalog API's (prices), the credentials file (ADC) and the project.
func gcpEnv(ctx context.Context, w io.Writer, home string) error {
	p, ok, err := awsemu.Status(ctx, gcpDir(home))
	if err != nil {
		return err
	}
	if !ok {
		return nil
	}
	project, err := gcpProject(gcpDir(home))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "export %s=%s/\nexport %s=%s/\nexport GOOGLE_APPLICATION_CREDENTIALS=%s\nexport CLOUDSDK_CORE_PROJECT=%s\n",
		gcp.ContainerEndpointEnv, p.URL(), pricing.GCPEndpointEnv, p.URL(), filepath.Join(p.Dir, gcp.CredentialsFileName), project)
	return printAdminToken(w, "gcp", p.Dir)
}

// gcpProject reads the project of the credentials file the emulator wrote.
func gcpProject(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, gcp.CredentialsFileName))
	if err != nil {
		return "", fmt.Errorf("GKE emulator credentials: %w", err)
	}
	var f struct {
		ProjectID string `json:"project_id"`
	}
	if err := json.Unmarshal(b, &f); err != nil || f.ProjectID == "" {
		return "", fmt.Errorf("GKE emulator credentials %s: no project_id", filepath.Join(dir, gcp.CredentialsFileName))
	}
	return f.ProjectID, nil
}

// serveGCP is the detached process: `nuv emulator serve-gcp --dir D --addr A [--delay D] [--project P]`.
func serveGCP(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("nuv emulator serve-gcp")
	dir := fs.String("dir", "", "state directory")
	addr := fs.String("addr", "127.0.0.1:"+strconv.Itoa(gcp.DefaultPort), "listen address (loopback)")
	delay := fs.Duration("delay", 2*time.Second, "how long operations run at least")
	project := fs.String("project", gcp.DefaultProject, "project of a new emulator")
	if done, err := cli.Parse(env, fs, cli.Usage{Line: "nuv emulator serve-gcp --dir DIR [flags]", Short: "serve the GKE emulator in the foreground (what up starts detached)"}, args); done || err != nil {
		return err
	}
	if *dir == "" {
		return cli.Usagef("nuv emulator serve-gcp: --dir is required")
	}
	if err := loopbackAddr("serve-gcp", *addr); err != nil {
		return err
	}
	s, err := gcp.New(gcp.Options{Dir: *dir, Project: *project, Delay: *delay, Log: env.Log})
	if err != nil {
		return err
	}
	return listenAndServe(ctx, env, "GKE emulator", *dir, *addr, func(a net.Addr) {
		env.Log.Infof("GKE emulator listening on %s (state %s, delay %s)", a, *dir, *delay)
	}, func(ctx context.Context, ln net.Listener) error { return gcp.Serve(ctx, ln, s) })
}

package emulatorcmd_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/emulator/gcp"
)

// TestEmulatorCommandGCP drives the GKE emulator through `nuv emulator`: up starts it beside the
// AWS one, env prints what points gcloud and ADC at it, faults gcp sets its faults, -gke-token
// gets a token it accepts, down stops it.
func TestEmulatorCommandGCP(t *testing.T) {
	home := t.TempDir()
	t.Setenv("NUV_HOME", home)
	t.Setenv("NUV_EMULATOR_PORT", "0")
	t.Setenv(asNuv, "1")
	up := ok[string](t)(nuv(t, "emulator", "up"))
	t.Cleanup(func() { nuv(t, "emulator", "down") })
	if lines := strings.Fields(up); len(lines) != 1 {
		t.Fatalf("up prints the AWS endpoint: %q", up)
	}
	vars := exports(ok[string](t)(nuv(t, "emulator", "env")))
	endpoint, creds := vars["CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER"], vars["GOOGLE_APPLICATION_CREDENTIALS"]
	if !strings.HasPrefix(endpoint, "http://127.0.0.1:") || !strings.HasSuffix(endpoint, "/") || vars["CLOUDSDK_CORE_PROJECT"] != gcp.DefaultProject ||
		creds != filepath.Join(home, "emulator", "gcp", gcp.CredentialsFileName) {
		t.Fatalf("env: %v", vars)
	}
	if fi, err := os.Stat(creds); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", fi, err)
	}
	if st := ok[string](t)(nuv(t, "emulator", "status")); !strings.Contains(st, "GKE emulator: running at "+strings.TrimSuffix(endpoint, "/")) || strings.TrimSuffix(endpoint, "/") == strings.TrimSpace(up) {
		t.Fatalf("status: %s", st)
	}
	added := ok[string](t)(nuv(t, "emulator", "faults", "gcp", "add", `{"method":"CreateCluster","kind":"fail-operation"}`))
	if !strings.Contains(added, `"fail-operation"`) {
		t.Fatalf("faults gcp add: %s", added)
	}
	if _, err := nuv(t, "emulator", "faults", "gcp", "add", `{"method":"CreateCluster","kind":"maybe"}`); err == nil || !strings.Contains(err.Error(), "maybe") {
		t.Fatalf("bad fault accepted: %v", err)
	}
	if list := ok[string](t)(nuv(t, "emulator", "faults", "gcp", "clear")); strings.TrimSpace(list) != "[]" {
		t.Fatalf("faults gcp clear: %s", list)
	}
	if l := ok[string](t)(nuv(t, "emulator", "faults", "--cloud", "gcp", "add", `{"method":"DeleteCluster","kind":"throttle"}`)); !strings.Contains(l, `"DeleteCluster"`) {
		t.Fatalf("faults --cloud gcp add: %s", l)
	}
	if l := ok[string](t)(nuv(t, "emulator", "faults", "gcp")); !strings.Contains(l, `"DeleteCluster"`) {
		t.Fatalf("faults gcp after --cloud gcp add: %s", l)
	}
	ok[string](t)(nuv(t, "emulator", "faults", "--cloud", "gcp", "clear"))

	for k, v := range vars {
		t.Setenv(k, v)
	}
	cred := ok[string](t)(nuv(t, "-gke-token"))
	var ec struct {
		Kind, APIVersion string
		Status           struct {
			Token               string
			ExpirationTimestamp time.Time
		}
	}
	if err := json.Unmarshal([]byte(cred), &ec); err != nil || ec.Kind != "ExecCredential" || ec.APIVersion != "client.authentication.k8s.io/v1beta1" ||
		!strings.HasPrefix(ec.Status.Token, "ya29.nuv.") || time.Until(ec.Status.ExpirationTimestamp) < 50*time.Minute {
		t.Fatalf("ExecCredential: %v %s", err, cred)
	}
	req, _ := http.NewRequest("GET", endpoint+"v1/projects/"+gcp.DefaultProject+"/locations/-/clusters", nil)
	req.Header.Set("Authorization", "Bearer "+ec.Status.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the token is refused: %v %v", resp, err)
	}
	resp.Body.Close()
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("HOME", t.TempDir())
	if _, err := nuv(t, "-gke-token"); err == nil || !strings.Contains(err.Error(), "no Google credentials: tried GOOGLE_APPLICATION_CREDENTIALS (unset)") {
		t.Fatalf("-gke-token without credentials: %v", err)
	}

	ok[string](t)(nuv(t, "emulator", "down"))
	if out, err := nuv(t, "emulator", "status"); cli.ExitCode(err) != 1 || !strings.Contains(out, "stopped") {
		t.Fatalf("status after down: %q %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(home, "emulator", "gcp", "server.json")); !os.IsNotExist(err) {
		t.Fatalf("GKE emulator process record after down: %v", err)
	}
}

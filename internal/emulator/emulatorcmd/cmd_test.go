package emulatorcmd_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	awsemu "github.com/nuv-dev/nuv/internal/emulator/aws"
	"github.com/nuv-dev/nuv/internal/emulator/emulatorcmd"
)

func TestPortAndDelay(t *testing.T) {
	for _, tc := range []struct {
		port, delay string
		wantPort    int
		wantDelay   time.Duration
		err         string
	}{
		{"", "", awsemu.DefaultPort, 2 * time.Second, ""},
		{"0", "0s", 0, 0, ""},
		{"6000", "500ms", 6000, 500 * time.Millisecond, ""},
		{"http", "", 0, 0, `NUV_EMULATOR_PORT="http" is not a port number`},
		{"70000", "", 0, 0, "is not a port number"},
		{"", "soon", 0, 0, `NUV_EMULATOR_DELAY="soon" is not a duration`},
		{"", "-1s", 0, 0, "is not a duration"},
	} {
		env := map[string]string{"NUV_EMULATOR_PORT": tc.port, "NUV_EMULATOR_DELAY": tc.delay}
		p, err := emulatorcmd.Port(func(k string) string { return env[k] })
		if err == nil {
			var d time.Duration
			d, err = emulatorcmd.Delay(func(k string) string { return env[k] })
			if err == nil && (p != tc.wantPort || d != tc.wantDelay) {
				t.Errorf("%q %q: port %d delay %s", tc.port, tc.delay, p, d)
			}
		}
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q %q: error %v, want %q", tc.port, tc.delay, err, tc.err)
		}
	}
}

// TestEmulatorCommand drives `nuv emulator` without any EKS cluster: up (detached), status, env,
// faults, down; the secret is printed by env only, never logged.
func TestEmulatorCommand(t *testing.T) {
	home := t.TempDir()
	t.Setenv("NUV_HOME", home)
	t.Setenv("NUV_EMULATOR_PORT", "0")
	t.Setenv(asNuv, "1")

	if out, err := nuv(t, "emulator"); err != nil || !strings.Contains(out, "Usage: nuv emulator <verb>") {
		t.Fatalf("no verb: %q %v", out, err)
	}
	_, err := nuv(t, "emulator", "env")
	if err == nil || !strings.Contains(err.Error(), "nuv emulator up") {
		t.Fatalf("env while stopped: %v", err)
	}
	if out, err := nuv(t, "emulator", "status"); cli.ExitCode(err) != 1 || !strings.Contains(out, "stopped") {
		t.Fatalf("status while stopped: %q %v", out, err)
	}
	if out, err := nuv(t, "emulator", "status", "-o", "json"); cli.ExitCode(err) != 1 || !strings.Contains(out, `"running": false`) {
		t.Fatalf("status -o json while stopped: %q %v", out, err)
	}
	if _, err := nuv(t, "emulator", "up"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nuv(t, "emulator", "down") })
	vars := exports(ok[string](t)(nuv(t, "emulator", "env")))
	secret := vars["AWS_SECRET_ACCESS_KEY"]
	if len(secret) != 40 || vars["AWS_REGION"] != "us-east-1" || vars["AWS_DEFAULT_REGION"] != "us-east-1" || len(vars["NUV_EMULATOR_AWS_ADMIN_TOKEN"]) != 64 {
		t.Fatalf("env: %v", vars)
	}
	st := ok[string](t)(nuv(t, "emulator", "status"))
	if !strings.Contains(st, vars["AWS_ENDPOINT_URL"]) || strings.Contains(st, secret) {
		t.Fatalf("status: %s", st)
	}
	// the machine form: each emulator by its cloud, the AWS one's endpoint, never the secret
	var machine []map[string]any
	js := ok[string](t)(nuv(t, "emulator", "status", "-o", "json"))
	if err := json.Unmarshal([]byte(js), &machine); err != nil || len(machine) != 3 || machine[0]["cloud"] != "aws" ||
		machine[0]["url"] != vars["AWS_ENDPOINT_URL"] || machine[0]["running"] != true || machine[0]["region"] != "us-east-1" || strings.Contains(js, secret) {
		t.Fatalf("status -o json (%v): %s", err, js)
	}
	if y := ok[string](t)(nuv(t, "emulator", "status", "-o", "yaml")); !strings.Contains(y, "  cloud: aws\n") || !strings.Contains(y, "url: "+vars["AWS_ENDPOINT_URL"]+"\n") || strings.Contains(y, secret) {
		t.Fatalf("status -o yaml: %s", y)
	}

	added := ok[string](t)(nuv(t, "emulator", "faults", "add", `{"operation":"eks:CreateCluster","kind":"throttle","every":3}`))
	var faults []awsemu.Fault
	if json.Unmarshal([]byte(added), &faults) != nil || len(faults) != 1 || faults[0].Every != 3 {
		t.Fatalf("faults add: %s", added)
	}
	if _, err := nuv(t, "emulator", "faults", "add", `{"operation":"eks:CreateCluster","kind":"maybe"}`); err == nil || !strings.Contains(err.Error(), "maybe") {
		t.Fatalf("bad fault accepted: %v", err)
	}
	ok[string](t)(nuv(t, "emulator", "faults", "clear"))
	if list := ok[string](t)(nuv(t, "emulator", "faults")); strings.TrimSpace(list) != "[]" {
		t.Fatalf("faults after clear: %s", list)
	}
	// The uniform spelling reaches the same emulator; a cloud nuv does not emulate is a usage error.
	if l := ok[string](t)(nuv(t, "emulator", "faults", "--cloud", "aws", "add", `{"operation":"ec2:*","kind":"throttle"}`)); !strings.Contains(l, `"ec2:*"`) {
		t.Fatalf("faults --cloud aws add: %s", l)
	}
	if l := ok[string](t)(nuv(t, "emulator", "faults")); !strings.Contains(l, `"ec2:*"`) {
		t.Fatalf("faults after --cloud aws add: %s", l)
	}
	ok[string](t)(nuv(t, "emulator", "faults", "--cloud=aws", "clear"))
	if _, err := nuv(t, "emulator", "faults", "--cloud", "ibm"); cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), `--cloud "ibm": accepted values: aws, azure, gcp`) {
		t.Fatalf("faults --cloud ibm: %v", err)
	}
	if _, err := nuv(t, "emulator", "faults", "--cloud", "aws", "drop"); cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), "nuv emulator faults: want no argument") {
		t.Fatalf("faults --cloud aws drop: %v", err)
	}

	// The token command, with the emulator's credentials from the environment.
	for k, v := range vars {
		t.Setenv(k, v)
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(home, "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "none"))
	cred := ok[string](t)(nuv(t, "-eks-token", "--cluster", "demo"))
	var ec struct {
		Kind   string
		Status struct {
			Token               string
			ExpirationTimestamp time.Time
		}
	}
	if err := json.Unmarshal([]byte(cred), &ec); err != nil || ec.Kind != "ExecCredential" || !strings.HasPrefix(ec.Status.Token, "k8s-aws-v1.") ||
		time.Until(ec.Status.ExpirationTimestamp) < 10*time.Minute {
		t.Fatalf("ExecCredential: %v %s", err, cred)
	}
	if _, err := nuv(t, "-eks-token"); cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), "--cluster is required") {
		t.Fatalf("-eks-token without --cluster: %v", err)
	}

	ok[string](t)(nuv(t, "emulator", "down"))
	if _, err := nuv(t, "emulator", "env"); err == nil {
		t.Fatal("env after down")
	}
	dir := awsemu.Dir(home)
	log, err := os.ReadFile(filepath.Join(dir, "emulator.log"))
	if err != nil || strings.Contains(string(log), secret) {
		t.Fatalf("emulator log (%v) holds the secret", err)
	}
	for _, f := range []string{"state.json", "emulator.log", "admin-token"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want 0600", f, fi.Mode(), err)
		}
	}
	if _, err := awsemu.ReadProcess(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("process record after down: %v", err)
	}
}

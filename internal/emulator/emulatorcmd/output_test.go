package emulatorcmd

import (
	"bytes"
	"flag"
	"github.com/nuv-dev/nuv/internal/golden"
	"path/filepath"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestStatusForms pins every -o form of `nuv emulator status` with a golden file each: the three
// emulators running, and the Azure one stopped.
func TestStatusForms(t *testing.T) {
	aws := Status{Cloud: "aws", label: awsCloud{}.Label(), Running: true, URL: "http://127.0.0.1:5002", PID: 101, State: "/home/dev/.nuv/emulator",
		Region: "us-east-1", Account: "000000000000"}
	az := Status{Cloud: "azure", label: azureCloud{}.Label(), Running: true, URL: "https://127.0.0.1:5003", PID: 102, State: "/home/dev/.nuv/emulator-azure",
		Subscription: "00000000-0000-0000-0000-000000000001", Tenant: "00000000-0000-0000-0000-000000000002", CA: "/home/dev/.nuv/emulator-azure/ca.pem"}
	gcp := Status{Cloud: "gcp", label: gcpCloud{}.Label(), Running: true, URL: "http://127.0.0.1:5004", PID: 103, State: "/home/dev/.nuv/emulator-gcp"}
	cases := map[string][]Status{
		"running":       {aws, az, gcp},
		"azure-stopped": {aws, {Cloud: "azure", label: azureCloud{}.Label()}, gcp},
	}
	for _, format := range cli.ListFormats {
		for name, all := range cases {
			var b bytes.Buffer
			if err := writeStatus(&b, &cli.OutputOption{Format: format}, all); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "status-"+name+"."+format), b.String(), *update)
		}
	}
}

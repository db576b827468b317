package gke

import (
	"encoding/base64"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
)

var updateGolden = flag.Bool("update-kubeconfig", false, "rewrite testdata/kubeconfig.golden")

// The kubeconfig of a GKE cluster: gcloud's context name, the endpoint and CA, and an exec
// credential running nuv -gke-token with the credentials file passed on (never a token).
func TestKubeconfigGolden(t *testing.T) {
	p := &Provider{Project: t.TempDir(), Exe: "/usr/local/bin/nuv", Getenv: func(k string) string {
		return map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": "/home/dev/.config/nuv/key.json"}[k]
	}}
	gc := &containerpb.Cluster{Name: "demo", Location: "us-central1-a", Endpoint: "127.0.0.1:6443",
		MasterAuth: &containerpb.MasterAuth{ClusterCaCertificate: base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"))}}
	got, err := p.kubeconfigFor("my-project", gc)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "kubeconfig.golden")
	if *updateGolden {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("kubeconfig differs from %s (run with -update-kubeconfig to accept):\n%s", golden, got)
	}
	if _, err := p.kubeconfigFor("my-project", &containerpb.Cluster{Name: "demo", Endpoint: "127.0.0.1:6443"}); err == nil {
		t.Error("a cluster without a CA got a kubeconfig")
	}
}

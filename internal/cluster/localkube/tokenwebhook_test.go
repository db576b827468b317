package localkube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// TestTokenWebhook: a cluster created with a token webhook runs kube-apiserver with the webhook's
// kubeconfig (pointing at the URL) and the v1 TokenReview API; one without gets neither.
func TestTokenWebhook(t *testing.T) {
	for _, url := range []string{"", "http://127.0.0.1:5002/_nuv/eks/token-review/demo"} {
		dir := t.TempDir()
		for _, sub := range []string{"pki", "config"} {
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
				t.Fatal(err)
			}
		}
		if err := generatePKI(filepath.Join(dir, "pki")); err != nil {
			t.Fatal(err)
		}
		s := &state{Name: "demo", Nodes: 1, TokenWebhook: url, Ports: map[string]int{}}
		for i, r := range portRoles(s) {
			s.Ports[r] = 20000 + i
		}
		if err := writeConfigs(dir, s); err != nil {
			t.Fatal(err)
		}
		var args string
		for _, c := range plan(dir, s) {
			if c.kind == "apiserver" {
				args = strings.Join(c.Args, " ")
			}
		}
		cfgPath := filepath.Join(dir, "config", tokenWebhookConfig)
		if url == "" {
			if strings.Contains(args, "--authentication-token-webhook") {
				t.Errorf("webhook flags without a webhook: %s", args)
			}
			if _, err := os.Stat(cfgPath); !os.IsNotExist(err) {
				t.Errorf("webhook kubeconfig written without a webhook: %v", err)
			}
			continue
		}
		if !strings.Contains(args, "--authentication-token-webhook-config-file="+cfgPath) || !strings.Contains(args, "--authentication-token-webhook-version=v1") {
			t.Errorf("apiserver args lack the webhook: %s", args)
		}
		cfg, err := clientcmd.LoadFromFile(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].Server; got != url {
			t.Errorf("webhook server %q, want %q", got, url)
		}
	}
}

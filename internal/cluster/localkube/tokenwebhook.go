package localkube

import (
	"fmt"
	"path/filepath"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// tokenWebhookConfig is the kubeconfig that points kube-apiserver's token webhook at
// CreateOptions.TokenWebhook (an AWS emulator's TokenReview endpoint, as EKS's authenticator is).
const tokenWebhookConfig = "token-webhook.kubeconfig"

// tokenWebhookArgs are the kube-apiserver flags of a cluster created with a token webhook: bearer
// tokens the API server does not know itself are sent to the webhook as TokenReviews (v1).
func tokenWebhookArgs(dir string, s *state) []string {
	if s.TokenWebhook == "" {
		return nil
	}
	return []string{
		"--authentication-token-webhook-config-file=" + filepath.Join(dir, "config", tokenWebhookConfig),
		"--authentication-token-webhook-version=v1",
		"--authentication-token-webhook-cache-ttl=30s",
	}
}

// writeTokenWebhookConfig writes the webhook's kubeconfig (nothing without a webhook).
func writeTokenWebhookConfig(dir string, s *state) error {
	if s.TokenWebhook == "" {
		return nil
	}
	y := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: token-webhook
  cluster:
    server: %q
users:
- name: kube-apiserver
  user: {}
contexts:
- name: token-webhook
  context:
    cluster: token-webhook
    user: kube-apiserver
current-context: token-webhook
`, s.TokenWebhook)
	return fsutil.WriteFileAtomic(filepath.Join(dir, "config", tokenWebhookConfig), []byte(y), 0o600)
}

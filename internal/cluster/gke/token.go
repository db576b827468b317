package gke

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
)

var tokenUsage = cli.Usage{Line: "nuv -gke-token", Short: "print a GKE access token as an ExecCredential", Long: `Prints an ExecCredential (client.authentication.k8s.io/v1beta1) holding a Google access token from
Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's application default
credentials, or the metadata server), as gke-gcloud-auth-plugin does with gcloud's. GKE
kubeconfigs nuv writes use it as their exec credential; the token is never written to disk.`,
	Examples: "nuv -gke-token\nGOOGLE_APPLICATION_CREDENTIALS=sa.json nuv -gke-token"}

// NewTokenTool is `nuv -gke-token`, the exec credential plugin of the GKE kubeconfigs nuv writes.
func NewTokenTool() cli.Command {
	return cli.Command{Name: "gke-token", Short: "print a GKE access token as an ExecCredential (the exec plugin of GKE kubeconfigs)", Run: runToken}
}

func runToken(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("nuv -gke-token")
	if done, err := cli.Parse(env, fs, tokenUsage, args); done || err != nil {
		return err
	}
	if err := cli.NoArgs(fs, tokenUsage); err != nil {
		return err
	}
	b, err := ExecCredential(ctx, env.Getenv)
	if err != nil {
		return fmt.Errorf("gke token: %w", err)
	}
	_, err = env.Out.Write(b)
	return err
}

// ExecCredential gets an access token from Application Default Credentials and renders it as an
// ExecCredential.
func ExecCredential(ctx context.Context, getenv func(string) string) ([]byte, error) {
	creds, _, err := Credentials(ctx, getenv)
	if err != nil {
		return nil, err
	}
	tok, err := creds.Token(ctx)
	if err != nil {
		return nil, err
	}
	st := map[string]any{"token": tok.Value}
	if !tok.Expiry.IsZero() {
		st["expirationTimestamp"] = tok.Expiry.UTC().Format(time.RFC3339)
	}
	b, err := json.MarshalIndent(map[string]any{"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1beta1", "spec": map[string]any{}, "status": st}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

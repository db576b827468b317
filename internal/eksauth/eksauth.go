// Package eksauth makes and reads the bearer tokens EKS clusters accept, the way
// aws-iam-authenticator does: a presigned STS GetCallerIdentity URL, with the cluster's name signed
// in as the x-k8s-aws-id header, base64url-encoded after "k8s-aws-v1.". Whoever holds the token can
// prove the caller's identity to STS for a few minutes, and only for that cluster. ExecCredential
// wraps a token for kubectl's exec credential plugins (client.authentication.k8s.io/v1).
package eksauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

const (
	// TokenPrefix starts every EKS token.
	TokenPrefix = "k8s-aws-v1."
	// ClusterIDHeader is the signed header that binds a token to one cluster.
	ClusterIDHeader = "x-k8s-aws-id"
	// Lifetime is how long a token is accepted after it was signed (the authenticator's window).
	Lifetime = 15 * time.Minute
	// presignExpires is the X-Amz-Expires of the presigned URL, as aws-iam-authenticator sets it.
	presignExpires = "60"
)

// Token is a signed EKS token and the time it stops being accepted.
type Token struct {
	Token      string
	Expiration time.Time
}

// NewToken presigns STS GetCallerIdentity with cfg's credentials for the cluster named cluster.
// The STS endpoint is cfg's (AWS_ENDPOINT_URL and friends apply, so the AWS emulator works too).
func NewToken(ctx context.Context, cfg aws.Config, cluster string) (Token, error) {
	if cluster == "" {
		return Token{}, fmt.Errorf("eks token: no cluster name")
	}
	if cfg.Region == "" {
		return Token{}, fmt.Errorf("eks token for %s: no AWS region (set AWS_REGION or a profile's region)", cluster)
	}
	signedAt := time.Now()
	client := sts.NewPresignClient(sts.NewFromConfig(cfg))
	req, err := client.PresignGetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}, func(o *sts.PresignOptions) {
		o.ClientOptions = append(o.ClientOptions, func(so *sts.Options) {
			so.APIOptions = append(so.APIOptions,
				smithyhttp.SetHeaderValue(ClusterIDHeader, cluster),
				smithyhttp.SetHeaderValue("X-Amz-Expires", presignExpires))
		})
	})
	if err != nil {
		return Token{}, fmt.Errorf("eks token for %s: presign sts:GetCallerIdentity: %w", cluster, err)
	}
	return Token{
		Token: TokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(req.URL)),
		// A minute short of the window, so a client never presents a token about to be refused.
		Expiration: signedAt.Add(Lifetime - time.Minute).UTC(),
	}, nil
}

// ParseToken decodes a token into its presigned URL and checks the URL's shape (an STS
// GetCallerIdentity presigned with SigV4, the cluster header signed in). It does not check the
// signature: only STS (or the emulator holding the secret) can.
func ParseToken(token string) (*url.URL, error) {
	b64, ok := strings.CutPrefix(token, TokenPrefix)
	if !ok {
		return nil, fmt.Errorf("not an EKS token (no %q prefix)", TokenPrefix)
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(b64, "="))
	if err != nil {
		return nil, fmt.Errorf("EKS token is not base64url: %w", err)
	}
	u, err := url.Parse(string(raw))
	if err != nil {
		return nil, fmt.Errorf("EKS token does not hold a URL: %w", err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("EKS token URL has scheme %q", u.Scheme)
	}
	q := u.Query()
	if q.Get("Action") != "GetCallerIdentity" || q.Get("Version") != "2011-06-15" {
		return nil, fmt.Errorf("EKS token is not an STS GetCallerIdentity request (Action=%q, Version=%q)", q.Get("Action"), q.Get("Version"))
	}
	if q.Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" || q.Get("X-Amz-Signature") == "" {
		return nil, fmt.Errorf("EKS token URL is not presigned with AWS4-HMAC-SHA256")
	}
	signed := ";" + q.Get("X-Amz-SignedHeaders") + ";"
	if !strings.Contains(signed, ";host;") || !strings.Contains(signed, ";"+ClusterIDHeader+";") {
		return nil, fmt.Errorf("EKS token URL does not sign the host and %s headers (signed: %s)", ClusterIDHeader, q.Get("X-Amz-SignedHeaders"))
	}
	return u, nil
}

// ExecCredential is the client.authentication.k8s.io/v1 object an exec credential plugin prints.
func ExecCredential(t Token) ([]byte, error) {
	doc := map[string]any{
		"kind":       "ExecCredential",
		"apiVersion": "client.authentication.k8s.io/v1",
		"spec":       map[string]any{},
		"status": map[string]any{
			"expirationTimestamp": t.Expiration.Format(time.RFC3339),
			"token":               t.Token,
		},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

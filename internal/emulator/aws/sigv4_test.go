package aws

import (
	"context"
	"encoding/hex"
	"html"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// TestSigV4Refusals: a captured request cannot be replayed with another body (the payload hash
// is the body's, not what X-Amz-Content-Sha256 claims), UNSIGNED-PAYLOAD is refused, and a
// signature must cover the host. Each is answered as the service does: IAM's ErrorResponse
// document, EKS's X-Amzn-ErrorType.
func TestSigV4Refusals(t *testing.T) {
	defer catch(t)
	e := startEmulator(t, "", 0)
	key, secret, _, region := e.Credentials()
	signer := v4.NewSigner()
	const listRoles = "Action=ListRoles&Version=2010-05-08"

	// sign signs a request of service with body, claiming payloadHash in X-Amz-Content-Sha256
	// (none when empty), then sends sent as its body.
	type req struct {
		service, method, path, body, claim, sent string
		noHost                                   bool
	}
	send := func(rq req) (*http.Response, string) {
		r, err := http.NewRequest(rq.method, e.URL+rq.path, strings.NewReader(rq.body))
		if err != nil {
			t.Fatal(err)
		}
		if rq.method == http.MethodPost {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		}
		hash := hexSHA256([]byte(rq.body))
		if rq.claim != "" {
			hash = rq.claim
			r.Header.Set("X-Amz-Content-Sha256", rq.claim)
		}
		now := time.Now()
		if err := signer.SignHTTP(context.Background(), aws.Credentials{AccessKeyID: key, SecretAccessKey: secret}, r, hash, rq.service, region, now); err != nil {
			t.Fatal(err)
		}
		if rq.noHost {
			resignWithoutHost(t, r, secret, rq.service, region, hash, now)
		}
		r.Body = io.NopCloser(strings.NewReader(rq.sent))
		r.ContentLength = int64(len(rq.sent))
		resp := must(http.DefaultClient.Do(r))
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, html.UnescapeString(string(b))
	}

	// The untampered request passes: the refusals below are about the tampering only.
	if resp, body := send(req{service: "iam", method: "POST", path: "/", body: listRoles, claim: hexSHA256([]byte(listRoles)), sent: listRoles}); resp.StatusCode != 200 {
		t.Fatalf("signed ListRoles with its payload hash: %d %s", resp.StatusCode, body)
	}
	for _, tc := range []struct {
		name string
		req  req
		msg  string
	}{
		{"tampered body", req{service: "iam", method: "POST", path: "/", body: listRoles, claim: hexSHA256([]byte(listRoles)),
			sent: "Action=DeleteRole&RoleName=admin&Version=2010-05-08"}, "does not match what was computed"},
		{"unsigned payload", req{service: "iam", method: "POST", path: "/", body: listRoles, claim: unsignedPayload,
			sent: "Action=DeleteRole&RoleName=admin&Version=2010-05-08"}, "UNSIGNED-PAYLOAD"},
		{"host not signed", req{service: "iam", method: "POST", path: "/", body: listRoles, sent: listRoles, noHost: true},
			"'Host' or ':authority' must be a 'SignedHeader'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := send(tc.req)
			if resp.StatusCode != 403 || !strings.Contains(body, "<Code>SignatureDoesNotMatch</Code>") || !strings.Contains(body, "<ErrorResponse") || !strings.Contains(body, tc.msg) {
				t.Fatalf("IAM answered %d %s; want 403 SignatureDoesNotMatch naming %q", resp.StatusCode, body, tc.msg)
			}
		})
	}
	const create = `{"name":"stolen","roleArn":"arn:aws:iam::000000000000:role/x","resourcesVpcConfig":{}}`
	for _, tc := range []struct {
		name string
		req  req
	}{
		{"eks tampered body", req{service: "eks", method: "POST", path: "/clusters", body: "{}", claim: hexSHA256([]byte("{}")), sent: create}},
		{"eks host not signed", req{service: "eks", method: "GET", path: "/clusters", noHost: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := send(tc.req)
			if resp.StatusCode != 403 || resp.Header.Get("X-Amzn-ErrorType") != "InvalidSignatureException" {
				t.Fatalf("EKS answered %d %v %s; want 403 InvalidSignatureException", resp.StatusCode, resp.Header, body)
			}
		})
	}
}

// resignWithoutHost replaces r's signature by a valid one over its signed headers minus host.
func resignWithoutHost(t *testing.T, r *http.Request, secret, service, region, payloadHash string, now time.Time) {
	t.Helper()
	auth := r.Header.Get("Authorization")
	var cred, signed string
	for _, part := range strings.Split(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 "), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			cred = v
		case "SignedHeaders":
			signed = v
		}
	}
	var keep []string
	for _, h := range strings.Split(signed, ";") {
		if h != "host" {
			keep = append(keep, h)
		}
	}
	var hdrs strings.Builder
	for _, h := range keep {
		hdrs.WriteString(h + ":" + strings.TrimSpace(r.Header.Get(h)) + "\n")
	}
	path := r.URL.EscapedPath()
	canonical := strings.Join([]string{r.Method, path, r.URL.RawQuery, hdrs.String(), strings.Join(keep, ";"), payloadHash}, "\n")
	date := now.UTC().Format("20060102")
	scope := date + "/" + region + "/" + service + "/aws4_request"
	toSign := "AWS4-HMAC-SHA256\n" + now.UTC().Format(amzDateFormat) + "\n" + scope + "\n" + hexSHA256([]byte(canonical))
	k := hmacSHA256([]byte("AWS4"+secret), date)
	for _, p := range []string{region, service, "aws4_request"} {
		k = hmacSHA256(k, p)
	}
	sig := hex.EncodeToString(hmacSHA256(k, toSign))
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+cred+", SignedHeaders="+strings.Join(keep, ";")+", Signature="+sig)
}

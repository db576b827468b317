package aws

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// sigv4 holds what a Signature Version 4 request says about itself: the credential scope, the
// signed headers and the signature, from the Authorization header or from a presigned URL's query.
type sigv4 struct {
	AccessKey     string
	Date          string // yyyymmdd of the scope
	Region        string
	Service       string
	SignedHeaders []string
	Signature     string
	Time          time.Time // X-Amz-Date
	Presigned     bool
	Expires       time.Duration // presigned URLs only
}

// authError is an authentication failure; Code is AWS's code for it (the protocol writers turn it
// into each service's own code where they differ).
type authError struct {
	Code string // MissingAuthenticationToken, IncompleteSignature, SignatureDoesNotMatch, InvalidClientTokenId, SignatureExpired
	Msg  string
}

func (e *authError) Error() string { return e.Code + ": " + e.Msg }

const amzDateFormat = "20060102T150405Z"

// unsignedPayload is the payload hash S3 accepts in place of the body's; these services do not.
const unsignedPayload = "UNSIGNED-PAYLOAD"

// parseSigV4 reads the signature fields of r; a request with no signature at all gives
// MissingAuthenticationToken.
func parseSigV4(r *http.Request) (*sigv4, error) {
	q := r.URL.Query()
	var s sigv4
	var cred, signed string
	if auth := r.Header.Get("Authorization"); auth != "" {
		alg, rest, _ := strings.Cut(auth, " ")
		if alg != "AWS4-HMAC-SHA256" {
			return nil, &authError{"IncompleteSignature", fmt.Sprintf("unsupported authorization algorithm %q (the emulator verifies AWS4-HMAC-SHA256)", alg)}
		}
		for _, part := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
			switch k {
			case "Credential":
				cred = v
			case "SignedHeaders":
				signed = v
			case "Signature":
				s.Signature = v
			}
		}
		d := r.Header.Get("X-Amz-Date")
		if d == "" {
			return nil, &authError{"IncompleteSignature", "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."}
		}
		t, err := time.Parse(amzDateFormat, d)
		if err != nil {
			return nil, &authError{"IncompleteSignature", fmt.Sprintf("X-Amz-Date %q is not in the form %s", d, amzDateFormat)}
		}
		s.Time = t
	} else if q.Get("X-Amz-Algorithm") != "" {
		if q.Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" {
			return nil, &authError{"IncompleteSignature", fmt.Sprintf("unsupported X-Amz-Algorithm %q", q.Get("X-Amz-Algorithm"))}
		}
		s.Presigned = true
		cred, signed, s.Signature = q.Get("X-Amz-Credential"), q.Get("X-Amz-SignedHeaders"), q.Get("X-Amz-Signature")
		t, err := time.Parse(amzDateFormat, q.Get("X-Amz-Date"))
		if err != nil {
			return nil, &authError{"IncompleteSignature", fmt.Sprintf("X-Amz-Date %q is not in the form %s", q.Get("X-Amz-Date"), amzDateFormat)}
		}
		s.Time = t
		secs, err := strconv.Atoi(q.Get("X-Amz-Expires"))
		if err != nil || secs <= 0 || secs > 7*24*3600 {
			return nil, &authError{"AuthorizationQueryParametersError", fmt.Sprintf("X-Amz-Expires %q must be a number of seconds between 1 and 604800", q.Get("X-Amz-Expires"))}
		}
		s.Expires = time.Duration(secs) * time.Second
	} else {
		return nil, &authError{"MissingAuthenticationToken", "Request is missing Authentication Token"}
	}
	parts := strings.Split(cred, "/")
	if len(parts) != 5 || parts[4] != "aws4_request" {
		return nil, &authError{"IncompleteSignature", fmt.Sprintf("Credential %q is not of the form ACCESSKEY/DATE/REGION/SERVICE/aws4_request", cred)}
	}
	s.AccessKey, s.Date, s.Region, s.Service = parts[0], parts[1], parts[2], parts[3]
	if signed == "" || s.Signature == "" {
		return nil, &authError{"IncompleteSignature", "the signature lacks SignedHeaders or Signature"}
	}
	s.SignedHeaders = strings.Split(signed, ";")
	if !slices.Contains(s.SignedHeaders, "host") {
		// AWS refuses a signature that does not cover the host: it could be replayed at another endpoint.
		return &s, &authError{"SignatureDoesNotMatch", "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization."}
	}
	return &s, nil
}

// verify checks the signature of r (whose body is body) against secret, at time now.
func (s *sigv4) verify(r *http.Request, body []byte, secret string, now time.Time) error {
	if s.Date != s.Time.Format("20060102") {
		return &authError{"SignatureDoesNotMatch", fmt.Sprintf("Date in Credential scope (%s) does not match YYYYMMDD from ISO-8601 version of date from HTTP (%s)", s.Date, s.Time.Format("20060102"))}
	}
	if s.Presigned {
		if now.After(s.Time.Add(s.Expires)) {
			return &authError{"SignatureExpired", fmt.Sprintf("Request has expired: signed at %s, valid for %s", s.Time.Format(amzDateFormat), s.Expires)}
		}
		if s.Time.After(now.Add(15 * time.Minute)) {
			return &authError{"SignatureExpired", "Request is signed for a time more than 15 minutes in the future"}
		}
	} else if d := now.Sub(s.Time); d > 15*time.Minute || d < -15*time.Minute {
		return &authError{"SignatureExpired", fmt.Sprintf("Signature expired: %s is now earlier than %s (%s - 15 min.)", s.Time.Format(amzDateFormat), now.Add(-15*time.Minute).Format(amzDateFormat), now.Format(amzDateFormat))}
	}
	// EKS, EC2, IAM and STS sign the payload: the hash in the canonical request is the body's own,
	// whatever X-Amz-Content-Sha256 claims (a request whose header names another hash, or
	// UNSIGNED-PAYLOAD, is refused: its body could have been swapped after signing).
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && !s.Presigned {
		if h == unsignedPayload {
			return &authError{"SignatureDoesNotMatch", "UNSIGNED-PAYLOAD is not accepted by this service: sign the request's payload (nuv emulator follows EKS, EC2, IAM and STS)"}
		}
		if !hmac.Equal([]byte(strings.ToLower(h)), []byte(hexSHA256(body))) {
			return &authError{"SignatureDoesNotMatch", "The provided 'x-amz-content-sha256' header does not match what was computed."}
		}
	}
	canonical := s.canonicalRequest(r, body)
	scope := strings.Join([]string{s.Date, s.Region, s.Service, "aws4_request"}, "/")
	toSign := "AWS4-HMAC-SHA256\n" + s.Time.Format(amzDateFormat) + "\n" + scope + "\n" + hexSHA256([]byte(canonical))
	key := hmacSHA256([]byte("AWS4"+secret), s.Date)
	for _, p := range []string{s.Region, s.Service, "aws4_request"} {
		key = hmacSHA256(key, p)
	}
	want := hex.EncodeToString(hmacSHA256(key, toSign))
	if !hmac.Equal([]byte(want), []byte(s.Signature)) {
		return &authError{"SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."}
	}
	return nil
}

// canonicalRequest builds the SigV4 canonical request of r from the headers it says it signed.
func (s *sigv4) canonicalRequest(r *http.Request, body []byte) string {
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	// Every service but S3 escapes the (already escaped) path once more.
	path = escapePath(path)

	var pairs []string
	for k, vs := range r.URL.Query() {
		if s.Presigned && k == "X-Amz-Signature" {
			continue
		}
		for _, v := range vs {
			pairs = append(pairs, awsEscape(k)+"="+awsEscape(v))
		}
	}
	sort.Strings(pairs)

	var headers strings.Builder
	for _, h := range s.SignedHeaders {
		var v string
		switch h {
		case "host":
			v = r.Host
		case "content-length":
			v = r.Header.Get("Content-Length")
			if v == "" {
				v = strconv.FormatInt(r.ContentLength, 10)
			}
		default:
			vals := r.Header.Values(h)
			clean := make([]string, len(vals))
			for i, x := range vals {
				clean[i] = strings.Join(strings.Fields(x), " ")
			}
			v = strings.Join(clean, ",")
		}
		headers.WriteString(h + ":" + strings.TrimSpace(v) + "\n")
	}

	payload := hexSHA256(body)
	return strings.Join([]string{r.Method, path, strings.Join(pairs, "&"), headers.String(), strings.Join(s.SignedHeaders, ";"), payload}, "\n")
}

// awsEscape is SigV4's URI encoding: everything but unreserved characters percent-encoded.
func awsEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// escapePath encodes a path as awsEscape does, keeping the slashes.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = awsEscape(s)
	}
	return strings.Join(segs, "/")
}

func hexSHA256(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// parseForm merges the query string and a form-encoded body (the query protocol's parameters).
func parseForm(body []byte, r *http.Request) (url.Values, error) {
	vals := r.URL.Query()
	if len(body) > 0 {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, fmt.Errorf("malformed form body: %w", err)
		}
		for k, v := range form {
			vals[k] = append(vals[k], v...)
		}
	}
	return vals, nil
}

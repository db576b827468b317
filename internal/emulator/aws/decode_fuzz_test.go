package aws

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// fuzzServer is one emulator for a fuzz run: its handler is called directly (no listener, so no
// background work: nothing makes control planes), with state in a temporary directory; it is
// made anew every few thousand inputs so its state stays small.
type fuzzServer struct {
	s    *Server
	uses int
}

func (f *fuzzServer) get(t *testing.T) *Server {
	if f.s == nil || f.uses >= 2000 {
		s, err := New(Options{Dir: t.TempDir(), Machines: newMemMachines()})
		if err != nil {
			t.Fatal(err)
		}
		f.s, f.uses = s, 0
	}
	f.uses++
	return f.s
}

// signed is a request signed with the emulator's credentials, as the SDKs send it.
func signed(t *testing.T, s *Server, service, method, target string, body []byte, contentType string) *http.Request {
	req, err := http.NewRequest(method, target, bytes.NewReader(body))
	if err != nil {
		return nil
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	key, secret, _, region := s.Credentials()
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: key, SecretAccessKey: secret}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), service, region, time.Now()); err != nil {
		t.Fatal(err)
	}
	return req
}

// FuzzQueryProtocol sends signed AWS query-protocol requests (EC2, IAM, STS: form-encoded
// Action=...&Param.N=...) with arbitrary bodies to the emulator: it must never panic, and every
// answer is well-formed XML (or JSON when asked for) with a status the protocol uses.
func FuzzQueryProtocol(f *testing.F) {
	f.Add(uint8(0), "Action=CreateVpc&Version=2016-11-15&CidrBlock=10.0.0.0%2F16&TagSpecification.1.ResourceType=vpc&TagSpecification.1.Tag.1.Key=Name&TagSpecification.1.Tag.1.Value=v")
	f.Add(uint8(0), "Action=DescribeSubnets&Version=2016-11-15&Filter.1.Name=vpc-id&Filter.1.Value.1=vpc-1&SubnetId.3=x&SubnetId.1=y")
	f.Add(uint8(0), "Action=RunInstances&Version=2016-11-15&MinCount=1&MaxCount=99999999999999999999&InstanceType=m5.large")
	f.Add(uint8(1), "Action=CreateRole&Version=2010-05-08&RoleName=r&AssumeRolePolicyDocument=%7B%22Version%22%3A1%7D")
	f.Add(uint8(2), "Action=GetCallerIdentity&Version=2011-06-15")
	f.Add(uint8(1), "Action=%ZZ&&==")
	srv := &fuzzServer{}
	services := []string{"ec2", "iam", "sts"}
	f.Fuzz(func(t *testing.T, svc uint8, body string) {
		s := srv.get(t)
		service := services[int(svc)%len(services)]
		req := signed(t, s, service, http.MethodPost, "http://127.0.0.1/", []byte(body), "application/x-www-form-urlencoded; charset=utf-8")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		checkAnswer(t, rec, body)
	})
}

// FuzzRestJSON sends signed EKS restJson1 requests (method, path with labels and query, JSON
// body) to the emulator: it must never panic, and every answer is well-formed JSON with a status
// the protocol uses.
func FuzzRestJSON(f *testing.F) {
	f.Add(uint8(1), "clusters", `{"name":"c","version":"1.33","roleArn":"arn:aws:iam::000000000000:role/r","resourcesVpcConfig":{"subnetIds":["subnet-1","subnet-2"]}}`)
	f.Add(uint8(1), "clusters/c/node-groups", `{"nodegroupName":"ng","scalingConfig":{"minSize":1,"maxSize":-3,"desiredSize":1e99},"subnets":[null],"labels":{"":""}}`)
	f.Add(uint8(0), "clusters/c/updates?nextToken=%zz&maxResults=-1", "")
	f.Add(uint8(2), "clusters/%2e%2e/addons/x", "")
	f.Add(uint8(1), "clusters/c/update-config", `{"logging":{"clusterLogging":[{"types":["api"],"enabled":true},{}]},"resourcesVpcConfig":{}}`)
	f.Add(uint8(1), "tags/arn:aws:eks:us-east-1:000000000000:cluster%2Fc", `{"tags":{"k":"v"}}`)
	srv := &fuzzServer{}
	methods := []string{http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodPut}
	f.Fuzz(func(t *testing.T, m uint8, path, body string) {
		s := srv.get(t)
		u, err := url.Parse("http://127.0.0.1/" + strings.TrimPrefix(path, "/"))
		if err != nil || u.Host != "127.0.0.1" || u.Path == "" || u.Path == "/" {
			return // not a request an HTTP client sends; the query protocol has "/"
		}
		req := signed(t, s, "eks", methods[int(m)%len(methods)], u.String(), []byte(body), "application/json")
		if req == nil {
			return
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		checkAnswer(t, rec, body)
	})
}

// checkAnswer fails unless the emulator answered with a status the AWS protocols use and a
// well-formed body.
func checkAnswer(t *testing.T, rec *httptest.ResponseRecorder, in string) {
	t.Helper()
	if rec.Code < 200 || rec.Code > 599 {
		t.Fatalf("status %d for %q", rec.Code, in)
	}
	if rec.Code == http.StatusInternalServerError {
		t.Fatalf("internal error for %q: %s", in, rec.Body.Bytes())
	}
	b := rec.Body.Bytes()
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	if strings.Contains(rec.Header().Get("Content-Type"), "json") {
		if !json.Valid(b) {
			t.Fatalf("malformed JSON answer for %q: %s", in, b)
		}
		return
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				return
			}
			t.Fatalf("malformed XML answer for %q: %v\n%s", in, err, b)
		}
	}
}

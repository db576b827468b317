package aws

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEC2WithoutContainerRuntime: with a container runtime that does not answer (DOCKER_HOST at a
// socket nobody listens on), the EC2 calls that only read work and RunInstances is refused with
// EC2's capacity error, never an InternalError. The requests are EC2 Query requests written from
// EC2's API reference, signed with SigV4.
func TestEC2WithoutContainerRuntime(t *testing.T) {
	dead := "unix://" + filepath.Join(t.TempDir(), "docker.sock")
	env := map[string]string{"DOCKER_HOST": dead, "KIND_EXPERIMENTAL_PROVIDER": "docker"}
	m := NewContainerMachines("", nil)
	m.Getenv = func(k string) string { return env[k] }
	e := startEmulatorWith(t, Options{Machines: m})
	m.Account = e.St.Account
	call := func(form url.Values) (int, string, []byte) {
		t.Helper()
		form.Set("Version", "2016-11-15")
		resp, err := http.DefaultClient.Do(signed(t, e.Server, "ec2", "POST", e.URL+"/", []byte(form.Encode()), "application/x-www-form-urlencoded; charset=utf-8"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var er struct {
			Errors []struct {
				Code    string `xml:"Code"`
				Message string `xml:"Message"`
			} `xml:"Errors>Error"`
		}
		_ = xml.Unmarshal(b, &er)
		code := ""
		if len(er.Errors) > 0 {
			code = er.Errors[0].Code
		}
		return resp.StatusCode, code, b
	}
	for _, tc := range []struct {
		name   string
		form   url.Values
		status int
		code   string
		body   string
	}{
		{"DescribeImages", url.Values{"Action": {"DescribeImages"}, "Owner.1": {"self"}}, 200, "", "<imagesSet"},
		{"DescribeImages of an unknown id", url.Values{"Action": {"DescribeImages"}, "ImageId.1": {"ami-0123456789abcdef0"}}, 400, "InvalidAMIID.NotFound", "ami-0123456789abcdef0"},
		{"DescribeInstances", url.Values{"Action": {"DescribeInstances"}}, 200, "", "<reservationSet"},
		{"DescribeInstanceTypes", url.Values{"Action": {"DescribeInstanceTypes"}, "InstanceType.1": {"t3.micro"}}, 200, "", "t3.micro"},
		{"RunInstances", url.Values{"Action": {"RunInstances"}, "ImageId": {"ami-0123456789abcdef0"}, "InstanceType": {"t3.micro"}, "MinCount": {"1"}, "MaxCount": {"1"}},
			503, "InsufficientInstanceCapacity", "do not have sufficient capacity"},
	} {
		st, code, b := call(tc.form)
		if st != tc.status || code != tc.code || !strings.Contains(string(b), tc.body) {
			t.Errorf("%s: %d %s %s; want %d %q (%s)", tc.name, st, code, b, tc.status, tc.code, tc.body)
		}
		if st == 500 || code == "InternalError" {
			t.Errorf("%s answered %d %s", tc.name, st, code)
		}
	}
	// An image the emulator served before (its state dates it) is still listed, and found by id.
	ref := "nuv.dev/node:v1.35.0-abc"
	e.Mu.Lock()
	ec := e.ec2()
	if ec.ImagesSeen == nil {
		ec.ImagesSeen = map[string]time.Time{}
	}
	ec.ImagesSeen[ref] = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e.Mu.Unlock()
	id := "ami-0" + stableHex(ref, 16)
	st, code, b := call(url.Values{"Action": {"DescribeImages"}, "ImageId.1": {id}})
	if st != 200 || code != "" || !strings.Contains(string(b), "<imageId>"+id+"</imageId>") || !strings.Contains(string(b), "2026-01-02T03:04:05Z") {
		t.Errorf("DescribeImages of a known image without a runtime: %d %s %s", st, code, b)
	}
}

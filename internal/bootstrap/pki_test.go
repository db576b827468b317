package bootstrap

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"testing"
)

// TestIssueVerifies: member, peer and client certificates nuv issues verify against the CA for
// their usages and names, and a CA read back from its files signs the same way.
func TestIssueVerifies(t *testing.T) {
	ca, err := NewCA("etcd-ca", now())
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseCA(ca.CertPEM, ca.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	for _, tc := range []struct {
		name  string
		req   CertRequest
		usage x509.ExtKeyUsage
		host  string
	}{
		{"server", CertRequest{CommonName: "etcd-0", Hosts: []string{"etcd-0", "127.0.0.1", "10.0.3.1"}, Server: true, Client: true}, x509.ExtKeyUsageServerAuth, "10.0.3.1"},
		{"peer as client", CertRequest{CommonName: "etcd-0", Hosts: []string{"10.0.3.1"}, Server: true, Client: true}, x509.ExtKeyUsageClientAuth, ""},
		{"apiserver client", CertRequest{CommonName: "kube-apiserver-etcd-client", Client: true}, x509.ExtKeyUsageClientAuth, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crtPEM, keyPEM, err := back.Issue(tc.req, now())
			if err != nil {
				t.Fatal(err)
			}
			if blk, _ := pem.Decode(keyPEM); blk == nil || blk.Type != "EC PRIVATE KEY" {
				t.Fatalf("key is not an EC PRIVATE KEY PEM")
			}
			blk, _ := pem.Decode(crtPEM)
			crt, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			opts := x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{tc.usage}}
			if tc.host != "" {
				opts.DNSName = tc.host
			}
			if _, err := crt.Verify(opts); err != nil {
				t.Errorf("verify: %v", err)
			}
			if tc.host != "" && !crt.IPAddresses[len(crt.IPAddresses)-1].Equal(net.ParseIP(tc.host)) {
				t.Errorf("IP SANs %v", crt.IPAddresses)
			}
		})
	}
	if _, err := ParseCA(ca.CertPEM, []byte("junk")); err == nil {
		t.Error("ParseCA of a bad key: no error")
	}
	leaf, key, _ := ca.Issue(CertRequest{CommonName: "x", Client: true}, now())
	if _, err := ParseCA(leaf, key); err == nil {
		t.Error("ParseCA of a leaf certificate: no error")
	}
}

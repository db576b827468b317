package localkube

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// keyPair is a certificate and its private key.
type keyPair struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// certSpec describes one leaf certificate.
type certSpec struct {
	File   string // base name under pki/ (FILE.crt, FILE.key)
	CN     string
	Orgs   []string
	Server bool
	Client bool
	DNS    []string
	IPs    []net.IP
}

// Certificates a local cluster uses; all signed by one CA, valid for ten years.
func certSpecs() []certSpec {
	lo := []net.IP{net.ParseIP("127.0.0.1")}
	return []certSpec{
		{File: "apiserver", CN: "kube-apiserver", Server: true,
			DNS: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
			IPs: append(lo, net.ParseIP("10.96.0.1"))},
		{File: "etcd", CN: "etcd", Server: true, Client: true, DNS: []string{"localhost"}, IPs: lo},
		{File: "apiserver-etcd-client", CN: "kube-apiserver-etcd-client", Client: true},
		{File: "admin", CN: "kubernetes-admin", Orgs: []string{"system:masters"}, Client: true},
		{File: "controller-manager", CN: "system:kube-controller-manager", Client: true},
		{File: "scheduler", CN: "system:kube-scheduler", Client: true},
		{File: "kwok", CN: "kwok-controller", Orgs: []string{"system:masters"}, Client: true},
	}
}

// generatePKI writes the CA, every leaf certificate and the service-account key pair into dir.
// Keys are mode 0600.
func generatePKI(dir string) error {
	ca, err := newCA()
	if err != nil {
		return err
	}
	if err := writePair(dir, "ca", ca); err != nil {
		return err
	}
	for _, s := range certSpecs() {
		kp, err := newLeaf(ca, s)
		if err != nil {
			return fmt.Errorf("certificate %s: %w", s.File, err)
		}
		if err := writePair(dir, s.File, kp); err != nil {
			return err
		}
	}
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("service-account key: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(sa)
	if err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644)
}

func newCA() (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "nuv-local-ca", Organization: []string{"nuv"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return keyPair{}, fmt.Errorf("CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	return keyPair{Cert: cert, Key: key}, err
}

func newLeaf(ca keyPair, s certSpec) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: s.CN, Organization: s.Orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		DNSNames:     s.DNS,
		IPAddresses:  s.IPs,
	}
	if s.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if s.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return keyPair{}, err
	}
	cert, err := x509.ParseCertificate(der)
	return keyPair{Cert: cert, Key: key}, err
}

func writePair(dir, name string, kp keyPair) error {
	keyDER, err := x509.MarshalPKCS8PrivateKey(kp.Key)
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(filepath.Join(dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: kp.Cert.Raw}), 0o644)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// readPEM reads a file of the PKI directory.
func readPEM(dir, name string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return b, nil
}

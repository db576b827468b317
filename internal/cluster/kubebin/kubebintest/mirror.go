// Package kubebintest gives tests a release mirror: a real HTTPS server on loopback, signed by a
// test CA, serving the download layouts of the Kubernetes, etcd and kwok releases (the layouts
// package kubebin fetches from), with HTTP Range support, a request log, and faults on demand (a
// connection that stops mid-file, a file that does not match its checksum).
package kubebintest

import (
	"archive/tar"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/kubebin"
)

// Mirror is a running release mirror.
type Mirror struct {
	// URL is the server's base URL (https://127.0.0.1:PORT); the layouts live under /k8s, /etcd
	// and /kwok.
	URL string
	// CAFile is the PEM file of the CA that signed the server's certificate.
	CAFile string

	srv      *httptest.Server
	mu       sync.Mutex
	files    map[string]string // URL path -> file on disk
	cuts     map[string]int64  // URL path -> stop the next whole-file response after this many bytes
	silent   map[string]bool   // URL path -> never answer (until the client gives up)
	requests []Request
}

// Request is one request the mirror answered.
type Request struct {
	Path  string
	Range string // the Range header, "" for a whole file
}

// Start starts a mirror on loopback; it stops in t.Cleanup.
func Start(t testing.TB) *Mirror {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "nuv test mirror CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost", ProxiedHost},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	m := &Mirror{CAFile: filepath.Join(dir, "ca.crt"), files: map[string]string{}, cuts: map[string]int64{}, silent: map[string]bool{}}
	if err := os.WriteFile(m.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	m.srv = httptest.NewUnstartedServer(http.HandlerFunc(m.serve))
	m.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // clients the tests make distrust it on purpose
	m.srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	m.srv.StartTLS()
	m.URL = m.srv.URL
	t.Cleanup(m.srv.Close)
	return m
}

// Env is the settings that point nuv at this mirror (NUV_KUBE_MIRROR, NUV_ETCD_MIRROR,
// NUV_KWOK_MIRROR, NUV_DOWNLOAD_CA_FILE), as KEY=VALUE.
func (m *Mirror) Env() []string {
	return []string{
		kubebin.EnvKubernetesMirror + "=" + m.URL + "/k8s",
		kubebin.EnvEtcdMirror + "=" + m.URL + "/etcd",
		kubebin.EnvKwokMirror + "=" + m.URL + "/kwok",
		"NUV_DOWNLOAD_CA_FILE=" + m.CAFile,
	}
}

// Mirrors are the kubebin base URLs of this mirror.
func (m *Mirror) Mirrors() kubebin.Mirrors {
	return kubebin.Mirrors{Kubernetes: m.URL + "/k8s", Etcd: m.URL + "/etcd", Kwok: m.URL + "/kwok"}
}

// Serve publishes the file at path (on disk: file) under urlPath.
func (m *Mirror) Serve(urlPath, file string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[urlPath] = file
}

// CutNext makes the next whole-file response for urlPath stop after n bytes (the connection drops).
func (m *Mirror) CutNext(urlPath string, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cuts[urlPath] = n
}

// Silence makes requests for urlPath hang without an answer until the client gives up.
func (m *Mirror) Silence(urlPath string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.silent[urlPath] = true
}

// Requests returns the requests answered for urlPath, in order.
func (m *Mirror) Requests(urlPath string) []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Request
	for _, r := range m.requests {
		if r.Path == urlPath {
			out = append(out, r)
		}
	}
	return out
}

func (m *Mirror) serve(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.requests = append(m.requests, Request{Path: r.URL.Path, Range: r.Header.Get("Range")})
	file, ok := m.files[r.URL.Path]
	silent := m.silent[r.URL.Path]
	cut, cutting := m.cuts[r.URL.Path]
	if cutting && r.Header.Get("Range") == "" {
		delete(m.cuts, r.URL.Path)
	} else {
		cutting = false
	}
	m.mu.Unlock()
	if silent {
		<-r.Context().Done()
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	f, err := os.Open(file)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer f.Close()
	st, _ := f.Stat()
	if cutting {
		w = &cutWriter{ResponseWriter: w, left: cut}
	}
	http.ServeContent(w, r, filepath.Base(file), st.ModTime(), f)
}

// cutWriter stops a response after left bytes by aborting the handler: the client sees the
// connection close mid-body.
type cutWriter struct {
	http.ResponseWriter
	left int64
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		_, _ = c.ResponseWriter.Write(p[:c.left])
		c.left = 0
		if f, ok := c.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	}
	c.left -= int64(len(p))
	return c.ResponseWriter.Write(p)
}

// Layout is where a release's files sit on the mirror.
type Layout struct {
	Binary map[string]string // component -> URL path of the file downloaded for it
	Sums   map[string]string // component -> URL path of its checksum file ("" for kwok)
}

// FillRelease publishes bins (component -> binary on disk) as release rel for goos/goarch in the
// upstream layouts: dl.k8s.io's binaries with a .sha256 beside each, etcd's archive (.tar.gz) with
// a SHA256SUMS that also lists other platforms, kwok's bare binary. kwok publishes no checksum file,
// so the returned release pins kwok's sum (and nothing else), as nuv's table would.
func (m *Mirror) FillRelease(t testing.TB, rel kubebin.Release, goos, goarch string, bins map[string]string) (kubebin.Release, Layout) {
	t.Helper()
	dir := t.TempDir()
	lay := Layout{Binary: map[string]string{}, Sums: map[string]string{}}
	rel.Pins = map[string]string{}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		p := fmt.Sprintf("/k8s/release/v%s/bin/%s/%s/%s", rel.Kubernetes, goos, goarch, c)
		m.Serve(p, bins[c])
		sum := filepath.Join(dir, c+".sha256")
		writeFile(t, sum, SHA256(t, bins[c])+"\n")
		m.Serve(p+".sha256", sum)
		lay.Binary[c], lay.Sums[c] = p, p+".sha256"
	}
	base := fmt.Sprintf("etcd-v%s-%s-%s", rel.Etcd, goos, goarch)
	archive := filepath.Join(dir, base+".tar.gz")
	TarGz(t, archive, map[string]string{base + "/etcd": bins["etcd"]})
	p := fmt.Sprintf("/etcd/v%s/%s.tar.gz", rel.Etcd, base)
	m.Serve(p, archive)
	sums := filepath.Join(dir, "SHA256SUMS")
	other := strings.Repeat("ab", 32)
	writeFile(t, sums, fmt.Sprintf("%s  etcd-v%s-darwin-arm64.zip\n%s  %s.tar.gz\n%s  etcd-v%s-linux-ppc64le.tar.gz\n", other, rel.Etcd, SHA256(t, archive), base, other, rel.Etcd))
	m.Serve(fmt.Sprintf("/etcd/v%s/SHA256SUMS", rel.Etcd), sums)
	lay.Binary["etcd"], lay.Sums["etcd"] = p, fmt.Sprintf("/etcd/v%s/SHA256SUMS", rel.Etcd)
	p = fmt.Sprintf("/kwok/v%s/kwok-%s-%s", rel.Kwok, goos, goarch)
	m.Serve(p, bins["kwok"])
	lay.Binary["kwok"] = p
	rel.Pins[kubebin.PinKey("kwok", goos, goarch)] = SHA256(t, bins["kwok"])
	return rel, lay
}

// SHA256 is the hex SHA-256 of a file.
func SHA256(t testing.TB, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TarGz writes a .tar.gz holding members (name in the archive -> file on disk), compressed fast.
func TarGz(t testing.TB, archive string, members map[string]string) {
	t.Helper()
	out, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	gz, _ := gzip.NewWriterLevel(out, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	for name, file := range members {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: st.Size(), Typeflag: tar.TypeReg, ModTime: st.ModTime()}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ProxiedHost is a name only the test proxy (StartProxy) resolves, to the mirror on loopback: Go
// never sends requests for loopback addresses through a proxy, so a test of proxying needs a name.
const ProxiedHost = "mirror.nuv.test"

// ProxiedMirrors are the base URLs of the mirror under ProxiedHost, reachable only through the
// proxy StartProxy starts.
func (m *Mirror) ProxiedMirrors() kubebin.Mirrors {
	base := "https://" + ProxiedHost + ":" + m.port()
	return kubebin.Mirrors{Kubernetes: base + "/k8s", Etcd: base + "/etcd", Kwok: base + "/kwok"}
}

func (m *Mirror) port() string {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(m.URL, "https://"))
	return port
}

// Proxy is an HTTP CONNECT proxy on loopback that knows ProxiedHost as the loopback address.
type Proxy struct {
	URL     string // http://127.0.0.1:PORT
	mu      sync.Mutex
	tunnels []string
}

// Tunnels returns the CONNECT targets the proxy opened, in order.
func (p *Proxy) Tunnels() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.tunnels...)
}

// StartProxy starts a CONNECT proxy; it stops in t.Cleanup.
func StartProxy(t testing.TB) *Proxy {
	t.Helper()
	p := &Proxy{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		host, port, err := net.SplitHostPort(r.Host)
		if err != nil || host != ProxiedHost {
			http.Error(w, "unknown host "+r.Host, http.StatusBadGateway)
			return
		}
		up, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		p.mu.Lock()
		p.tunnels = append(p.tunnels, r.Host)
		p.mu.Unlock()
		hj, ok := w.(http.Hijacker)
		if !ok {
			up.Close()
			http.Error(w, "no hijack", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
		down, buf, err := hj.Hijack()
		if err != nil {
			up.Close()
			return
		}
		go func() {
			defer up.Close()
			defer down.Close()
			go func() { _, _ = io.Copy(up, buf) }()
			_, _ = io.Copy(down, up)
		}()
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

package kubebin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"golang.org/x/net/http/httpproxy"
)

// Downloader fetches release files over HTTPS: resumable (an interrupted file continues from the
// bytes it has, with an HTTP Range request), bounded in time (a stalled transfer and a file taking
// too long are errors saying so), with progress lines.
type Downloader struct {
	// Client makes the requests; NewClient builds the usual one.
	Client *http.Client
	Log    cli.Logger
	// Stall ends an attempt when no byte arrives for this long (default 30 s).
	Stall time.Duration
	// Timeout bounds one file, resumes included (default 15 min).
	Timeout time.Duration
	// Attempts is how many times a file is tried, each one resuming the last (default 4).
	Attempts int
	// Every is the interval of progress lines (default 2 s).
	Every time.Duration
}

// NewClient returns the HTTP client for release downloads: proxies from the standard environment
// variables read through getenv (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, or their lower-case forms; nil
// reads the process environment), TLS 1.2 or later, the system's roots plus the PEM certificates
// of caFile when it is set (a mirror signed by a private CA).
func NewClient(caFile string, getenv func(string) string) (*http.Client, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	either := func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return getenv(strings.ToLower(k))
	}
	proxy := (&httpproxy.Config{HTTPProxy: either("HTTP_PROXY"), HTTPSProxy: either("HTTPS_PROXY"), NoProxy: either("NO_PROXY")}).ProxyFunc()
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("download CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("download CA file %s holds no PEM certificate", caFile)
		}
		tc.RootCAs = pool
	}
	tr := &http.Transport{
		Proxy:                 func(r *http.Request) (*neturl.URL, error) { return proxy(r.URL) },
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tc,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   4,
	}
	return &http.Client{Transport: tr}, nil
}

func (d Downloader) log() cli.Logger {
	if d.Log == nil {
		return cli.Quiet()
	}
	return d.Log
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// permanentError is a failure another attempt cannot fix (an HTTP 404, a certificate the client
// does not trust, a host that does not answer at all).
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

// Fetch downloads url into partial, continuing from partial's current size when the server
// supports ranges. partial is only ever a partial file: the caller verifies and moves it.
func (d Downloader) Fetch(ctx context.Context, url, partial, label string) error {
	timeout := orDefault(d.Timeout, 15*time.Minute)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	attempts := orDefault(d.Attempts, 4)
	var err error
	for attempt := 1; attempt <= attempts; attempt++ {
		var got int64
		got, err = d.attempt(ctx, url, partial, label)
		if err == nil {
			return nil
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("download %s: not finished within %s (%v)", url, timeout, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var perm permanentError
		if errors.As(err, &perm) || attempt == attempts {
			break
		}
		have := int64(0)
		if st, serr := os.Stat(partial); serr == nil {
			have = st.Size()
		}
		d.log().Infof("  %s: %v after %s; resuming at %s (attempt %d of %d)", label, firstLine(err), mb(got), mb(have), attempt+1, attempts)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 300 * time.Millisecond):
		}
	}
	return fmt.Errorf("download %s: %w", url, err)
}

// attempt makes one request and appends what arrives to partial; it returns the bytes received.
func (d Downloader) attempt(ctx context.Context, url, partial, label string) (int64, error) {
	var off int64
	if st, err := os.Stat(partial); err == nil {
		off = st.Size()
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, url, nil)
	if err != nil {
		return 0, permanentError{err}
	}
	if off > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", off))
	}
	resp, err := d.Client.Do(req)
	if err != nil {
		if isDialError(err) || isCertError(err) {
			return 0, permanentError{err}
		}
		return 0, err
	}
	defer resp.Body.Close()
	flags := os.O_WRONLY | os.O_CREATE
	switch resp.StatusCode {
	case http.StatusOK:
		off = 0
		flags |= os.O_TRUNC
	case http.StatusPartialContent:
		start, err := rangeStart(resp.Header.Get("Content-Range"))
		if err != nil || start != off {
			os.Remove(partial)
			return 0, fmt.Errorf("server answered range %d- with %q; starting over", off, resp.Header.Get("Content-Range"))
		}
		flags |= os.O_APPEND
	case http.StatusRequestedRangeNotSatisfiable:
		os.Remove(partial)
		return 0, fmt.Errorf("server cannot continue at byte %d; starting over", off)
	default:
		err := fmt.Errorf("GET %s: %s", url, resp.Status)
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests {
			return 0, permanentError{err}
		}
		return 0, err
	}
	total := int64(-1)
	if resp.ContentLength >= 0 {
		total = off + resp.ContentLength
	}
	if off == 0 && total > 0 {
		d.log().Infof("  %s: %s from %s", label, mb(total), hostOf(url))
	}
	f, err := os.OpenFile(partial, flags, 0o644)
	if err != nil {
		return 0, permanentError{fmt.Errorf("download %s: %w", label, err)}
	}
	defer f.Close()

	stall := orDefault(d.Stall, 30*time.Second)
	var stalled atomic.Bool
	watchdog := time.AfterFunc(stall, func() { stalled.Store(true); cancel() })
	defer watchdog.Stop()
	every := orDefault(d.Every, 2*time.Second)
	start, last := time.Now(), time.Now()
	var got int64
	buf := make([]byte, 256<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			watchdog.Reset(stall)
			if _, err := f.Write(buf[:n]); err != nil {
				return got, permanentError{fmt.Errorf("download %s: %w", label, err)}
			}
			got += int64(n)
			if time.Since(last) >= every {
				last = time.Now()
				d.log().Infof("  %s", progressLine(label, off+got, total, got, time.Since(start)))
			}
		}
		if rerr == io.EOF {
			if total >= 0 && off+got != total {
				return got, fmt.Errorf("connection closed at %s of %s", mb(off+got), mb(total))
			}
			return got, nil
		}
		if rerr != nil {
			if stalled.Load() {
				return got, fmt.Errorf("no data for %s", stall)
			}
			if ctx.Err() != nil {
				return got, ctx.Err()
			}
			return got, fmt.Errorf("connection lost: %w", rerr)
		}
	}
}

// Small downloads a file of at most max bytes (a checksum file) into memory.
func (d Downloader) Small(ctx context.Context, url string, max int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, orDefault(d.Timeout, 15*time.Minute))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := d.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", url, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("download %s: larger than %d bytes: not a checksum file", url, max)
	}
	return b, nil
}

func rangeStart(cr string) (int64, error) {
	// "bytes 100-199/200"
	rest, ok := strings.CutPrefix(cr, "bytes ")
	if !ok {
		return 0, fmt.Errorf("bad Content-Range %q", cr)
	}
	s, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, fmt.Errorf("bad Content-Range %q", cr)
	}
	return strconv.ParseInt(s, 10, 64)
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func isCertError(err error) bool {
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var tv *tls.CertificateVerificationError
	return errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) || errors.As(err, &tv)
}

func progressLine(label string, have, total, got int64, elapsed time.Duration) string {
	rate := ""
	if s := elapsed.Seconds(); s > 0 {
		rate = fmt.Sprintf(", %.1f MB/s", float64(got)/1e6/s)
	}
	if total > 0 {
		return fmt.Sprintf("%s: %s of %s (%d%%)%s", label, mb(have), mb(total), have*100/total, rate)
	}
	return fmt.Sprintf("%s: %s%s", label, mb(have), rate)
}

func hostOf(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.Index(u[i+3:], "/"); j >= 0 {
			return u[:i+3+j]
		}
	}
	return u
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func firstLine(err error) string {
	l, _, _ := strings.Cut(err.Error(), "\n")
	return l
}

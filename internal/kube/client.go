package kube

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Client timeouts. Watches and streams (watch=true, follow=true, upgrades) are not bounded by
// RequestTimeout: they end with their context.
const (
	DialTimeout    = 3 * time.Second
	RequestTimeout = 30 * time.Second
)

// RESTConfig builds a client configuration from the kubeconfig at path (its current-context, or its
// only context), with a bounded dial (DialTimeout) and a bounded time for every non-streaming
// request (RequestTimeout); watches and log follows are bounded by their context only. Client-side
// rate limits are raised (QPS 50, burst 100) for the short bursts nuv's verbs make.
func RESTConfig(path string) (*rest.Config, error) {
	cfg, ctxName, err := loadKubeconfig(path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	rc, err := clientcmd.NewNonInteractiveClientConfig(*cfg, ctxName, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	dialer := &net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}
	rc.Dial = dialer.DialContext
	rc.QPS, rc.Burst = 50, 100
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &timeoutRT{rt: rt, d: RequestTimeout} })
	return rc, nil
}

// timeoutRT bounds a non-streaming request (including reading its body) to d.
type timeoutRT struct {
	rt http.RoundTripper
	d  time.Duration
}

func (t *timeoutRT) RoundTrip(req *http.Request) (*http.Response, error) {
	if streaming(req) {
		return t.rt.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.d)
	resp, err := t.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// WrappedRoundTripper lets client-go's transport debugging see through the wrapper.
func (t *timeoutRT) WrappedRoundTripper() http.RoundTripper { return t.rt }

func streaming(req *http.Request) bool {
	q := req.URL.Query()
	if q.Get("watch") == "true" || q.Get("watch") == "1" || q.Get("follow") == "true" {
		return true
	}
	if req.Header.Get("Upgrade") != "" || strings.Contains(strings.ToLower(req.Header.Get("Connection")), "upgrade") {
		return true
	}
	return strings.Contains(req.URL.Path, "/watch/")
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// Get does one GET of path (with query, may be nil) on the API server of cfg through client-go's
// transport (its credentials, exec plugins, TLS and RESTConfig's timeouts), asking for JSON, and
// returns the status code and the body (at most 64 MiB). It is what the slim front and the
// inventory ask the API with: no clientset, no scheme.
func Get(ctx context.Context, cfg *rest.Config, path string, query url.Values) (code int, body []byte, err error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, nil, fmt.Errorf("client: %w", err)
	}
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return 0, nil, fmt.Errorf("client: %w", err)
	}
	u := base.JoinPath(path)
	if len(query) > 0 {
		u.RawQuery = query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if cfg.UserAgent != "" {
		req.Header.Set("User-Agent", cfg.UserAgent)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, body, nil
}

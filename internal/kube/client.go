package kube

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
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

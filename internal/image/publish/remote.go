// Package publish delivers built image indexes: to a remote registry (per-layer progress, retries,
// the login keychain), to an OCI image layout or archive on disk, or into a kind cluster's nodes as
// a single-platform archive.
package publish

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/errgroup"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image"
	"github.com/nuv-dev/nuv/internal/image/login"
)

// Remote pushes an index, its manifests and their layers to a registry.
type Remote struct {
	// Keychain authenticates (login.NewKeychain); nil means anonymous.
	Keychain authn.Keychain
	// Transport is the HTTP transport (default http.DefaultTransport).
	Transport http.RoundTripper
	// Log gets one line per layer pushed.
	Log cli.Logger
	// Jobs is the number of concurrent uploads (default 4).
	Jobs int
	// Retries is the number of attempts for transient failures (default 3).
	Retries int
}

var _ image.Publisher = (*Remote)(nil)

// auth returns the keychain and transport to use: r's, or anonymous and http.DefaultTransport.
func (r *Remote) auth() (authn.Keychain, http.RoundTripper) {
	kc := r.Keychain
	if kc == nil {
		kc = authn.NewMultiKeychain()
	}
	rt := r.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	return kc, rt
}

func (r *Remote) options(ctx context.Context) []remote.Option {
	kc, rt := r.auth()
	retries := r.Retries
	if retries <= 0 {
		retries = 3
	}
	jobs := r.Jobs
	if jobs <= 0 {
		jobs = 4
	}
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(kc),
		remote.WithTransport(rt),
		remote.WithUserAgent("nuv"),
		remote.WithJobs(jobs),
		remote.WithRetryBackoff(remote.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: retries}),
		remote.WithRetryStatusCodes(http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout),
		remote.WithRetryPredicate(transient),
	}
}

// transient is true for errors worth another attempt: connection resets and timeouts, not a
// refused connection or an unknown host (those fail at once with a clear message).
func transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return false
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return false
	}
	var te *transport.Error
	if errors.As(err, &te) {
		return te.Temporary()
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Publish pushes every layer (reporting each one), then the manifests and finally the index
// under ref: the tag appears only once everything it names is in the registry.
func (r *Remote) Publish(ctx context.Context, idx v1.ImageIndex, ref name.Reference) (string, error) {
	log := r.Log
	if log == nil {
		log = cli.Quiet()
	}
	reg := ref.Context().RegistryStr()
	opts := r.options(ctx)
	layers, err := uniqueLayers(idx)
	if err != nil {
		return "", err
	}
	var mu sync.Mutex
	done := 0
	g, gctx := errgroup.WithContext(ctx)
	jobs := r.Jobs
	if jobs <= 0 {
		jobs = 4
	}
	g.SetLimit(jobs)
	start := time.Now()
	for _, l := range layers {
		g.Go(func() error {
			digest, _ := l.Digest()
			size, _ := l.Size()
			if err := remote.WriteLayer(ref.Context(), l, append(opts, remote.WithContext(gctx))...); err != nil {
				return r.explain(reg, fmt.Errorf("push layer %s: %w", short(digest), err))
			}
			mu.Lock()
			done++
			log.Infof("pushed layer %s (%s) [%d/%d]", short(digest), humanSize(size), done, len(layers))
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return "", err
	}
	if err := remote.WriteIndex(ref, idx, opts...); err != nil {
		return "", r.explain(reg, fmt.Errorf("push %s: %w", ref, err))
	}
	d, err := idx.Digest()
	if err != nil {
		return "", err
	}
	log.V(1).Infof("pushed %s in %s", ref, time.Since(start).Round(time.Millisecond))
	return ref.Context().Digest(d.String()).String(), nil
}

func uniqueLayers(idx v1.ImageIndex) ([]v1.Layer, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	seen := map[v1.Hash]bool{}
	var out []v1.Layer
	for _, desc := range m.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return nil, fmt.Errorf("index entry %s: %w", desc.Digest, err)
		}
		ls, err := img.Layers()
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			d, err := l.Digest()
			if err != nil {
				return nil, err
			}
			if !seen[d] {
				seen[d] = true
				out = append(out, l)
			}
		}
	}
	return out, nil
}

// explain turns registry failures into messages that name the registry and what to do.
func (r *Remote) explain(registry string, err error) error {
	var te *transport.Error
	if errors.As(err, &te) && (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) {
		if !r.hasCredentials(registry) {
			return fmt.Errorf("registry %s refused the push (HTTP %d): %s", registry, te.StatusCode, login.Hint(registry))
		}
		return fmt.Errorf("registry %s rejected the stored credentials (HTTP %d): check them, then run `nuv image login` again", registry, te.StatusCode)
	}
	var ue *url.Error
	var oe *net.OpError
	if errors.As(err, &oe) || (errors.As(err, &ue) && !errors.As(err, &te)) {
		return fmt.Errorf("registry %s is unreachable (nothing was tagged): %w", registry, err)
	}
	return fmt.Errorf("registry %s: %w", registry, err)
}

func (r *Remote) hasCredentials(registry string) bool {
	if r.Keychain == nil {
		return false
	}
	reg, err := name.NewRegistry(registry)
	if err != nil {
		return false
	}
	a, err := r.Keychain.Resolve(reg)
	return err == nil && a != authn.Anonymous
}

func short(h v1.Hash) string {
	if len(h.Hex) > 12 {
		return h.Algorithm + ":" + h.Hex[:12]
	}
	return h.String()
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Reachable checks that the registry of ref answers HTTP at /v2/ (any status: authentication
// comes later), so that a push to a wrong or stopped registry fails before anything is built or tagged.
func Reachable(ctx context.Context, ref name.Reference, rt http.RoundTripper) error {
	if rt == nil {
		rt = http.DefaultTransport
	}
	reg := ref.Context().Registry
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, reg.Scheme()+"://"+reg.RegistryStr()+"/v2/", nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return fmt.Errorf("registry %s is unreachable: %w", reg.RegistryStr(), err)
	}
	resp.Body.Close()
	return nil
}

// Check verifies, before anything is built, that the registry of ref accepts a push with the
// keychain's credentials (it starts and cancels an upload); the error says what to set or fix.
func (r *Remote) Check(ref name.Reference) error {
	kc, rt := r.auth()
	if err := remote.CheckPushPermission(ref, kc, rt); err != nil {
		return r.explain(ref.Context().RegistryStr(), err)
	}
	return nil
}

// Package azure is nuv's Azure Resource Manager emulator: one HTTPS server on loopback that
// answers, in ARM's own REST protocol, the operations nuv's aks provider uses — resource groups,
// Microsoft.ContainerService managedClusters and agentPools (api-version 2025-02-01, the one the
// armcontainerservice v6 SDK sends; others are refused as ARM refuses them), user credentials,
// Kubernetes versions, the resource provider's regions and the VM sizes per region — so the
// official Azure SDK for Go runs against it unmodified.
//
// It is its own Azure AD authority: azidentity's ClientSecretCredential pointed at it
// (AZURE_AUTHORITY_HOST, instance discovery disabled) gets tokens from it, and every ARM request
// must carry one (see auth.go). It serves TLS with a CA of its own (CAFile), since the SDK sends
// bearer tokens over https only.
//
// Long-running operations follow ARM's protocol: a PUT answers 201 (create) or 200 (update) with
// provisioningState Creating/Updating and an Azure-AsyncOperation header, a DELETE 202 with
// Azure-AsyncOperation and Location; the operation status moves from InProgress to Succeeded or
// Failed after Options.Delay and once the control plane has caught up. Errors have ARM's shape
// and codes (ResourceGroupNotFound, ResourceNotFound, OperationNotAllowed, InvalidParameter,
// LocationNotAvailableForResourceType, NoRegisteredProviderFound). State is kept in memory and in
// <dir>/state.json (0600), so a restarted emulator carries on. Faults (throttling, immediate
// errors, failures in the middle of an operation, an expired client secret) are injected through
// /_nuv/faults or <dir>/faults.json. An operation it does not implement is answered with an error
// naming it.
//
// Each managed cluster is a real nuv local cluster with the aks flavor (Backend): its agent pools
// are node groups whose nodes carry AKS's labels (kubernetes.azure.com/cluster, .../agentpool,
// .../mode) and providerIDs (azure:///subscriptions/.../virtualMachineScaleSets/...); scaling a
// pool adds or removes nodes.
package azure

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// Options configure a Server.
type Options struct {
	// Dir holds state.json, faults.json, the CA and the local clusters behind managed clusters.
	Dir string
	// Delay is how long operations stay InProgress at least.
	Delay time.Duration
	// Backend runs the control planes; nil means nuv local clusters under Dir.
	Backend Backend
	// Log receives what the emulator does (never secrets); nil is quiet.
	Log cli.Logger
}

// Server is the emulator.
type Server struct {
	dir     string
	delay   time.Duration
	backend Backend
	log     cli.Logger
	tls     *tls.Config

	mu      sync.Mutex
	st      *State
	faults  []*Fault
	calls   map[string]int
	jobs    map[string]bool
	ensured map[string]bool      // control planes checked since this start
	retryAt map[string]time.Time // control planes whose last start failed: when to try again
	base    string               // https://127.0.0.1:port

	bg *emucore.Background // the reconcile loop and jobs

	adminToken string // what /_nuv/faults requires (emucore.AdminAllowed)
}

// New opens (or initialises) the state in o.Dir, makes its CA if needed and reads faults.json.
func New(o Options) (*Server, error) {
	if o.Dir == "" {
		return nil, errors.New("azure emulator: no state directory")
	}
	st, err := openState(o.Dir)
	if err != nil {
		return nil, err
	}
	tc, err := serverTLS(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("azure emulator TLS: %w", err)
	}
	s := &Server{dir: o.Dir, delay: o.Delay, backend: o.Backend, log: o.Log, tls: tc, st: st,
		calls: map[string]int{}, jobs: map[string]bool{}, ensured: map[string]bool{}, retryAt: map[string]time.Time{}}
	if s.log == nil {
		s.log = cli.Quiet()
	}
	if s.adminToken, err = emucore.EnsureAdminToken(o.Dir); err != nil {
		return nil, err
	}
	if s.backend == nil {
		s.backend = NewLocalBackend(o.Dir, s.log)
	}
	if s.faults, err = readFaultsFile(filepath.Join(o.Dir, "faults.json")); err != nil {
		return nil, err
	}
	s.bg = emucore.NewBackground()
	return s, nil
}

// Credentials are what a client needs to call the emulator.
type Credentials struct {
	TenantID, ClientID, ClientSecret, SubscriptionID string
}

// Credentials returns the service principal and subscription the emulator accepts.
func (s *Server) Credentials() Credentials {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Credentials{s.st.TenantID, s.st.ClientID, s.st.ClientSecret, s.st.SubscriptionID}
}

// ReadCredentials reads the credentials of the emulator in dir (os.ErrNotExist before its first start).
func ReadCredentials(dir string) (Credentials, error) {
	st, err := loadState(dir)
	if err != nil {
		return Credentials{}, err
	}
	return Credentials{st.TenantID, st.ClientID, st.ClientSecret, st.SubscriptionID}, nil
}

// TLSConfig is the server's TLS configuration (a certificate for loopback signed by CAFile(dir)).
func (s *Server) TLSConfig() *tls.Config { return s.tls }

func (s *Server) baseURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base
}

// Start records the address the emulator answers at (https://addr) and starts moving operations.
func (s *Server) Start(addr string) error {
	s.mu.Lock()
	s.base = "https://" + addr
	s.st.Addr = addr
	err := s.st.save(s.dir)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	s.bg.Every(100*time.Millisecond, s.reconcile)
	return nil
}

// Close stops the background work (an operation in progress is finished after the next start)
// and saves the state.
func (s *Server) Close() error {
	return s.bg.StopAndSave(&s.mu, func() error { return s.st.save(s.dir) })
}

// Serve serves TLS on ln until ctx ends, then shuts down and closes s.
func Serve(ctx context.Context, ln net.Listener, s *Server) error {
	return emucore.Serve(ctx, ln, s, &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, TLSConfig: s.tls})
}

// spawn runs work in the background unless work of the same key runs; the function it returns
// is applied to the state under the lock, then the state is saved. Called with s.mu held.
func (s *Server) spawn(key string, work func(ctx context.Context) func()) {
	s.bg.Spawn(&s.mu, s.jobs, key, func(ctx context.Context) func() {
		apply := work(ctx)
		if apply == nil {
			return nil
		}
		return func() {
			apply()
			if err := s.st.save(s.dir); err != nil {
				s.log.Warnf("azure emulator: %v", err)
			}
		}
	})
}

// health is what /_nuv/health answers (never a secret).
type health struct {
	Subscription string `json:"subscription"`
	Tenant       string `json:"tenant"`
	PID          int    `json:"pid"`
}

// ServeHTTP answers the authority, the admin endpoints and ARM.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.Trim(r.URL.Path, "/")
	segs := strings.Split(path, "/")
	switch {
	case path == "_nuv/health":
		s.mu.Lock()
		h := health{Subscription: s.st.SubscriptionID, Tenant: s.st.TenantID, PID: os.Getpid()}
		s.mu.Unlock()
		writeJSON(w, 200, h)
		return
	case path == "_nuv/faults":
		s.faultsEndpoint(w, r)
		return
	case len(segs) > 0 && strings.EqualFold(segs[0], "subscriptions"):
		s.arm(w, r, segs)
		return
	}
	if s.authority(w, r, segs) {
		return
	}
	writeARMError(w, aerr(404, "NotFound", "nuv azure emulator does not serve %s %s (it serves ARM under /subscriptions/, the authority under /{tenant}/, and /_nuv/health, /_nuv/faults)", r.Method, r.URL.Path))
}

// Package azure is nuv's Azure Resource Manager emulator: one HTTPS server on loopback that
// answers, in ARM's own REST protocol, the operations nuv's aks provider uses — resource groups,
// Microsoft.ContainerService managedClusters and agentPools, user credentials, Kubernetes
// versions, the resource provider's regions and the VM sizes per region — at every api-version
// Azure has published for each type (apiversions.go; others are refused as ARM refuses them), so
// the official Azure SDKs of any release run against it unmodified. It answers ARM's cloud
// metadata (/metadata/endpoints, metadata.go) for clients that discover a custom cloud.
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
	"strings"
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

// Server is the emulator: the kernel (state, faults, jobs, lifecycle), the authority and ARM.
type Server struct {
	*emucore.Kernel[State, Fault]
	backend Backend

	// ensured and retryAt are guarded by Mu: the control planes checked since this start, and
	// those whose last start failed with when to try again.
	ensured map[string]bool
	retryAt map[string]time.Time
}

// New opens (or initialises) the state in o.Dir, makes its CA if needed and reads faults.json.
func New(o Options) (*Server, error) {
	if o.Dir == "" {
		return nil, errors.New("azure emulator: no state directory")
	}
	st := stateSpec
	st.New = func() (*State, error) { return newState(), nil }
	tc, err := serverTLS(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("azure emulator TLS: %w", err)
	}
	s := &Server{backend: o.Backend, ensured: map[string]bool{}, retryAt: map[string]time.Time{}}
	k, err := emucore.NewKernel(emucore.Spec[State, Fault]{Name: "nuv azure emulator", What: "azure emulator", Dir: o.Dir, Delay: o.Delay,
		Log: o.Log, Scheme: "https", TLS: tc, State: st, SetAddr: func(st *State, addr string) { st.Addr = addr }, Reconcile: s.reconcile,
		Health: func(st *State) any {
			return health{Subscription: st.SubscriptionID, Tenant: st.TenantID, PID: os.Getpid()}
		},
		DecodeFaults: decodeFaults, WriteJSON: writeJSON})
	if err != nil {
		return nil, err
	}
	s.Kernel = k
	if s.backend == nil {
		s.backend = NewLocalBackend(o.Dir, s.Log)
	}
	return s, nil
}

// Credentials are what a client needs to call the emulator.
type Credentials struct {
	TenantID, ClientID, ClientSecret, SubscriptionID string
}

// Credentials returns the service principal and subscription the emulator accepts.
func (s *Server) Credentials() Credentials {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return Credentials{s.St.TenantID, s.St.ClientID, s.St.ClientSecret, s.St.SubscriptionID}
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
func (s *Server) TLSConfig() *tls.Config { return s.TLS }

// Serve serves TLS on ln until ctx ends, then shuts down and closes s.
func Serve(ctx context.Context, ln net.Listener, s *Server) error {
	return s.Kernel.Serve(ctx, ln, s, nil)
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
	case path == "_nuv/health" || path == "_nuv/faults":
		s.ServeAdmin(w, r, "", nil)
		return
	case strings.EqualFold(path, "metadata/endpoints"):
		s.metadataEndpoints(w, r)
		return
	case "/"+path == RetailPricesPath:
		s.retailPrices(w, r)
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

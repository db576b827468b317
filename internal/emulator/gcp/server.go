// Package gcp is nuv's GKE emulator: one server on loopback that answers the v1 ClusterManager
// API of Google Kubernetes Engine both in gRPC (the protocol of the Go client,
// cloud.google.com/go/container/apiv1) and in REST (/v1/projects/*/locations/*/clusters..., what
// gcloud calls with CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER), so official clients run against it
// unmodified. Calls need a bearer token from the emulator's token endpoint: it issues a service
// account key file whose token_uri points at itself, so Application Default Credentials work
// (see auth.go). A method it does not implement fails with UNIMPLEMENTED naming it.
//
// It keeps state like GKE does: every change is a long-running Operation that goes PENDING,
// RUNNING, then DONE (after Options.Delay at least, with an error when it failed), clusters go
// PROVISIONING then RUNNING, RECONCILING while a node pool changes, STOPPING while deleted; a
// second change while an operation runs is refused with FAILED_PRECONDITION; errors are GKE's
// (NOT_FOUND, ALREADY_EXISTS, INVALID_ARGUMENT for a machine type, location or version it does not
// offer). Everything is saved to <dir>/state.json after each change, so a restarted emulator
// carries on, and resumes the operations that were running. Each cluster is a real control plane
// (a nuv local cluster with the gke flavor, see LocalClusters) whose nodes are its node pools
// (labels cloud.google.com/gke-nodepool, providerIDs gce://project/zone/name), whose endpoint and
// CA are the cluster's, and whose API server accepts the emulator's access tokens through a token
// webhook.
//
// Faults can be injected through /_nuv/faults or <dir>/faults.json: throttling
// (RESOURCE_EXHAUSTED), errors, and operations that fail halfway.
package gcp

import (
	"context"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// DefaultPort is where `nuv emulator up` starts the GKE emulator unless NUV_EMULATOR_GCP_PORT says
// otherwise; it should stay the same across restarts (control planes call its token webhook).
const DefaultPort = 5004

// Dir is the GKE emulator's directory under the emulators' directory.
func Dir(emulatorDir string) string { return filepath.Join(emulatorDir, "gcp") }

// Options configure a Server.
type Options struct {
	// Dir holds state.json, faults.json, the credentials file and the local clusters.
	Dir string
	// Project is the project of a new state (an existing state keeps its own); default DefaultProject.
	Project string
	// Delay is how long an operation runs at least (default 0: as long as its work takes).
	Delay time.Duration
	// TokenLifetime is how long access tokens are valid (default 1h, as Google's).
	TokenLifetime time.Duration
	// Clusters runs the control planes; nil means nuv local clusters under Dir.
	Clusters Backend
	// Log receives what the emulator does (never secrets); nil is quiet.
	Log cli.Logger
}

// Server is the GKE emulator: the kernel (state, faults, jobs, lifecycle), the token endpoint
// and the ClusterManager API in gRPC and REST. Create it with New, serve it with Serve (or Start
// it and use it as an http.Handler), and Close it.
type Server struct {
	*emucore.Kernel[State, Fault]
	tokenLife time.Duration
	backend   Backend
	grpc      *grpc.Server
}

// New opens (or initialises) the state in o.Dir and reads <dir>/faults.json if present.
func New(o Options) (*Server, error) {
	if o.Project == "" {
		o.Project = DefaultProject
	}
	st := stateSpec
	st.New = func() (*State, error) { return newState(o.Project) }
	s := &Server{tokenLife: o.TokenLifetime, backend: o.Clusters}
	k, err := emucore.NewKernel(emucore.Spec[State, Fault]{Name: "nuv GKE emulator", What: "GKE emulator", Dir: o.Dir, Delay: o.Delay, Log: o.Log,
		State: st, SetAddr: func(st *State, addr string) { st.Addr = addr }, OnStart: s.onStart, Reconcile: s.reconcile,
		Health:       func(st *State) any { return health{Project: st.Project, PID: os.Getpid()} },
		DecodeFaults: decodeFaults, WriteJSON: writeJSON})
	if err != nil {
		return nil, err
	}
	s.Kernel = k
	if s.tokenLife == 0 {
		s.tokenLife = time.Hour
	}
	if s.backend == nil {
		s.backend = NewLocalClusters(filepath.Join(o.Dir, "clusters"), s.Log)
	}
	s.grpc = grpc.NewServer(grpc.UnaryInterceptor(s.unary))
	containerpb.RegisterClusterManagerServer(s.grpc, &api{s: s})
	return s, nil
}

// Project returns the project the emulator serves and its service account's email.
func (s *Server) Project() (project, serviceAccount string) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.St.Project, s.St.ServiceAccount
}

// onStart warns about control planes whose token webhook is at another address and writes the
// credentials file (its token endpoint is the emulator's URL).
func (s *Server) onStart(addr string) error {
	for _, key := range sortedKeys(s.St.Clusters) {
		if wh := s.St.Clusters[key].Webhook; wh != "" && !strings.HasPrefix(wh, s.Base+"/") {
			s.Log.Warnf("GKE emulator: listening on %s, but the control plane of cluster %s calls its token webhook at %s: "+
				"its tokens are refused until the emulator listens there again (set NUV_EMULATOR_GCP_PORT)", addr, key, wh)
		}
	}
	return s.writeCredentials()
}

// Serve serves gRPC (h2c) and REST on ln until ctx ends, then shuts down and closes s.
func Serve(ctx context.Context, ln net.Listener, s *Server) error {
	return s.Kernel.Serve(ctx, ln, s, h2c)
}

// NewHTTPServer is the http.Server for s: HTTP/1.1 for REST and unencrypted HTTP/2 (prior
// knowledge, as gRPC clients speak it without TLS) for gRPC.
func NewHTTPServer(s *Server) *http.Server {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	h2c(srv)
	return srv
}

// h2c makes srv speak HTTP/1.1 and unencrypted HTTP/2.
func h2c(srv *http.Server) {
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
}

// ServeHTTP sends gRPC to the gRPC server and the rest to the REST API, the token endpoint and
// the emulator's own endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc"):
		s.grpc.ServeHTTP(w, r)
	case r.URL.Path == TokenPath:
		s.tokenEndpoint(w, r)
	case strings.HasPrefix(r.URL.Path, "/_nuv/"):
		s.admin(w, r)
	case r.URL.Path == "/v1/services" || strings.HasPrefix(r.URL.Path, "/v1/services/"):
		s.billing(w, r)
	default:
		s.rest(w, r)
	}
}

// failKey carries an injected "fail-operation" fault from the gate to the method.
type failKey struct{}

// gate authenticates a call of method on resource and applies the faults; the returned context
// carries a fail-operation fault for the method to put on its operation.
func (s *Server) gate(ctx context.Context, method, authorization, resource string) (context.Context, error) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if _, err := s.checkToken(bearer(authorization), time.Now()); err != nil {
		s.Log.V(1).Infof("GKE emulator: %s refused: %v", method, err)
		return ctx, status.Errorf(codes.Unauthenticated, "%s (nuv emulator: %v)", unauthenticatedMsg, err)
	}
	f := s.fault(method, resource)
	if f == nil {
		return ctx, nil
	}
	s.Log.V(1).Infof("GKE emulator: fault %s on %s", f.Kind, method)
	if f.Kind == "fail-operation" {
		return context.WithValue(ctx, failKey{}, status.New(f.code(), f.message(method))), nil
	}
	return ctx, f.err(method)
}

// unary is the gRPC interceptor: authentication, faults, logging.
func (s *Server) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	method := path.Base(info.FullMethod)
	auth := ""
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get("authorization"); len(v) > 0 {
			auth = v[0]
		}
	}
	ctx, err := s.gate(ctx, method, auth, resourceOf(req))
	if err != nil {
		return nil, err
	}
	out, err := handler(ctx, req)
	if err != nil {
		s.Log.V(1).Infof("GKE emulator: grpc %s -> %v", method, status.Code(err))
	} else {
		s.Log.V(2).Infof("GKE emulator: grpc %s", method)
	}
	return out, err
}

// resourceOf names what a request is about, for faults restricted to a resource.
func resourceOf(req any) string {
	var parts []string
	if r, ok := req.(interface{ GetName() string }); ok {
		parts = append(parts, r.GetName())
	}
	if r, ok := req.(interface{ GetParent() string }); ok {
		parts = append(parts, r.GetParent())
	}
	if r, ok := req.(interface{ GetClusterId() string }); ok {
		parts = append(parts, r.GetClusterId())
	}
	if r, ok := req.(interface{ GetNodePoolId() string }); ok {
		parts = append(parts, r.GetNodePoolId())
	}
	switch r := req.(type) {
	case *containerpb.CreateClusterRequest:
		parts = append(parts, r.GetCluster().GetName())
	case *containerpb.CreateNodePoolRequest:
		parts = append(parts, r.GetNodePool().GetName())
	}
	return strings.Join(parts, "/")
}

// health is what /_nuv/health answers (never a secret).
type health struct {
	Project string `json:"project"`
	PID     int    `json:"pid"`
}

// admin serves /_nuv/health, /_nuv/faults and the token webhook of the control planes.
func (s *Server) admin(w http.ResponseWriter, r *http.Request) {
	s.ServeAdmin(w, r, tokenReviewPath, s.tokenReview)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	emucore.WriteJSON(w, status, "application/json; charset=UTF-8", v)
}

// Ping asks the emulator at addr for its health.
func Ping(ctx context.Context, addr string) error {
	return emucore.Ping(ctx, http.DefaultClient, "http", addr, "GKE emulator")
}

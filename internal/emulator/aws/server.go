// Package aws is nuv's stateful AWS emulator: one HTTP server on loopback that answers the
// AWS operations nuv's eks provider uses in AWS's own wire protocols — EKS in restJson1, EC2 in the
// EC2 query protocol, IAM, STS and Elastic Load Balancing v2 in the AWS query protocol — so the
// official AWS SDKs and the aws CLI run against it unmodified (AWS_ENDPOINT_URL). Its network load
// balancers are real TCP balancers (HAProxy containers, see Balancers). Requests must carry a valid Signature Version 4
// made with the credentials the emulator issued (see State).
//
// It keeps state like AWS does: resources get AWS-shaped ids and ARNs, move through their statuses
// over time (CREATING then ACTIVE, DELETING then gone, after Options.Delay), refuse what AWS refuses
// (a VPC with subnets, a role with policies attached, a cluster with node groups) with AWS's error
// codes, and everything is saved to <dir>/state.json after each change, so a restarted emulator
// carries on. Each EKS cluster is a real control plane (a nuv local cluster, see Clusters) whose API
// server authenticates the presigned-STS tokens of EKS (see TokenReview) through the emulator.
//
// EC2 instances are real machines (see Machines): RunInstances boots a privileged systemd
// container of nuv's kind node image (the one AMI, DescribeImages) on a network per subnet made
// with the subnet's CIDR, so the instance's private IP is the VPC's; its user data runs once as
// cloud-init runs it and its key pair's public key is root's. Instances go pending, running,
// stopping, stopped, shutting-down and terminated as on EC2, and are matched with their machines
// again after a restart.
//
// Faults can be injected (throttling every Nth call, a forced error, an AccessDenied, an EC2
// instance that fails to launch or is terminated after some seconds) through the
// admin endpoint /_nuv/faults or <dir>/faults.json, to test retries and resumption. An operation
// the emulator does not implement is answered with an error naming it.
package aws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// MaxBody is the largest request body the emulator takes; a larger one is answered 413.
const MaxBody = 32 << 20

// DefaultRegion is the region of a new emulator unless Options say otherwise.
const DefaultRegion = "us-east-1"

// Options configure a Server.
type Options struct {
	// Dir holds state.json, faults.json and the local clusters behind EKS clusters.
	Dir string
	// Region is the region of a new state (an existing state keeps its own); default DefaultRegion.
	Region string
	// Delay is how long resources stay in their transitional statuses (CREATING, UPDATING,
	// DELETING, pending) at least. EKS clusters also wait for their control plane.
	Delay time.Duration
	// Clusters runs the control planes of EKS clusters; nil means nuv local clusters under Dir.
	Clusters Clusters
	// Machines runs the machines of EC2 instances; nil means containers of nuv's node image on
	// the Docker daemon (ContainerMachines).
	Machines Machines
	// Log receives what the emulator does (never secrets); nil is quiet.
	Log cli.Logger
	// Balancers runs the balancers of network load balancers; nil means containers of nuv's
	// node image on the Docker daemon of DOCKER_HOST (ContainerBalancers).
	Balancers Balancers
}

// Server is the emulator: the kernel (state, faults, jobs, lifecycle) and the EKS, EC2, IAM and
// STS services. Create it with New, serve it with Serve (or use it as an http.Handler after
// Start), and Close it.
type Server struct {
	*emucore.Kernel[State, Fault]
	clusters Clusters
	machines Machines
	images   machineImageCache
	inst     instanceRuntime
	// balancers, elbrt and elbDial serve Elastic Load Balancing (elbv2*.go).
	balancers Balancers
	elbrt     elbRuntime
	elbDial   func(ctx context.Context, network, addr string) (net.Conn, error)
}

// New opens (or initialises) the emulator state in o.Dir and reads <dir>/faults.json if present.
func New(o Options) (*Server, error) {
	if o.Region == "" {
		o.Region = DefaultRegion
	}
	s := &Server{clusters: o.Clusters, machines: o.Machines, balancers: o.Balancers, elbDial: defaultDial}
	st := stateSpec
	st.New = func() (*State, error) { return newState(o.Region), nil }
	k, err := emucore.NewKernel(emucore.Spec[State, Fault]{Name: "nuv emulator", What: "emulator", Dir: o.Dir, Delay: o.Delay, Log: o.Log,
		State: st, SetAddr: func(st *State, addr string) { st.Addr = addr }, OnStart: s.onStart, Reconcile: s.reconcile,
		Health:       func(st *State) any { return health{Account: st.Account, Region: st.Region, PID: os.Getpid()} },
		DecodeFaults: decodeFaults, WriteJSON: writeJSON})
	if err != nil {
		return nil, err
	}
	s.Kernel = k
	if s.clusters == nil {
		s.clusters = NewLocalClusters(o.Dir, s.Log)
	}
	if s.machines == nil {
		s.machines = NewContainerMachines(s.St.Account, s.Log)
	}
	if s.balancers == nil {
		s.balancers = NewContainerBalancers(s.Log)
	}
	return s, nil
}

// Credentials returns the access key id and secret the emulator accepts, its account and region.
func (s *Server) Credentials() (accessKeyID, secret, account, region string) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.St.AccessKeyID, s.St.SecretAccessKey, s.St.Account, s.St.Region
}

// RecordedAddr is the address the emulator listened on last (empty for a new state).
func (s *Server) RecordedAddr() string {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.St.Addr
}

// onStart warns about control planes whose token webhook is at another address (the EKS token
// webhook points at the emulator's URL).
func (s *Server) onStart(addr string) error {
	for _, name := range sortedKeys(s.St.EKS.Clusters) {
		// A control plane's token webhook keeps the address it was created with.
		if wh := s.St.EKS.Clusters[name].Webhook; wh != "" && !strings.HasPrefix(wh, s.Base+"/") {
			s.Log.Warnf("emulator: listening on %s, but the control plane of EKS cluster %s calls its token webhook at %s: "+
				"its EKS tokens are refused until the emulator listens there again (set NUV_EMULATOR_PORT)", addr, name, wh)
		}
	}
	return nil
}

// Serve serves on ln until ctx ends, then shuts down and closes s.
func Serve(ctx context.Context, ln net.Listener, s *Server) error {
	return s.Kernel.Serve(ctx, ln, s, nil)
}

// reconcile moves every resource whose time has come to its next status (s.Mu held); true when
// anything moved.
func (s *Server) reconcile(t time.Time) bool {
	changed := s.reconcileEKS(t)
	changed = s.reconcileInstances(t) || changed
	changed = s.reconcileELB(t) || changed
	return s.reconcileEC2(t) || changed
}

// request is one AWS API call being served.
type request struct {
	http    *http.Request
	id      string
	service string // eks, ec2, iam, sts, elasticloadbalancing
	body    []byte
	form    url.Values // query protocols: the parameters
	sig     *sigv4
}

// ServeHTTP authenticates the request, picks the service and operation, applies the faults and
// answers in the service's protocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_nuv/") {
		s.admin(w, r)
		return
	}
	rq := &request{http: r, id: uuid()}
	body, err := emucore.ReadBody(r, MaxBody)
	var tooLarge *emucore.BodyTooLargeError
	if errors.As(err, &tooLarge) {
		rq.service = guessService(r, nil)
		if sig, _ := parseSigV4(r); sig != nil {
			rq.service = sig.Service
		}
		s.fail(w, rq, errf(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "Request body of more than %d bytes is too large (nuv emulator, as AWS: send less per request)", MaxBody))
		return
	}
	if err != nil {
		http.Error(w, "nuv emulator: read request: "+err.Error(), http.StatusBadRequest)
		return
	}
	rq.body = body
	if (r.URL.Path == "/" || r.URL.Path == "") && r.Header.Get("X-Amz-Target") == "" {
		if rq.form, err = parseForm(body, r); err != nil {
			s.fail(w, rq, errf(400, "MalformedQueryString", "%v", err))
			return
		}
	}
	sig, sigErr := parseSigV4(r)
	if sig != nil {
		rq.service, rq.sig = sig.Service, sig
	} else {
		rq.service = guessService(r, rq.form)
	}
	if sigErr == nil {
		sigErr = s.authenticate(rq)
	}
	if sigErr != nil {
		s.fail(w, rq, authFailure(rq.service, sigErr))
		return
	}
	op, handle, apiErr := s.route(rq)
	if apiErr != nil {
		s.fail(w, rq, apiErr)
		return
	}
	if f := s.fault(rq, op); f != nil {
		s.Log.V(1).Infof("emulator: fault %s on %s:%s", f.Kind, rq.service, op)
		s.fail(w, rq, f.apiError(rq.service, op, s.callerARN()))
		return
	}
	if ae := s.prepare(r.Context(), rq.service, op); ae != nil {
		s.fail(w, rq, ae)
		return
	}
	s.Mu.Lock()
	out, err := handle()
	if err == nil && mutating(op) {
		err = s.Save()
	}
	var resp bufferedResponse
	if err == nil {
		// Encode under the lock: results point into the state the reconciler changes.
		s.answer(&resp, rq, op, out)
	}
	s.Mu.Unlock()
	if err == nil {
		resp.copyTo(w)
		s.Log.V(2).Infof("emulator: %s:%s", rq.service, op)
		return
	}
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = errf(500, internalCode(rq.service), "nuv emulator: %s:%s: %v", rq.service, op, err)
	}
	s.Log.V(1).Infof("emulator: %s:%s -> %s", rq.service, op, ae.Code)
	s.fail(w, rq, ae)
}

// bufferedResponse holds an answer until it is written to the client.
type bufferedResponse struct {
	header http.Header
	status int
	body   []byte
}

func (b *bufferedResponse) Header() http.Header {
	if b.header == nil {
		b.header = http.Header{}
	}
	return b.header
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.body = append(b.body, p...)
	return len(p), nil
}

func (b *bufferedResponse) WriteHeader(status int) { b.status = status }

func (b *bufferedResponse) copyTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	if b.status != 0 {
		w.WriteHeader(b.status)
	}
	_, _ = w.Write(b.body)
}

func (s *Server) callerARN() string {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.St.callerARN()
}

// mutating reports whether op can change state (everything but reads).
func mutating(op string) bool {
	for _, p := range []string{"Describe", "List", "Get"} {
		if strings.HasPrefix(op, p) {
			return false
		}
	}
	return true
}

// authenticate checks the access key, the region and the signature of rq.
func (s *Server) authenticate(rq *request) error {
	s.Mu.Lock()
	key, secret, region := s.St.AccessKeyID, s.St.SecretAccessKey, s.St.Region
	s.Mu.Unlock()
	if rq.sig.AccessKey != key {
		return &authError{"InvalidClientTokenId", "The security token included in the request is invalid. (nuv emulator: use the credentials `nuv emulator env` prints)"}
	}
	switch rq.service {
	case "eks", "ec2", elbService:
		if rq.sig.Region != region {
			return &authError{"SignatureDoesNotMatch", fmt.Sprintf("Credential should be scoped to a valid region: this emulator serves %s, the request is signed for %q (set AWS_REGION=%s)", region, rq.sig.Region, region)}
		}
	case "iam", "sts", "pricing":
	default:
		return &authError{"InvalidClientTokenId", fmt.Sprintf("nuv emulator does not serve the service %q (it serves eks, ec2, elasticloadbalancing, iam, pricing and sts)", rq.service)}
	}
	return rq.sig.verify(rq.http, rq.body, secret, time.Now())
}

// guessService names the service of an unsigned request, to answer in its error shape.
func guessService(r *http.Request, form url.Values) string {
	if r.URL.Path != "/" && r.URL.Path != "" {
		return "eks"
	}
	a := form.Get("Action")
	if _, ok := iamActions.Get()[a]; ok {
		return "iam"
	}
	if _, ok := stsActions.Get()[a]; ok {
		return "sts"
	}
	_, isELB := elbActions.Get()[a]
	_, isEC2 := ec2Actions.Get()[a]
	if (isELB && !isEC2) || (form != nil && form.Get("Version") == "2015-12-01") {
		return elbService
	}
	return "ec2"
}

// authFailure turns an authentication error into the service's error.
func authFailure(service string, err error) *apiError {
	var ae *authError
	if !errors.As(err, &ae) {
		return errf(403, "AccessDenied", "%v", err)
	}
	code, status := ae.Code, 403
	switch service {
	case "eks":
		switch ae.Code {
		case "MissingAuthenticationToken":
			code, ae.Msg = "MissingAuthenticationTokenException", "Missing Authentication Token"
		case "InvalidClientTokenId":
			code = "UnrecognizedClientException"
		default:
			code = "InvalidSignatureException"
		}
	case "ec2":
		status = 401
		if ae.Code == "InvalidClientTokenId" {
			code = "AuthFailure"
		}
	default:
		if ae.Code == "IncompleteSignature" || ae.Code == "AuthorizationQueryParametersError" {
			status = 400
		}
	}
	return &apiError{Status: status, Code: code, Msg: ae.Msg}
}

func internalCode(service string) string {
	switch service {
	case "eks":
		return "ServerException"
	case "ec2":
		return "InternalError"
	case "iam":
		return "ServiceFailure"
	}
	return "InternalFailure"
}

// route finds the operation of rq and its handler; an unknown operation is an error naming it.
func (s *Server) route(rq *request) (string, func() (any, error), *apiError) {
	switch rq.service {
	case "eks":
		return s.routeEKS(rq)
	case "pricing":
		return s.routePricing(rq)
	case "ec2", "iam", "sts", elbService:
		action := rq.form.Get("Action")
		if action == "" {
			return "", nil, errf(400, "MissingAction", "the request names no Action (nuv emulator serves %s in the query protocol)", rq.service)
		}
		table := map[string]map[string]queryHandler{"ec2": ec2Actions.Get(), "iam": iamActions.Get(), "sts": stsActions.Get(), elbService: elbActions.Get()}[rq.service]
		h, ok := table[action]
		if !ok {
			return action, nil, errf(400, "InvalidAction", "nuv emulator does not implement the %s action %s (implemented: %s)", strings.ToUpper(rq.service), action, strings.Join(sortedKeys(table), ", "))
		}
		return action, func() (any, error) { return h(s, params(rq.form)) }, nil
	}
	return "", nil, errf(400, "InvalidAction", "nuv emulator does not serve the service %q", rq.service)
}

// queryHandler serves one query-protocol action; s.Mu is held.
type queryHandler func(s *Server, p params) (any, error)

// fail answers an error in rq's protocol.
func (s *Server) fail(w http.ResponseWriter, rq *request, e *apiError) {
	switch rq.service {
	case "eks", "pricing":
		writeJSONError(w, rq.id, e)
	case "ec2":
		writeEC2Error(w, rq.id, e)
	case "sts":
		if wantsJSON(rq.http) {
			writeQueryErrorJSON(w, rq.id, e)
			return
		}
		writeQueryError(w, rq.id, stsNS, e)
	case elbService:
		writeQueryError(w, rq.id, elbNS, e)
	default:
		writeQueryError(w, rq.id, iamNS, e)
	}
}

// answer writes a successful result in rq's protocol.
func (s *Server) answer(w http.ResponseWriter, rq *request, op string, out any) {
	switch rq.service {
	case "eks", "pricing":
		b, err := json.Marshal(out)
		if err != nil {
			writeJSONError(w, rq.id, errf(500, "ServerException", "encode %s: %v", op, err))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-RequestId", rq.id)
		_, _ = w.Write(b)
	case "ec2":
		writeEC2Result(w, rq.id, op, out)
	case "sts":
		if wantsJSON(rq.http) {
			writeQueryJSON(w, rq.id, op, out)
			return
		}
		writeQueryResult(w, rq.id, stsNS, op, out)
	case elbService:
		writeQueryResult(w, rq.id, elbNS, op, out)
	default:
		writeQueryResult(w, rq.id, iamNS, op, out)
	}
}

func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

// health is what /_nuv/health answers (never the secret).
type health struct {
	Account string `json:"account"`
	Region  string `json:"region"`
	PID     int    `json:"pid"`
}

// admin serves the emulator's own endpoints: /_nuv/health, /_nuv/faults and the EKS token webhook.
func (s *Server) admin(w http.ResponseWriter, r *http.Request) {
	s.ServeAdmin(w, r, tokenReviewPath, s.tokenReview)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	emucore.WriteJSON(w, status, "application/json", v)
}

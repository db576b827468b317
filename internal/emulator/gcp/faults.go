package gcp

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
	"github.com/nuv-dev/nuv/internal/lazy"
)

// Fault is a failure the emulator injects on request, to test a client's retries, resumption and
// error reporting. Faults are set through /_nuv/faults (POST adds, PUT replaces, DELETE clears,
// GET lists) or read from <dir>/faults.json (a JSON list) at start.
type Fault struct {
	// Method is a ClusterManager method (CreateCluster, SetNodePoolSize, ...), "*" (every one of
	// them) or "Token" (the token endpoint).
	Method string `json:"method"`
	// Kind is "throttle" (RESOURCE_EXHAUSTED, HTTP 429, as GKE's quota errors), "error" (Code and
	// Message; default INTERNAL) or "fail-operation" (the call is accepted, and its operation fails
	// halfway, finishing DONE with an error, as GKE's long-running operations do).
	Kind string `json:"kind"`
	emucore.FaultLimits
	// Resource restricts the fault to requests naming it (a cluster or node pool name).
	Resource string `json:"resource,omitempty"`
	// Code is the gRPC code of an "error" or "fail-operation" fault (INTERNAL, PERMISSION_DENIED,
	// ...); Message its message.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// codeNames maps each google.rpc.Code name to its gRPC code.
var codeNames = lazy.Value[map[string]codes.Code]{New: func() map[string]codes.Code {
	m := map[string]codes.Code{}
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		m[codeName(c)] = c
	}
	return m
}}

// codeName is the google.rpc.Code name of c (NOT_FOUND, ...), as REST errors spell it.
func codeName(c codes.Code) string {
	switch c {
	case codes.OK:
		return "OK"
	case codes.Canceled:
		return "CANCELLED"
	case codes.Unknown:
		return "UNKNOWN"
	case codes.InvalidArgument:
		return "INVALID_ARGUMENT"
	case codes.DeadlineExceeded:
		return "DEADLINE_EXCEEDED"
	case codes.NotFound:
		return "NOT_FOUND"
	case codes.AlreadyExists:
		return "ALREADY_EXISTS"
	case codes.PermissionDenied:
		return "PERMISSION_DENIED"
	case codes.ResourceExhausted:
		return "RESOURCE_EXHAUSTED"
	case codes.FailedPrecondition:
		return "FAILED_PRECONDITION"
	case codes.Aborted:
		return "ABORTED"
	case codes.OutOfRange:
		return "OUT_OF_RANGE"
	case codes.Unimplemented:
		return "UNIMPLEMENTED"
	case codes.Internal:
		return "INTERNAL"
	case codes.Unavailable:
		return "UNAVAILABLE"
	case codes.DataLoss:
		return "DATA_LOSS"
	case codes.Unauthenticated:
		return "UNAUTHENTICATED"
	}
	return c.String()
}

func (f *Fault) validate() error {
	if f.Method == "" {
		return errors.New("fault: no method (a ClusterManager method such as CreateCluster, Token or *)")
	}
	switch f.Kind {
	case "throttle", "error", "fail-operation":
	default:
		return fmt.Errorf("fault %s: kind %q: want throttle, error or fail-operation", f.Method, f.Kind)
	}
	if f.Code != "" {
		if _, ok := codeNames.Get()[f.Code]; !ok {
			return fmt.Errorf("fault %s: code %q is not a google.rpc.Code name (INTERNAL, PERMISSION_DENIED, ...)", f.Method, f.Code)
		}
	}
	return f.Check(f.Method)
}

func (f *Fault) code() codes.Code {
	if c, ok := codeNames.Get()[f.Code]; ok && f.Code != "" {
		return c
	}
	return codes.Internal
}

func (f *Fault) message(method string) string {
	if f.Message != "" {
		return f.Message
	}
	return fmt.Sprintf("nuv emulator: injected failure on %s", method)
}

func (f *Fault) httpStatus() int { return httpStatus(f.code()) }

// err is the error a throttle or error fault answers for method.
func (f *Fault) err(method string) error {
	if f.Kind == "throttle" {
		return status.Errorf(codes.ResourceExhausted, "Quota exceeded for quota metric 'Requests' and limit 'Requests per minute' of service 'container.googleapis.com' (nuv emulator: injected fault on %s)", method)
	}
	return status.Error(f.code(), f.message(method))
}

// decodeFaults reads one fault or a list, refusing fields a Fault does not have.
func decodeFaults(b []byte) ([]*Fault, error) {
	return emucore.DecodeFaults(b, true, (*Fault).validate)
}

// fault counts the call of method and returns the fault that hits it, if any; resource is the
// request's resource name. s.Mu is held.
func (s *Server) fault(method, resource string) *Fault {
	return s.HitFault(method, func(f *Fault) bool {
		// "*": every API method, not the token endpoint.
		return (f.Method == method || (f.Method == "*" && method != "Token")) && (f.Resource == "" || namesResource(resource, f.Resource))
	})
}

func namesResource(name, res string) bool {
	return emucore.NamesSegment(name, res, func(a, b string) bool { return a == b })
}

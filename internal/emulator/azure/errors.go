package azure

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// armError is an error in ARM's shape: {"error":{"code","message","target"}} with an HTTP status.
type armError struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Target  string `json:"target,omitempty"`
}

func (e *armError) Error() string { return e.Code + ": " + e.Message }

func aerr(status int, code, format string, a ...any) *armError {
	return &armError{Status: status, Code: code, Message: fmt.Sprintf(format, a...)}
}

func (e *armError) at(target string) *armError { e.Target = target; return e }

func writeARMError(w http.ResponseWriter, e *armError) {
	w.Header().Set("x-ms-error-code", e.Code)
	writeJSON(w, e.Status, map[string]any{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// Fault is a failure the emulator injects on request. Faults are set through /_nuv/faults (POST
// adds, PUT replaces, DELETE clears, GET lists) or read from <dir>/faults.json at start.
type Fault struct {
	// Operation is the API's operation id (ManagedClusters_CreateOrUpdate, AgentPools_Delete,
	// ResourceGroups_CreateOrUpdate, ...), "Token" (the authority's token endpoint) or "*".
	Operation string `json:"operation"`
	// Kind is "throttle" (429 with Retry-After, which the SDK retries), "error" (Status, Code,
	// Message answered at once), "lro-failure" (the operation is accepted and fails later, in
	// the middle of its long-running operation, with Code and Message) or "expired-secret" (the
	// token endpoint refuses the client secret as expired).
	Kind string `json:"kind"`
	emucore.FaultLimits
	// Resource restricts the fault to requests whose path names it (a cluster, pool or group).
	Resource string `json:"resource,omitempty"`
	// Code, Message and Status of an "error" or "lro-failure" fault.
	emucore.FaultError
}

func (f *Fault) validate() error {
	if f.Operation == "" {
		return errors.New("fault: operation is required (e.g. ManagedClusters_CreateOrUpdate, AgentPools_CreateOrUpdate, Token, *)")
	}
	switch f.Kind {
	case "throttle", "lro-failure", "expired-secret":
	case "error":
		if err := f.CheckStatus(f.Operation); err != nil {
			return err
		}
	default:
		return fmt.Errorf("fault %s: kind %q: want throttle, error, lro-failure or expired-secret", f.Operation, f.Kind)
	}
	return f.Check(f.Operation)
}

func decodeFaults(b []byte) ([]*Fault, error) {
	return emucore.DecodeFaults(b, false, (*Fault).validate)
}

// fault counts a call of op (on a request whose path is path) and returns the fault that hits it.
func (s *Server) fault(op, path string) *Fault {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.HitFault(op, func(f *Fault) bool {
		return (f.Operation == "*" || strings.EqualFold(f.Operation, op)) && (f.Resource == "" || pathNames(path, f.Resource))
	})
}

func pathNames(path, res string) bool { return emucore.NamesSegment(path, res, strings.EqualFold) }

// failure is the error a fault answers (or, for lro-failure, ends the operation with).
func (f *Fault) failure(op string) *armError {
	if f.Kind == "throttle" {
		return aerr(429, "TooManyRequests", "The request is being throttled (nuv emulator: injected fault on %s).", op)
	}
	status, code, msg := f.Status, f.Code, f.Message
	if status == 0 {
		status = 500
	}
	if code == "" {
		code = "InternalServerError"
		if f.Kind == "lro-failure" {
			code = "InternalOperationError"
		}
	}
	if msg == "" {
		msg = fmt.Sprintf("nuv emulator: injected failure in %s", op)
		if f.Kind == "lro-failure" {
			msg = fmt.Sprintf("nuv emulator: injected failure in the middle of %s", op)
		}
	}
	return &armError{Status: status, Code: code, Message: msg}
}

func writeFault(w http.ResponseWriter, f *Fault, op string) {
	e := f.failure(op)
	if f.Kind == "throttle" {
		w.Header().Set("Retry-After", "1")
	}
	writeARMError(w, e)
}

package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// Fault is a failure the emulator injects on request, to test a client's retries, resumption and
// error reporting. Faults are set through /_nuv/faults (POST adds, PUT replaces, DELETE clears,
// GET lists) or read from <dir>/faults.json (a JSON list) at start.
type Fault struct {
	// Operation is "service:Operation" (eks:CreateCluster, ec2:CreateVpc, iam:CreateRole) or
	// "service:*"; the SDK's operation names.
	Operation string `json:"operation"`
	// Kind is "throttle" (the service's throttling error, which SDKs retry), "error" (Code,
	// Message, Status) or "access-denied" (the service's authorization error, naming the IAM
	// permission and the resource).
	Kind string `json:"kind"`
	// Every makes the fault hit the Nth, 2Nth, ... call of the operation only (0 or 1: every call).
	Every int `json:"every,omitempty"`
	// Count is how many times the fault fires before it is spent (0: no limit).
	Count int `json:"count,omitempty"`
	// Resource restricts the fault to requests naming it (a path segment or a parameter value:
	// a cluster name, a role name, a VPC id).
	Resource string `json:"resource,omitempty"`
	// Code, Message and Status of an "error" fault (defaults: the service's internal error, 500).
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	Status  int    `json:"status,omitempty"`
	// Fired counts the times it fired.
	Fired int `json:"fired"`
}

func (f *Fault) validate() error {
	svc, op, ok := strings.Cut(f.Operation, ":")
	if !ok || op == "" || !map[string]bool{"eks": true, "ec2": true, "iam": true, "sts": true, "*": true}[svc] {
		return fmt.Errorf("fault operation %q: want service:Operation with service eks, ec2, iam or sts (e.g. eks:CreateCluster, ec2:*)", f.Operation)
	}
	switch f.Kind {
	case "throttle", "access-denied":
	case "error":
		if f.Status != 0 && (f.Status < 400 || f.Status > 599) {
			return fmt.Errorf("fault %s: status %d is not an HTTP error status (400-599)", f.Operation, f.Status)
		}
	default:
		return fmt.Errorf("fault %s: kind %q: want throttle, error or access-denied", f.Operation, f.Kind)
	}
	if f.Every < 0 || f.Count < 0 {
		return fmt.Errorf("fault %s: every and count cannot be negative", f.Operation)
	}
	return nil
}

// readFaultsFile reads a JSON list of faults; a missing file is no faults.
func readFaultsFile(path string) ([]*Fault, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	fs, err := decodeFaults(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fs, nil
}

// decodeFaults reads one fault object or a list of them.
func decodeFaults(b []byte) ([]*Fault, error) {
	var fs []*Fault
	if t := strings.TrimSpace(string(b)); strings.HasPrefix(t, "{") {
		var f Fault
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, err
		}
		fs = []*Fault{&f}
	} else if err := json.Unmarshal(b, &fs); err != nil {
		return nil, err
	}
	for _, f := range fs {
		if err := f.validate(); err != nil {
			return nil, err
		}
	}
	return fs, nil
}

// fault counts the call of op and returns the fault that hits it, if any.
func (s *Server) fault(rq *request, op string) *Fault {
	full := rq.service + ":" + op
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[full]++
	n := s.calls[full]
	for _, f := range s.faults {
		svc, fop, _ := strings.Cut(f.Operation, ":")
		if (svc != "*" && svc != rq.service) || (fop != "*" && fop != op) {
			continue
		}
		if f.Count > 0 && f.Fired >= f.Count {
			continue
		}
		if f.Every > 1 && n%f.Every != 0 {
			continue
		}
		if f.Resource != "" && !namesResource(rq, f.Resource) {
			continue
		}
		f.Fired++
		return f
	}
	return nil
}

// namesResource reports whether the request names res in its path, its parameters or its JSON body.
func namesResource(rq *request, res string) bool {
	for _, seg := range strings.Split(rq.http.URL.Path, "/") {
		if seg == res {
			return true
		}
	}
	for _, vs := range rq.form {
		for _, v := range vs {
			if v == res {
				return true
			}
		}
	}
	if len(rq.body) > 0 && rq.form == nil {
		var m map[string]any
		if json.Unmarshal(rq.body, &m) == nil {
			for _, v := range m {
				if v == res {
					return true
				}
			}
		}
	}
	return false
}

// apiError is the error the fault answers for service:op.
func (f *Fault) apiError(service, op, caller string) *apiError {
	switch f.Kind {
	case "throttle":
		switch service {
		case "eks":
			return errf(429, "ThrottlingException", "Rate exceeded (nuv emulator: injected fault on %s:%s)", service, op)
		case "ec2":
			return errf(503, "RequestLimitExceeded", "Request limit exceeded. (nuv emulator: injected fault on %s:%s)", service, op)
		}
		return errf(400, "Throttling", "Rate exceeded (nuv emulator: injected fault on %s:%s)", service, op)
	case "access-denied":
		res := f.Resource
		if res == "" {
			res = "*"
		}
		msg := fmt.Sprintf("User: %s is not authorized to perform: %s:%s on resource: %s because no identity-based policy allows the %s:%s action", caller, service, op, res, service, op)
		switch service {
		case "eks":
			return errf(403, "AccessDeniedException", "%s", msg)
		case "ec2":
			return errf(403, "UnauthorizedOperation", "You are not authorized to perform this operation. %s", msg)
		}
		return errf(403, "AccessDenied", "%s", msg)
	}
	status, code := f.Status, f.Code
	if status == 0 {
		status = 500
	}
	if code == "" {
		code = internalCode(service)
	}
	msg := f.Message
	if msg == "" {
		msg = fmt.Sprintf("nuv emulator: injected failure on %s:%s", service, op)
	}
	return &apiError{Status: status, Code: code, Msg: msg}
}

// faultList copies the faults (with their counts) for an answer.
func (s *Server) faultList() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Fault, len(s.faults))
	for i, f := range s.faults {
		out[i] = *f
	}
	return out
}

// faultsEndpoint serves /_nuv/faults.
func (s *Server) faultsEndpoint(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, 200, s.faultList())
	case http.MethodPost, http.MethodPut:
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		fs, err := decodeFaults(b)
		if err != nil {
			http.Error(w, "nuv emulator: faults: "+err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		if r.Method == http.MethodPut {
			s.faults = nil
		}
		s.faults = append(s.faults, fs...)
		s.mu.Unlock()
		writeJSON(w, 200, s.faultList())
	case http.MethodDelete:
		s.mu.Lock()
		s.faults = nil
		s.mu.Unlock()
		writeJSON(w, 200, []Fault{})
	default:
		http.Error(w, "nuv emulator: /_nuv/faults takes GET, POST, PUT or DELETE", http.StatusMethodNotAllowed)
	}
}

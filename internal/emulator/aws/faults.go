package aws

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
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
	emucore.FaultLimits
	// Resource restricts the fault to requests naming it (a path segment or a parameter value:
	// a cluster name, a role name, a VPC id).
	Resource string `json:"resource,omitempty"`
	// Code, Message and Status of an "error" fault (defaults: the service's internal error, 500).
	emucore.FaultError
	// Seconds is how long after its launch (or, for a fault naming an instance, after the fault
	// is set) a "terminate-after" fault terminates the instance.
	Seconds float64 `json:"seconds,omitempty"`
}

// The faults of EC2 instances: they do not fail the RunInstances call; each instance launched
// counts as one call of them. "launch-failure" makes the instance go from pending to terminated
// (StateReason Server.InternalError); "terminate-after" terminates it Seconds after its launch,
// or, with Resource an instance ID, that instance Seconds after the fault is set.
const (
	faultLaunchFailure  = "launch-failure"
	faultTerminateAfter = "terminate-after"
)

// instanceFault reports whether f is a fault of EC2 instances rather than of calls.
func (f *Fault) instanceFault() bool {
	return f.Kind == faultLaunchFailure || f.Kind == faultTerminateAfter
}

func (f *Fault) validate() error {
	svc, op, ok := strings.Cut(f.Operation, ":")
	if !ok || op == "" || !map[string]bool{"eks": true, "ec2": true, "iam": true, "sts": true, elbService: true, "*": true}[svc] {
		return fmt.Errorf("fault operation %q: want service:Operation with service eks, ec2, elasticloadbalancing, iam or sts (e.g. eks:CreateCluster, ec2:*)", f.Operation)
	}
	switch f.Kind {
	case "throttle", "access-denied":
	case faultLaunchFailure, faultTerminateAfter:
		if op != "RunInstances" && op != "*" || svc != "ec2" && svc != "*" {
			return fmt.Errorf("fault %s: kind %s is a fault of EC2 instances: give operation ec2:RunInstances", f.Operation, f.Kind)
		}
		if f.Seconds < 0 || (f.Kind == faultLaunchFailure && f.Seconds != 0) {
			return fmt.Errorf("fault %s: seconds %v: a terminate-after fault takes seconds >= 0, a launch-failure none", f.Operation, f.Seconds)
		}
	case "error":
		if err := f.CheckStatus(f.Operation); err != nil {
			return err
		}
	default:
		return fmt.Errorf("fault %s: kind %q: want throttle, error, access-denied, launch-failure or terminate-after", f.Operation, f.Kind)
	}
	return f.Check(f.Operation)
}

// decodeFaults reads one fault object or a list of them.
func decodeFaults(b []byte) ([]*Fault, error) {
	return emucore.DecodeFaults(b, false, (*Fault).validate)
}

// fault counts the call of op and returns the fault that hits it, if any.
func (s *Server) fault(rq *request, op string) *Fault {
	full := rq.service + ":" + op
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.HitFault(full, func(f *Fault) bool {
		svc, fop, _ := strings.Cut(f.Operation, ":")
		return !f.instanceFault() && (svc == "*" || svc == rq.service) && (fop == "*" || fop == op) && (f.Resource == "" || namesResource(rq, f.Resource))
	})
}

// namesResource reports whether the request names res in its path, its parameters or its JSON body.
func namesResource(rq *request, res string) bool {
	if emucore.NamesSegment(rq.http.URL.Path, res, func(a, b string) bool { return a == b }) {
		return true
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

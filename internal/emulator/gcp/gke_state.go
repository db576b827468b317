package gcp

import "time"

// GKE's state for operations: what the emulator keeps of an operation, in its own type. The
// routes answer with the API's form (gke_wire.go), made from it by wire(). (Clusters are still
// kept as containerpb.Cluster.)

// gkeOperation is an operation as the emulator keeps it. Its JSON names are the API's, so a state
// file that still holds operations in the API's form reads as well.
type gkeOperation struct {
	Name     string `json:"name"`
	Location string `json:"location"`
	// Type is the operation's type as GKE names it (CREATE_CLUSTER, UPGRADE_MASTER, ...).
	Type string `json:"operationType"`
	// Status is PENDING, RUNNING or DONE.
	Status     string `json:"status"`
	SelfLink   string `json:"selfLink"`
	TargetLink string `json:"targetLink"`
	// Detail is an UPGRADE_MASTER's target version.
	Detail        string    `json:"detail,omitempty"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	Start         time.Time `json:"startTime"`
	End           time.Time `json:"endTime,omitzero"`
	// Error is why it failed (nil: it did not, or has not finished).
	Error *gkeOpError `json:"error,omitempty"`
}

// gkeOpError is a failed operation's error: a gRPC status code and message.
type gkeOpError struct {
	Code    int32  `json:"code"`
	Message string `json:"message"`
}

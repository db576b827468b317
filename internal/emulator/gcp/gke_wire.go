package gcp

import (
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// GKE's wire form of operations (containerpb.Operation), made from the state's type
// (gke_state.go).

// opType is t as the state names it.
func opType(t containerpb.Operation_Type) string { return t.String() }

// wire is the operation as the API answers it.
func (o *gkeOperation) wire() *containerpb.Operation {
	w := &containerpb.Operation{Name: o.Name, Zone: o.Location, Location: o.Location,
		OperationType: containerpb.Operation_Type(containerpb.Operation_Type_value[o.Type]),
		Status:        containerpb.Operation_Status(containerpb.Operation_Status_value[o.Status]),
		SelfLink:      o.SelfLink, TargetLink: o.TargetLink, Detail: o.Detail, StatusMessage: o.StatusMessage,
		StartTime: o.Start.Format(time.RFC3339Nano)}
	if !o.End.IsZero() {
		w.EndTime = o.End.Format(time.RFC3339Nano)
	}
	if o.Status == containerpb.Operation_DONE.String() {
		w.Progress = &containerpb.OperationProgress{Status: containerpb.Operation_DONE}
	}
	if o.Error != nil {
		w.Error = status.New(codes.Code(o.Error.Code), o.Error.Message).Proto()
	}
	return w
}

// apiType is the operation's type as the API's enum.
func (o *opRec) apiType() containerpb.Operation_Type {
	return containerpb.Operation_Type(containerpb.Operation_Type_value[o.Op.Type])
}

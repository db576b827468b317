package gcp

import (
	"encoding/json"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// An operation survives state.json in nuv's form, and a state file holding it in the API's form
// (as the emulator wrote it before) reads the same.
func TestOperationStateRoundTrip(t *testing.T) {
	start := time.Date(2026, 12, 2, 9, 30, 1, 123456789, time.UTC)
	for _, tc := range []struct {
		name string
		op   *containerpb.Operation
	}{
		{"running", &containerpb.Operation{Name: "operation-1", Zone: "us-central1", Location: "us-central1", OperationType: containerpb.Operation_CREATE_CLUSTER,
			Status: containerpb.Operation_RUNNING, SelfLink: "https://x/operations/operation-1", TargetLink: "https://x/clusters/c", StartTime: start.Format(time.RFC3339Nano)}},
		{"failed upgrade", &containerpb.Operation{Name: "operation-2", Zone: "us-central1-a", Location: "us-central1-a", OperationType: containerpb.Operation_UPGRADE_MASTER,
			Status: containerpb.Operation_DONE, Detail: "1.35.2-gke.100", StatusMessage: "boom", SelfLink: "s", TargetLink: "t",
			StartTime: start.Format(time.RFC3339Nano), EndTime: start.Add(time.Minute).Format(time.RFC3339Nano),
			Progress: &containerpb.OperationProgress{Status: containerpb.Operation_DONE}, Error: status.New(codes.Internal, "boom").Proto()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			legacy, err := protojson.Marshal(tc.op)
			if err != nil {
				t.Fatal(err)
			}
			var old opRec
			if err := json.Unmarshal([]byte(`{"operation":`+string(legacy)+`,"cluster":"us-central1/c"}`), &old); err != nil {
				t.Fatalf("API-form state: %v", err)
			}
			if got := old.Op.wire(); !proto.Equal(got, tc.op) {
				t.Errorf("API-form state reads as\n%v\nwant\n%v", got, tc.op)
			}
			b, err := json.Marshal(&old)
			if err != nil {
				t.Fatal(err)
			}
			var again opRec
			if err := json.Unmarshal(b, &again); err != nil {
				t.Fatal(err)
			}
			if got := again.Op.wire(); !proto.Equal(got, tc.op) || again.Cluster != "us-central1/c" {
				t.Errorf("saved and read: %v (cluster %q), want %v", got, again.Cluster, tc.op)
			}
		})
	}
}

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

// A cluster survives state.json in nuv's form, with what the request set that the emulator does
// not act on; a state file holding it (and an operation's before copy) in the API's form, as the
// emulator wrote it before, reads the same.
func TestClusterStateRoundTrip(t *testing.T) {
	pool := func(name string, status containerpb.NodePool_Status) *containerpb.NodePool {
		return &containerpb.NodePool{Name: name, InitialNodeCount: 2, Locations: []string{"us-central1-a"}, Version: "1.35.7-gke.1200000",
			Status: status, SelfLink: "https://x/nodePools/" + name, InstanceGroupUrls: []string{"https://x/igm/" + name}, Etag: "e1",
			Config:     &containerpb.NodeConfig{MachineType: "e2-standard-4", DiskSizeGb: 50, ImageType: "COS_CONTAINERD"},
			Management: &containerpb.NodeManagement{AutoUpgrade: true, AutoRepair: true}}
	}
	rich := pool("w", containerpb.NodePool_RUNNING)
	rich.Autoscaling = &containerpb.NodePoolAutoscaling{Enabled: true, MinNodeCount: 1, MaxNodeCount: 4, LocationPolicy: containerpb.NodePoolAutoscaling_ANY}
	rich.Config.Labels, rich.Config.Spot = map[string]string{"a": "b"}, true
	rich.Config.Taints = []*containerpb.NodeTaint{{Key: "k", Value: "v", Effect: containerpb.NodeTaint_NO_SCHEDULE}, {Key: "j", Effect: containerpb.NodeTaint_NO_EXECUTE}}
	rich.Config.OauthScopes = []string{"https://www.googleapis.com/auth/cloud-platform"}
	failed := pool("bad", containerpb.NodePool_ERROR)
	failed.StatusMessage, failed.Management = "boom", &containerpb.NodeManagement{AutoRepair: true}
	for _, tc := range []struct {
		name string
		c    *containerpb.Cluster
	}{
		{"zonal with pools", &containerpb.Cluster{Name: "z", Description: "made by nuv", Location: "us-central1-a", Zone: "us-central1-a", Locations: []string{"us-central1-a"},
			Id: "abc", SelfLink: "https://x/clusters/z", CreateTime: "2026-12-02T09:30:01Z", InitialClusterVersion: "1.35.7-gke.1200000",
			CurrentMasterVersion: "1.36.2-gke.1500000", CurrentNodeVersion: "1.35.7-gke.1200000", CurrentNodeCount: 4,
			ReleaseChannel: &containerpb.ReleaseChannel{Channel: containerpb.ReleaseChannel_REGULAR}, ClusterIpv4Cidr: "10.4.0.0/14", ServicesIpv4Cidr: "10.8.0.0/20",
			Network: "default", Subnetwork: "default", Endpoint: "127.0.0.1:6443", MasterAuth: &containerpb.MasterAuth{ClusterCaCertificate: "Q0E="},
			Status: containerpb.Cluster_RECONCILING, ResourceLabels: map[string]string{"nuv-cluster": "z"}, LabelFingerprint: "f1", Etag: "e2",
			NodePools: []*containerpb.NodePool{pool("boot", containerpb.NodePool_RUNNING), rich, failed}}},
		{"regional in error", &containerpb.Cluster{Name: "r", Location: "europe-west1", Zone: "europe-west1", Locations: []string{"europe-west1-b", "europe-west1-c", "europe-west1-d"},
			Id: "def", SelfLink: "s", CreateTime: "2026-12-02T09:30:01Z", InitialClusterVersion: "1.34.9-gke.1300000", CurrentMasterVersion: "1.34.9-gke.1300000",
			CurrentNodeVersion: "1.34.9-gke.1300000", ReleaseChannel: &containerpb.ReleaseChannel{}, ClusterIpv4Cidr: "10.40.0.0/14", ServicesIpv4Cidr: "10.8.0.0/20",
			Network: "default", Subnetwork: "default", MasterAuth: &containerpb.MasterAuth{}, Status: containerpb.Cluster_ERROR, StatusMessage: "quota",
			LabelFingerprint: "f2", Etag: "e3", NodePools: []*containerpb.NodePool{failed}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			legacy, err := protojson.Marshal(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			var old clusterRec
			if err := json.Unmarshal([]byte(`{"cluster":`+string(legacy)+`,"op":"operation-1","webhook":"http://w","backend":true}`), &old); err != nil {
				t.Fatalf("API-form state: %v", err)
			}
			if got := old.C.wire(); !proto.Equal(got, tc.c) || old.Op != "operation-1" || old.Webhook != "http://w" || !old.Backend {
				t.Errorf("API-form state reads as\n%v (%+v)\nwant\n%v", got, old, tc.c)
			}
			b, err := json.Marshal(&old)
			if err != nil {
				t.Fatal(err)
			}
			var again clusterRec
			if err := json.Unmarshal(b, &again); err != nil {
				t.Fatal(err)
			}
			if got := again.C.wire(); !proto.Equal(got, tc.c) || again.Op != "operation-1" || !again.Backend {
				t.Errorf("saved and read: %v, want %v", got, tc.c)
			}
			// A copy is deep: changing it leaves the cluster as it was.
			cp := again.C.clone()
			if cp.Labels != nil {
				cp.Labels["x"] = "y"
			}
			cp.Locations[0], cp.Pools[0].Locations[0], cp.Pools[0].Status = "elsewhere", "elsewhere", stStopping
			if got := again.C.wire(); !proto.Equal(got, tc.c) {
				t.Errorf("changing a copy changed the cluster: %v", got)
			}

			var op opRec
			if err := json.Unmarshal([]byte(`{"operation":{"name":"operation-1","operationType":"SET_LABELS","status":"RUNNING"},"cluster":"l/c","before":`+string(legacy)+`}`), &op); err != nil {
				t.Fatalf("API-form before copy: %v", err)
			}
			if op.Before == nil || !proto.Equal(op.Before.wire(), tc.c) {
				t.Fatalf("API-form before copy reads as %v", op.Before)
			}
			if b, err = json.Marshal(&op); err != nil {
				t.Fatal(err)
			}
			var op2 opRec
			if err := json.Unmarshal(b, &op2); err != nil {
				t.Fatal(err)
			}
			if op2.Before == nil || !proto.Equal(op2.Before.wire(), tc.c) {
				t.Errorf("before copy saved and read: %v", op2.Before)
			}
		})
	}
}

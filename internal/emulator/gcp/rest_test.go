package gcp

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestRESTRoutes: each REST path gcloud and the Go REST client use goes to its RPC with the path
// in the request's name or parent (the zonal paths as the regional ones); an unserved verb is
// UNIMPLEMENTED naming its RPC, an unknown path or verb NOT_FOUND.
func TestRESTRoutes(t *testing.T) {
	const loc = "/v1/projects/p/locations/l"
	s, err := New(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		rpc          string
		field, value string
		code         codes.Code
	}{
		{"GET", loc + "/clusters", "ListClusters", "parent", "projects/p/locations/l", codes.OK},
		{"POST", "/v1/projects/p/zones/z/clusters", "CreateCluster", "parent", "projects/p/locations/z", codes.OK},
		{"GET", loc + "/serverConfig", "GetServerConfig", "name", "projects/p/locations/l", codes.OK},
		{"GET", loc + "/operations", "ListOperations", "parent", "projects/p/locations/l", codes.OK},
		{"GET", loc + "/operations/o", "GetOperation", "name", "projects/p/locations/l/operations/o", codes.OK},
		{"PUT", loc + "/clusters/c", "UpdateCluster", "name", "projects/p/locations/l/clusters/c", codes.OK},
		{"DELETE", loc + "/clusters/c", "DeleteCluster", "name", "projects/p/locations/l/clusters/c", codes.OK},
		{"POST", loc + "/clusters/c/nodePools", "CreateNodePool", "parent", "projects/p/locations/l/clusters/c", codes.OK},
		{"GET", loc + "/clusters/c/nodePools/np", "GetNodePool", "name", "projects/p/locations/l/clusters/c/nodePools/np", codes.OK},
		{"POST", loc + "/clusters/c/nodePools/np:setSize", "SetNodePoolSize", "name", "projects/p/locations/l/clusters/c/nodePools/np", codes.OK},
		{"POST", loc + "/clusters/c:setResourceLabels", "SetLabels", "name", "projects/p/locations/l/clusters/c", codes.OK},
		{"POST", loc + "/clusters/c:setLogging", "", "", "", codes.Unimplemented},
		{"POST", loc + "/clusters/c/nodePools/np:setResourceLabels", "", "", "", codes.Unimplemented},
		{"POST", loc + "/clusters/c:frobnicate", "", "", "", codes.NotFound},
		{"PATCH", loc + "/clusters/c", "", "", "", codes.NotFound},
		{"GET", "/v2/projects/p/locations/l/clusters", "", "", "", codes.NotFound},
		{"GET", "/v1/projects/p/regions/l/clusters", "", "", "", codes.NotFound},
	} {
		a := &api{s: s}
		rt, err := a.route(tc.method, tc.path)
		if status.Code(err) != tc.code {
			t.Errorf("%s %s: %v, want %v", tc.method, tc.path, err, tc.code)
			continue
		}
		if err != nil {
			continue
		}
		if rt.rpc != tc.rpc {
			t.Errorf("%s %s: rpc %s, want %s", tc.method, tc.path, rt.rpc, tc.rpc)
		}
		// The path is set when the call is made (the project p is not the emulator's: it fails).
		_, _ = rt.call(context.Background())
		m := rt.req.ProtoReflect()
		if got := m.Get(m.Descriptor().Fields().ByName(protoreflect.Name(tc.field))).String(); got != tc.value {
			t.Errorf("%s %s: %s = %q, want %q", tc.method, tc.path, tc.field, got, tc.value)
		}
	}
}

package gcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
	"github.com/nuv-dev/nuv/internal/lazy"
)

// restRoute is one REST method of the v1 API: the RPC it is, the request it decodes and how it
// is served.
type restRoute struct {
	rpc  string
	req  proto.Message
	call func(ctx context.Context) (proto.Message, error)
}

// restVerbs names the RPC of each custom verb (":setSize") of clusters and node pools, so that an
// unserved one is answered UNIMPLEMENTED by name.
var restVerbs = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"setSize": "SetNodePoolSize", "setAutoscaling": "SetNodePoolAutoscaling", "updateMaster": "UpdateMaster",
		"setLocations": "SetLocations", "setLogging": "SetLoggingService", "setMonitoring": "SetMonitoringService",
		"setAddons": "SetAddonsConfig", "setMasterAuth": "SetMasterAuth", "completeUpgrade": "CompleteNodePoolUpgrade",
		"rollback": "RollbackNodePoolUpgrade", "setManagement": "SetNodePoolManagement", "setResourceLabels": "SetLabels",
		"setLegacyAbac": "SetLegacyAbac", "startIpRotation": "StartIPRotation", "completeIpRotation": "CompleteIPRotation",
		"setNetworkPolicy": "SetNetworkPolicy", "setMaintenancePolicy": "SetMaintenancePolicy", "cancel": "CancelOperation",
		"checkAutopilotCompatibility": "CheckAutopilotCompatibility", "fetchClusterUpgradeInfo": "FetchClusterUpgradeInfo",
		"fetchNodePoolUpgradeInfo": "FetchNodePoolUpgradeInfo",
	}
}}

// call makes a restRoute of an RPC: req is decoded from the body, named by set, served by fn.
func call[T proto.Message, R proto.Message](rpc string, req T, set func(), fn func(context.Context, T) (R, error)) *restRoute {
	return &restRoute{rpc: rpc, req: req, call: func(ctx context.Context) (proto.Message, error) {
		set()
		out, err := fn(ctx, req)
		if err != nil {
			return nil, err
		}
		return out, nil
	}}
}

// route finds the REST method of a request: the v1 paths the Go REST client and gcloud use.
func (a *api) route(method, p string) (*restRoute, error) {
	rest, ok := strings.CutPrefix(p, "/v1/")
	if !ok {
		return nil, status.Errorf(codes.NotFound, "nuv GKE emulator: no such path %s (the API is under /v1/projects/*/locations/*)", p)
	}
	verb := ""
	if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
		rest, verb = rest[:i], rest[i+1:]
	}
	seg := strings.Split(rest, "/")
	n := len(seg)
	if n < 5 || seg[0] != "projects" || (seg[2] != "locations" && seg[2] != "zones") {
		return nil, status.Errorf(codes.NotFound, "nuv GKE emulator: no such path %s", p)
	}
	seg[2] = "locations" // the deprecated zonal paths name the same resources
	name := strings.Join(seg, "/")
	parent := strings.Join(seg[:n-1], "/")
	// The resource the path names: clusters, a cluster, node pools, a node pool, operations, ...
	what := seg[n-1]
	if n == 6 || n == 8 {
		what = seg[n-2] + "/*"
	}
	post, get, put, del := method == http.MethodPost, method == http.MethodGet, method == http.MethodPut, method == http.MethodDelete
	if verb != "" {
		rpc, ok := restVerbs.Get()[verb]
		if !ok {
			return nil, status.Errorf(codes.NotFound, "nuv GKE emulator: no such method :%s", verb)
		}
		switch {
		case post && what == "nodePools/*" && verb == "setSize":
			r := &containerpb.SetNodePoolSizeRequest{}
			return call(rpc, r, func() { r.Name = name }, a.SetNodePoolSize), nil
		case post && what == "nodePools/*" && verb == "setAutoscaling":
			r := &containerpb.SetNodePoolAutoscalingRequest{}
			return call(rpc, r, func() { r.Name = name }, a.SetNodePoolAutoscaling), nil
		case post && what == "clusters/*" && verb == "setResourceLabels":
			r := &containerpb.SetLabelsRequest{}
			return call(rpc, r, func() { r.Name = name }, a.SetLabels), nil
		case post && what == "clusters/*" && verb == "updateMaster":
			r := &containerpb.UpdateMasterRequest{}
			return call(rpc, r, func() { r.Name = name }, a.UpdateMaster), nil
		}
		return nil, status.Errorf(codes.Unimplemented, "nuv emulator does not implement the method %s (%s :%s)", rpc, method, verb)
	}
	switch {
	case get && what == "clusters":
		r := &containerpb.ListClustersRequest{}
		return call("ListClusters", r, func() { r.Parent = parent }, a.ListClusters), nil
	case post && what == "clusters":
		r := &containerpb.CreateClusterRequest{}
		return call("CreateCluster", r, func() { r.Parent = parent }, a.CreateCluster), nil
	case get && what == "operations":
		r := &containerpb.ListOperationsRequest{}
		return call("ListOperations", r, func() { r.Parent = parent }, a.ListOperations), nil
	case get && what == "serverConfig":
		r := &containerpb.GetServerConfigRequest{}
		return call("GetServerConfig", r, func() { r.Name = parent }, a.GetServerConfig), nil
	case get && what == "clusters/*":
		r := &containerpb.GetClusterRequest{}
		return call("GetCluster", r, func() { r.Name = name }, a.GetCluster), nil
	case put && what == "clusters/*":
		r := &containerpb.UpdateClusterRequest{}
		return call("UpdateCluster", r, func() { r.Name = name }, a.UpdateCluster), nil
	case del && what == "clusters/*":
		r := &containerpb.DeleteClusterRequest{}
		return call("DeleteCluster", r, func() { r.Name = name }, a.DeleteCluster), nil
	case get && what == "operations/*":
		r := &containerpb.GetOperationRequest{}
		return call("GetOperation", r, func() { r.Name = name }, a.GetOperation), nil
	case get && what == "nodePools" && n == 7:
		r := &containerpb.ListNodePoolsRequest{}
		return call("ListNodePools", r, func() { r.Parent = parent }, a.ListNodePools), nil
	case post && what == "nodePools" && n == 7:
		r := &containerpb.CreateNodePoolRequest{}
		return call("CreateNodePool", r, func() { r.Parent = parent }, a.CreateNodePool), nil
	case get && what == "nodePools/*":
		r := &containerpb.GetNodePoolRequest{}
		return call("GetNodePool", r, func() { r.Name = name }, a.GetNodePool), nil
	case put && what == "nodePools/*":
		r := &containerpb.UpdateNodePoolRequest{}
		return call("UpdateNodePool", r, func() { r.Name = name }, a.UpdateNodePool), nil
	case del && what == "nodePools/*":
		r := &containerpb.DeleteNodePoolRequest{}
		return call("DeleteNodePool", r, func() { r.Name = name }, a.DeleteNodePool), nil
	}
	return nil, status.Errorf(codes.NotFound, "nuv GKE emulator: no method %s %s", method, p)
}

// rest serves the REST form of the API: JSON bodies in the proto3 JSON mapping, errors in
// Google's JSON error shape.
func (s *Server) rest(w http.ResponseWriter, r *http.Request) {
	a := &api{s: s}
	rt, err := a.route(r.Method, r.URL.Path)
	if err != nil {
		restError(w, err)
		return
	}
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		b, err := emucore.ReadBody(r, MaxBody)
		var tooLarge *emucore.BodyTooLargeError
		if errors.As(err, &tooLarge) {
			// Google's front end: 413, the payload limit in the message.
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": http.StatusRequestEntityTooLarge,
				"message": fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", MaxBody), "status": codeName(codes.InvalidArgument)}})
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			_, _ = w.Write(append(b, '\n'))
			return
		}
		if err == nil && len(strings.TrimSpace(string(b))) > 0 {
			err = protojson.Unmarshal(b, rt.req)
		}
		if err != nil {
			restError(w, status.Errorf(codes.InvalidArgument, "Invalid JSON payload received. %v", err))
			return
		}
	}
	ctx, err := s.gate(r.Context(), rt.rpc, r.Header.Get("Authorization"), r.URL.Path)
	if err != nil {
		restError(w, err)
		return
	}
	out, err := rt.call(ctx)
	if err != nil {
		s.Log.V(1).Infof("GKE emulator: rest %s -> %v", rt.rpc, status.Code(err))
		restError(w, err)
		return
	}
	s.Log.V(2).Infof("GKE emulator: rest %s", rt.rpc)
	b, err := protojson.MarshalOptions{}.Marshal(out)
	if err != nil {
		restError(w, status.Errorf(codes.Internal, "encode %s: %v", rt.rpc, err))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(b)
}

// MaxBody is the largest REST request body the emulator takes; a larger one is answered 413.
const MaxBody = 8 << 20

// restError writes err as Google's JSON error: {"error": {"code", "message", "status"}}.
func restError(w http.ResponseWriter, err error) {
	st := status.Convert(err)
	code := httpStatus(st.Code())
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": st.Message(), "status": codeName(st.Code())}})
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// httpStatus is the HTTP status Google APIs answer for a gRPC code.
func httpStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return http.StatusBadRequest
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Canceled:
		return 499
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

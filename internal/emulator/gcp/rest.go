package gcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
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
var restVerbs = map[string]string{
	"setSize": "SetNodePoolSize", "setAutoscaling": "SetNodePoolAutoscaling", "updateMaster": "UpdateMaster",
	"setLocations": "SetLocations", "setLogging": "SetLoggingService", "setMonitoring": "SetMonitoringService",
	"setAddons": "SetAddonsConfig", "setMasterAuth": "SetMasterAuth", "completeUpgrade": "CompleteNodePoolUpgrade",
	"rollback": "RollbackNodePoolUpgrade", "setManagement": "SetNodePoolManagement", "setResourceLabels": "SetLabels",
	"setLegacyAbac": "SetLegacyAbac", "startIpRotation": "StartIPRotation", "completeIpRotation": "CompleteIPRotation",
	"setNetworkPolicy": "SetNetworkPolicy", "setMaintenancePolicy": "SetMaintenancePolicy", "cancel": "CancelOperation",
	"checkAutopilotCompatibility": "CheckAutopilotCompatibility", "fetchClusterUpgradeInfo": "FetchClusterUpgradeInfo",
	"fetchNodePoolUpgradeInfo": "FetchNodePoolUpgradeInfo",
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
	prefix := func(k int) string { return strings.Join(seg[:k], "/") }
	if seg[2] == "zones" {
		// The deprecated zonal paths name the same resources.
		seg[2] = "locations"
	}
	if verb != "" {
		rpc, ok := restVerbs[verb]
		if !ok {
			return nil, status.Errorf(codes.NotFound, "nuv GKE emulator: no such method :%s", verb)
		}
		switch {
		case rpc == "SetNodePoolSize" && n == 8 && method == http.MethodPost:
			r := &containerpb.SetNodePoolSizeRequest{}
			return &restRoute{rpc, r, func(ctx context.Context) (proto.Message, error) { r.Name = prefix(8); return a.SetNodePoolSize(ctx, r) }}, nil
		case rpc == "SetNodePoolAutoscaling" && n == 8 && method == http.MethodPost:
			r := &containerpb.SetNodePoolAutoscalingRequest{}
			return &restRoute{rpc, r, func(ctx context.Context) (proto.Message, error) {
				r.Name = prefix(8)
				return a.SetNodePoolAutoscaling(ctx, r)
			}}, nil
		case rpc == "SetLabels" && n == 6 && method == http.MethodPost:
			r := &containerpb.SetLabelsRequest{}
			return &restRoute{rpc, r, func(ctx context.Context) (proto.Message, error) { r.Name = prefix(6); return a.SetLabels(ctx, r) }}, nil
		case rpc == "UpdateMaster" && n == 6 && method == http.MethodPost:
			r := &containerpb.UpdateMasterRequest{}
			return &restRoute{rpc, r, func(ctx context.Context) (proto.Message, error) { r.Name = prefix(6); return a.UpdateMaster(ctx, r) }}, nil
		}
		return nil, status.Errorf(codes.Unimplemented, "nuv emulator does not implement the method %s (%s :%s)", rpc, method, verb)
	}
	switch {
	case n == 5 && seg[4] == "clusters" && method == http.MethodGet:
		r := &containerpb.ListClustersRequest{}
		return &restRoute{"ListClusters", r, func(ctx context.Context) (proto.Message, error) { r.Parent = prefix(4); return a.ListClusters(ctx, r) }}, nil
	case n == 5 && seg[4] == "clusters" && method == http.MethodPost:
		r := &containerpb.CreateClusterRequest{}
		return &restRoute{"CreateCluster", r, func(ctx context.Context) (proto.Message, error) { r.Parent = prefix(4); return a.CreateCluster(ctx, r) }}, nil
	case n == 5 && seg[4] == "operations" && method == http.MethodGet:
		r := &containerpb.ListOperationsRequest{}
		return &restRoute{"ListOperations", r, func(ctx context.Context) (proto.Message, error) {
			r.Parent = prefix(4)
			return a.ListOperations(ctx, r)
		}}, nil
	case n == 5 && seg[4] == "serverConfig" && method == http.MethodGet:
		r := &containerpb.GetServerConfigRequest{}
		return &restRoute{"GetServerConfig", r, func(ctx context.Context) (proto.Message, error) { r.Name = prefix(4); return a.GetServerConfig(ctx, r) }}, nil
	case n == 6 && seg[4] == "clusters" && method == http.MethodGet:
		r := &containerpb.GetClusterRequest{}
		return &restRoute{"GetCluster", r, func(ctx context.Context) (proto.Message, error) { r.Name = prefix(6); return a.GetCluster(ctx, r) }}, nil
	case n == 6 && seg[4] == "clusters" && method == http.MethodPut:
		r := &containerpb.UpdateClusterRequest{}
		return &restRoute{"UpdateCluster", r, func(ctx context.Context) (proto.Message, error) { r.Name = prefix(6); return a.UpdateCluster(ctx, r) }}, nil
	case n == 6 && seg[4] == "clusters" && method == http.MethodDelete:
		r := &containerpb.DeleteClusterRequest{}
		return &restRoute{"DeleteCluster", r, func(ctx context.Context) (proto.Message, error) { r.Name = prefix(6); return a.DeleteCluster(ctx, r) }}, nil
	case n == 6 && seg[4] == "operations" && method == http.MethodGet:
		r := &containerpb.GetOperationRequest{}
		return &restRoute{"GetOperation", r, func(ctx context.Context) (proto.Message, error) { r.Name = prefix(6); return a.GetOperation(ctx, r) }}, nil
	case n == 7 && seg[4] == "clusters" && seg[6] == "nodePools" && method == http.MethodGet:
		r := &containerpb.ListNodePoolsRequest{}
		return &restRoute{"ListNodePools", r, func(ctx context.Context) (proto.Message, error) { r.Parent = prefix(6); return a.ListNodePools(ctx, r) }}, nil
	case n == 7 && seg[4] == "clusters" && seg[6] == "nodePools" && method == http.MethodPost:
		r := &containerpb.CreateNodePoolRequest{}
		return &restRoute{"CreateNodePool", r, func(ctx context.Context) (proto.Message, error) {
			r.Parent = prefix(6)
			return a.CreateNodePool(ctx, r)
		}}, nil
	case n == 8 && seg[4] == "clusters" && seg[6] == "nodePools" && method == http.MethodGet:
		r := &containerpb.GetNodePoolRequest{}
		return &restRoute{"GetNodePool", r, func(ctx context.Context) (proto.Message, error) { r.Name = prefix(8); return a.GetNodePool(ctx, r) }}, nil
	case n == 8 && seg[4] == "clusters" && seg[6] == "nodePools" && method == http.MethodPut:
		r := &containerpb.UpdateNodePoolRequest{}
		return &restRoute{"UpdateNodePool", r, func(ctx context.Context) (proto.Message, error) { r.Name = prefix(8); return a.UpdateNodePool(ctx, r) }}, nil
	case n == 8 && seg[4] == "clusters" && seg[6] == "nodePools" && method == http.MethodDelete:
		r := &containerpb.DeleteNodePoolRequest{}
		return &restRoute{"DeleteNodePool", r, func(ctx context.Context) (proto.Message, error) { r.Name = prefix(8); return a.DeleteNodePool(ctx, r) }}, nil
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
		b, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
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
		s.log.V(1).Infof("GKE emulator: rest %s -> %v", rt.rpc, status.Code(err))
		restError(w, err)
		return
	}
	s.log.V(2).Infof("GKE emulator: rest %s", rt.rpc)
	b, err := protojson.MarshalOptions{}.Marshal(out)
	if err != nil {
		restError(w, status.Errorf(codes.Internal, "encode %s: %v", rt.rpc, err))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(b)
}

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

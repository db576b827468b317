package gcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

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

// restOp is how a REST method is served: the request message it decodes, the field of it the
// path fills ("name" with the path, "parent" with the path's parent, "name=parent" name with the
// parent) and the RPC that serves it.
type restOp struct {
	field  string
	newReq func() proto.Message
	serve  func(a *api, ctx context.Context, req proto.Message) (proto.Message, error)
}

// rpc is the restOp of an RPC of the api whose request the path fills in field.
func rpc[T proto.Message, R proto.Message](field string, fn func(*api, context.Context, T) (R, error)) restOp {
	return restOp{
		field:  field,
		newReq: func() proto.Message { var t T; return t.ProtoReflect().Type().New().Interface() },
		serve: func(a *api, ctx context.Context, req proto.Message) (proto.Message, error) {
			out, err := fn(a, ctx, req.(T))
			if err != nil {
				return nil, err
			}
			return out, nil
		},
	}
}

// restLoc is the path of a location; the deprecated zonal paths (projects/*/zones/*) are served
// as the same resources.
const restLoc = "projects/*/locations/*"

// restRoutes is the table of the REST methods of the v1 API, the paths the Go REST client and
// gcloud use; a custom verb (":setSize") is the path's last segment.
var restRoutes = lazy.Value[emucore.Routes[restOp]]{New: func() emucore.Routes[restOp] {
	return emucore.Routes[restOp]{
		{Method: "GET", Pattern: restLoc + "/clusters", Op: "ListClusters", Handler: rpc("parent", (*api).ListClusters)},
		{Method: "POST", Pattern: restLoc + "/clusters", Op: "CreateCluster", Handler: rpc("parent", (*api).CreateCluster)},
		{Method: "GET", Pattern: restLoc + "/operations", Op: "ListOperations", Handler: rpc("parent", (*api).ListOperations)},
		{Method: "GET", Pattern: restLoc + "/serverConfig", Op: "GetServerConfig", Handler: rpc("name=parent", (*api).GetServerConfig)},
		{Method: "GET", Pattern: restLoc + "/clusters/*", Op: "GetCluster", Handler: rpc("name", (*api).GetCluster)},
		{Method: "PUT", Pattern: restLoc + "/clusters/*", Op: "UpdateCluster", Handler: rpc("name", (*api).UpdateCluster)},
		{Method: "DELETE", Pattern: restLoc + "/clusters/*", Op: "DeleteCluster", Handler: rpc("name", (*api).DeleteCluster)},
		{Method: "GET", Pattern: restLoc + "/operations/*", Op: "GetOperation", Handler: rpc("name", (*api).GetOperation)},
		{Method: "GET", Pattern: restLoc + "/clusters/*/nodePools", Op: "ListNodePools", Handler: rpc("parent", (*api).ListNodePools)},
		{Method: "POST", Pattern: restLoc + "/clusters/*/nodePools", Op: "CreateNodePool", Handler: rpc("parent", (*api).CreateNodePool)},
		{Method: "GET", Pattern: restLoc + "/clusters/*/nodePools/*", Op: "GetNodePool", Handler: rpc("name", (*api).GetNodePool)},
		{Method: "PUT", Pattern: restLoc + "/clusters/*/nodePools/*", Op: "UpdateNodePool", Handler: rpc("name", (*api).UpdateNodePool)},
		{Method: "DELETE", Pattern: restLoc + "/clusters/*/nodePools/*", Op: "DeleteNodePool", Handler: rpc("name", (*api).DeleteNodePool)},
		{Method: "POST", Pattern: restLoc + "/clusters/*/nodePools/*/:setSize", Op: "SetNodePoolSize", Handler: rpc("name", (*api).SetNodePoolSize)},
		{Method: "POST", Pattern: restLoc + "/clusters/*/nodePools/*/:setAutoscaling", Op: "SetNodePoolAutoscaling", Handler: rpc("name", (*api).SetNodePoolAutoscaling)},
		{Method: "POST", Pattern: restLoc + "/clusters/*/:setResourceLabels", Op: "SetLabels", Handler: rpc("name", (*api).SetLabels)},
		{Method: "POST", Pattern: restLoc + "/clusters/*/:updateMaster", Op: "UpdateMaster", Handler: rpc("name", (*api).UpdateMaster)},
	}
}}

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
	if verb != "" {
		rpcName, ok := restVerbs.Get()[verb]
		if !ok {
			return nil, status.Errorf(codes.NotFound, "nuv GKE emulator: no such method :%s", verb)
		}
		rt, _ := restRoutes.Get().Match(method, append(seg, ":"+verb), false)
		if rt == nil {
			return nil, status.Errorf(codes.Unimplemented, "nuv emulator does not implement the method %s (%s :%s)", rpcName, method, verb)
		}
		return a.restCall(rt, name, parent), nil
	}
	rt, _ := restRoutes.Get().Match(method, seg, false)
	if rt == nil {
		return nil, status.Errorf(codes.NotFound, "nuv GKE emulator: no method %s %s", method, p)
	}
	return a.restCall(rt, name, parent), nil
}

// restCall is the call of the REST method rt on the resource name (whose parent is parent).
func (a *api) restCall(rt *emucore.Route[restOp], name, parent string) *restRoute {
	req := rt.Handler.newReq()
	field, from, _ := strings.Cut(rt.Handler.field, "=")
	value := name
	if from == "parent" || (from == "" && field == "parent") {
		value = parent
	}
	return &restRoute{rpc: rt.Op, req: req, call: func(ctx context.Context) (proto.Message, error) {
		m := req.ProtoReflect()
		m.Set(m.Descriptor().Fields().ByName(protoreflect.Name(field)), protoreflect.ValueOfString(value))
		return rt.Handler.serve(a, ctx, req)
	}}
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

package azure

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// MaxBody is the largest ARM request body the emulator takes; a larger one is answered 413.
const MaxBody = 8 << 20

// call is one ARM request being served.
type call struct {
	r    *http.Request
	segs []string // path segments as sent
	body []byte
	hdr  http.Header
	// lroFail, when set, makes the long-running operation the request starts end in this error.
	lroFail *armError
	op      string
	// apiVersion is the request's api-version, which the URLs of the operations it starts carry.
	apiVersion string
}

// handler serves one ARM operation with s.Mu held: status and body of the answer.
type handler func(s *Server, c *call) (int, any, *armError)

// armOp is how an ARM operation is served: the resource type whose api-versions it accepts and
// its handler.
type armOp struct {
	typ *apiType
	h   handler
}

// route is one ARM operation: the method, the path pattern (lower case, "*" a name), its
// operation id, the api-version it accepts and its handler.
type route = emucore.Route[armOp]

const (
	rgPath  = "subscriptions/*/resourcegroups/*"
	mcPath  = rgPath + "/providers/microsoft.containerservice/managedclusters/*"
	csPath  = "subscriptions/*/providers/microsoft.containerservice"
	locPath = csPath + "/locations/*"
)

// routes is ARM's table of operations.
var routes = emucore.Routes[armOp]{
	{Method: "GET", Pattern: "subscriptions/*/resourcegroups", Op: "ResourceGroups_List", Handler: armOp{groupsType, (*Server).listGroups}},
	{Method: "PUT", Pattern: rgPath, Op: "ResourceGroups_CreateOrUpdate", Handler: armOp{groupsType, (*Server).putGroup}},
	{Method: "GET", Pattern: rgPath, Op: "ResourceGroups_Get", Handler: armOp{groupsType, (*Server).getGroup}},
	{Method: "HEAD", Pattern: rgPath, Op: "ResourceGroups_CheckExistence", Handler: armOp{groupsType, (*Server).getGroup}},
	{Method: "DELETE", Pattern: rgPath, Op: "ResourceGroups_Delete", Handler: armOp{groupsType, (*Server).deleteGroup}},
	{Method: "GET", Pattern: rgPath + "/resources", Op: "Resources_ListByResourceGroup", Handler: armOp{groupsType, (*Server).listResources}},
	{Method: "GET", Pattern: "subscriptions/*/operationresults/*", Op: "ResourceGroups_OperationResults", Handler: armOp{groupsType, (*Server).operationResult}},
	{Method: "GET", Pattern: csPath, Op: "Providers_Get", Handler: armOp{groupsType, (*Server).getProvider}},
	{Method: "GET", Pattern: "subscriptions/*/providers/microsoft.compute/skus", Op: "ResourceSkus_List", Handler: armOp{skusType, (*Server).listSkus}},
	{Method: "GET", Pattern: locPath + "/kubernetesversions", Op: "ManagedClusters_ListKubernetesVersions", Handler: armOp{kubeVersType, (*Server).listVersions}},
	{Method: "GET", Pattern: locPath + "/operations/*", Op: "Operations_GetStatus", Handler: armOp{locsType, (*Server).operationStatus}},
	{Method: "GET", Pattern: locPath + "/operationresults/*", Op: "Operations_GetResult", Handler: armOp{locsType, (*Server).operationResult}},
	{Method: "GET", Pattern: csPath + "/managedclusters", Op: "ManagedClusters_List", Handler: armOp{clustersType, (*Server).listAllClusters}},
	{Method: "GET", Pattern: rgPath + "/providers/microsoft.containerservice/managedclusters", Op: "ManagedClusters_ListByResourceGroup", Handler: armOp{clustersType, (*Server).listClusters}},
	{Method: "PUT", Pattern: mcPath, Op: "ManagedClusters_CreateOrUpdate", Handler: armOp{clustersType, (*Server).putCluster}},
	{Method: "GET", Pattern: mcPath, Op: "ManagedClusters_Get", Handler: armOp{clustersType, (*Server).getCluster}},
	{Method: "DELETE", Pattern: mcPath, Op: "ManagedClusters_Delete", Handler: armOp{clustersType, (*Server).deleteCluster}},
	{Method: "PATCH", Pattern: mcPath, Op: "ManagedClusters_UpdateTags", Handler: armOp{clustersType, (*Server).updateClusterTags}},
	{Method: "POST", Pattern: mcPath + "/listclusterusercredential", Op: "ManagedClusters_ListClusterUserCredentials", Handler: armOp{credsType, (*Server).listCredential}},
	{Method: "POST", Pattern: mcPath + "/listclusteradmincredential", Op: "ManagedClusters_ListClusterAdminCredentials", Handler: armOp{credsType, (*Server).listCredential}},
	{Method: "GET", Pattern: mcPath + "/agentpools", Op: "AgentPools_List", Handler: armOp{poolsType, (*Server).listPools}},
	{Method: "PUT", Pattern: mcPath + "/agentpools/*", Op: "AgentPools_CreateOrUpdate", Handler: armOp{poolsType, (*Server).putPool}},
	{Method: "GET", Pattern: mcPath + "/agentpools/*", Op: "AgentPools_Get", Handler: armOp{poolsType, (*Server).getPool}},
	{Method: "DELETE", Pattern: mcPath + "/agentpools/*", Op: "AgentPools_Delete", Handler: armOp{poolsType, (*Server).deletePool}},
}

// implemented lists the operations served, for the error on one that is not.
func implemented() string {
	return strings.Join(routes.Ops(), ", ")
}

// arm authenticates and serves an ARM request.
func (s *Server) arm(w http.ResponseWriter, r *http.Request, segs []string) {
	if e := s.authenticate(r); e != nil {
		w.Header().Set("WWW-Authenticate", `Bearer authorization_uri="`+s.BaseURL()+`", error="invalid_token"`)
		writeARMError(w, e)
		return
	}
	rt, pathKnown := routes.Match(r.Method, segs, true)
	if rt == nil {
		if pathKnown {
			writeARMError(w, aerr(405, "MethodNotAllowed", "nuv azure emulator does not implement %s on %s (it implements: %s)", r.Method, r.URL.Path, implemented()))
			return
		}
		writeARMError(w, aerr(400, "UnsupportedOperation", "nuv azure emulator does not implement the operation %s %s (it implements: %s)", r.Method, r.URL.Path, implemented()))
		return
	}
	if r.URL.Query().Get("api-version") == "" {
		writeARMError(w, aerr(400, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests."))
		return
	}
	s.Mu.Lock()
	sub := s.St.SubscriptionID
	s.Mu.Unlock()
	if !strings.EqualFold(segs[1], sub) {
		writeARMError(w, aerr(404, "SubscriptionNotFound", "The subscription '%s' could not be found.", segs[1]))
		return
	}
	c := &call{r: r, segs: segs, hdr: w.Header(), op: rt.Op}
	if f := s.fault(rt.Op, r.URL.Path); f != nil {
		if f.Kind == "lro-failure" {
			c.lroFail = f.failure(rt.Op)
		} else {
			s.Log.V(1).Infof("azure emulator: fault %s on %s", f.Kind, rt.Op)
			writeFault(w, f, rt.Op)
			return
		}
	}
	body, err := emucore.ReadBody(r, MaxBody)
	var tooLarge *emucore.BodyTooLargeError
	if errors.As(err, &tooLarge) {
		writeARMError(w, aerr(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "The request content size exceeds the maximum of %d bytes.", MaxBody))
		return
	}
	if err != nil {
		writeARMError(w, aerr(400, "InvalidRequestContent", "read the request: %v", err))
		return
	}
	c.body = body
	c.apiVersion = r.URL.Query().Get("api-version")
	s.Mu.Lock()
	if e := s.checkAPIVersion(c, rt.Handler.typ); e != nil {
		s.Mu.Unlock()
		writeARMError(w, e)
		return
	}
	status, out, e := rt.Handler.h(s, c)
	var b []byte
	if e == nil && out != nil {
		// Encode under the lock: out points into the state the reconciler changes.
		b, err = json.Marshal(out)
		if err != nil {
			e = aerr(500, "InternalServerError", "nuv azure emulator: encode %s: %v", rt.Op, err)
		}
	}
	if e == nil && r.Method != http.MethodGet && r.Method != http.MethodHead {
		if err := s.Save(); err != nil {
			e = aerr(500, "InternalServerError", "nuv azure emulator: %v", err)
		}
	}
	s.Mu.Unlock()
	w.Header().Set("x-ms-request-id", newUUID())
	if e != nil {
		s.Log.V(1).Infof("azure emulator: %s -> %s", rt.Op, e.Code)
		writeARMError(w, e)
		return
	}
	s.Log.V(2).Infof("azure emulator: %s %d", rt.Op, status)
	if b == nil {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// checkAPIVersion refuses, as ARM does, an api-version Azure has not published for the resource
// type of the request: InvalidApiVersionParameter for ARM's own types (resource groups),
// NoRegisteredProviderFound for a resource provider's, naming the request's location. s.Mu is held.
func (s *Server) checkAPIVersion(c *call, t *apiType) *armError {
	if t.serves(c.apiVersion) {
		return nil
	}
	list := strings.Join(t.newestFirst(), ", ")
	if !t.provider {
		return aerr(400, "InvalidApiVersionParameter", "The api-version '%s' is invalid. The supported versions are '%s'. Please see https://aka.ms/api-version for more information.", c.apiVersion, strings.ReplaceAll(list, " ", ""))
	}
	return aerr(400, "NoRegisteredProviderFound", "No registered resource provider found for location '%s' and API version '%s' for type '%s'. The supported api-versions are '%s'. The supported locations are '%s'.",
		s.requestLocation(c), c.apiVersion, t.name, list, regionNames())
}

// requestLocation is the location a request is for, as ARM routes it: the body's location, the
// location in the path (locations/X), the managed cluster's or the resource group's, the
// $filter's (location eq 'x'); "global" when nothing names one.
func (s *Server) requestLocation(c *call) string {
	var in struct {
		Location string `json:"location"`
	}
	if json.Unmarshal(c.body, &in) == nil && in.Location != "" {
		return NormalizeLocation(in.Location)
	}
	for i := 0; i+1 < len(c.segs); i++ {
		if strings.EqualFold(c.segs[i], "locations") {
			return NormalizeLocation(c.segs[i+1])
		}
	}
	if len(c.segs) >= 4 && strings.EqualFold(c.segs[2], "resourcegroups") {
		if len(c.segs) >= 8 {
			if mc, ok := s.St.Clusters[clusterKey(c.segs[3], c.segs[7])]; ok {
				return mc.Location
			}
		}
		if g, ok := s.St.Groups[strings.ToLower(c.segs[3])]; ok {
			return g.Location
		}
	}
	if f := c.r.URL.Query().Get("$filter"); f != "" {
		if _, v, ok := strings.Cut(f, "eq"); ok {
			return NormalizeLocation(strings.Trim(strings.TrimSpace(v), "'"))
		}
	}
	return "global"
}

// decode reads a JSON request body into v.
func decode(c *call, v any) *armError {
	if len(c.body) == 0 {
		return aerr(400, "InvalidRequestContent", "The request content was invalid and could not be deserialized: the body is empty.")
	}
	if err := json.Unmarshal(c.body, v); err != nil {
		return aerr(400, "InvalidRequestContent", "The request content was invalid and could not be deserialized: %v", err)
	}
	return nil
}

// startOp records a new long-running operation on resource and sets the polling headers:
// Azure-AsyncOperation always, Location too when withLocation.
func (s *Server) startOp(c *call, resource, location string, withLocation bool) *operation {
	op := &operation{ID: newUUID(), Name: c.op, Resource: resource, Location: NormalizeLocation(location), Status: "InProgress", Start: time.Now().UTC(), FailWith: c.lroFail}
	s.St.Operations[op.ID] = op
	sub := s.St.SubscriptionID
	base := fmt.Sprintf("%s/subscriptions/%s/providers/Microsoft.ContainerService/locations/%s", s.Base, sub, op.Location)
	c.hdr.Set("Azure-AsyncOperation", base+"/operations/"+op.ID+"?api-version="+c.apiVersion)
	if withLocation {
		c.hdr.Set("Location", base+"/operationresults/"+op.ID+"?api-version="+c.apiVersion)
	}
	c.hdr.Set("Retry-After", "1")
	return op
}

// finishOp ends an operation; e nil is success.
func (s *Server) finishOp(id string, e *armError) {
	op, ok := s.St.Operations[id]
	if !ok || op.Status != "InProgress" {
		return
	}
	op.End = time.Now().UTC()
	if e != nil {
		op.Status, op.Error = "Failed", e
		s.Log.Infof("azure emulator: %s on %s failed: %s", op.Name, op.Resource, e.Message)
		return
	}
	op.Status = "Succeeded"
}

// opStatus is the Azure-AsyncOperation status resource.
type opStatus struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Status    string    `json:"status"`
	StartTime string    `json:"startTime"`
	EndTime   string    `json:"endTime,omitempty"`
	Error     *armError `json:"error,omitempty"`
}

func (s *Server) operationStatus(c *call) (int, any, *armError) {
	id := c.segs[len(c.segs)-1]
	op, ok := s.St.Operations[id]
	if !ok {
		return 0, nil, aerr(404, "NotFound", "Operation %s was not found.", id)
	}
	c.hdr.Set("Retry-After", "1")
	st := opStatus{ID: c.r.URL.Path, Name: op.ID, Status: op.Status, StartTime: op.Start.Format(time.RFC3339Nano), Error: op.Error}
	if !op.End.IsZero() {
		st.EndTime = op.End.Format(time.RFC3339Nano)
	}
	return 200, st, nil
}

// operationResult is the Location of an operation: 202 while it runs, then the operation's
// error, or its end: 204 for AKS's deletions, 200 for a resource group's (ARM's
// subscriptions/{id}/operationresults answers 200, the status ResourceGroups_Delete defines; the
// JavaScript SDK takes no other).
func (s *Server) operationResult(c *call) (int, any, *armError) {
	id := c.segs[len(c.segs)-1]
	op, ok := s.St.Operations[id]
	if !ok {
		return 0, nil, aerr(404, "NotFound", "Operation %s was not found.", id)
	}
	switch op.Status {
	case "InProgress":
		c.hdr.Set("Retry-After", "1")
		c.hdr.Set("Location", s.Base+c.r.URL.RequestURI())
		return 202, nil, nil
	case "Failed":
		e := *op.Error
		return 0, nil, &e
	}
	if c.op == "ResourceGroups_OperationResults" {
		return 200, nil, nil
	}
	return 204, nil, nil
}

// expireOps forgets operations finished more than an hour ago.
func (s *Server) expireOps(t time.Time) bool {
	changed := false
	for id, op := range s.St.Operations {
		if op.Status != "InProgress" && t.Sub(op.End) > time.Hour {
			delete(s.St.Operations, id)
			changed = true
		}
	}
	return changed
}

// listSkus answers Microsoft.Compute/skus: the VM sizes per region with their zones, filtered by
// $filter=location eq 'x' when given.
func (s *Server) listSkus(c *call) (int, any, *armError) {
	want := ""
	if f := c.r.URL.Query().Get("$filter"); f != "" {
		_, v, ok := strings.Cut(f, "eq")
		if !ok {
			return 0, nil, aerr(400, "InvalidFilter", "The $filter '%s' is not supported (nuv azure emulator: location eq '<region>').", f)
		}
		want = NormalizeLocation(strings.Trim(strings.TrimSpace(v), "'"))
	}
	type locInfo struct {
		Location string   `json:"location"`
		Zones    []string `json:"zones"`
	}
	type sku struct {
		ResourceType string    `json:"resourceType"`
		Name         string    `json:"name"`
		Tier         string    `json:"tier"`
		Size         string    `json:"size"`
		Locations    []string  `json:"locations"`
		LocationInfo []locInfo `json:"locationInfo"`
		Restrictions []any     `json:"restrictions"`
	}
	var out []sku
	for _, name := range vmSizeNames() {
		for _, r := range Regions {
			if want != "" && r.Name != want {
				continue
			}
			if _, ok := vmSizeIn(name, r.Name); !ok {
				continue
			}
			out = append(out, sku{ResourceType: "virtualMachines", Name: name, Tier: "Standard", Size: strings.TrimPrefix(name, "Standard_"),
				Locations: []string{r.Name}, LocationInfo: []locInfo{{Location: r.Name, Zones: slices.Clone(r.Zones)}}, Restrictions: []any{}})
		}
	}
	return 200, map[string]any{"value": out}, nil
}

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
}

// handler serves one ARM operation with s.Mu held: status and body of the answer.
type handler func(s *Server, c *call) (int, any, *armError)

// route is one ARM operation: the method, the path pattern (lower case, "*" a name), the
// api-versions it accepts and its handler.
type route struct {
	method  string
	pattern string
	op      string
	version string
	h       handler
}

const (
	rgPath  = "subscriptions/*/resourcegroups/*"
	mcPath  = rgPath + "/providers/microsoft.containerservice/managedclusters/*"
	csPath  = "subscriptions/*/providers/microsoft.containerservice"
	locPath = csPath + "/locations/*"
)

var routes = []route{
	{"GET", "subscriptions/*/resourcegroups", "ResourceGroups_List", ResourcesAPIVersion, (*Server).listGroups},
	{"PUT", rgPath, "ResourceGroups_CreateOrUpdate", ResourcesAPIVersion, (*Server).putGroup},
	{"GET", rgPath, "ResourceGroups_Get", ResourcesAPIVersion, (*Server).getGroup},
	{"HEAD", rgPath, "ResourceGroups_CheckExistence", ResourcesAPIVersion, (*Server).getGroup},
	{"DELETE", rgPath, "ResourceGroups_Delete", ResourcesAPIVersion, (*Server).deleteGroup},
	{"GET", rgPath + "/resources", "Resources_ListByResourceGroup", ResourcesAPIVersion, (*Server).listResources},
	{"GET", "subscriptions/*/operationresults/*", "ResourceGroups_OperationResults", ResourcesAPIVersion, (*Server).operationResult},
	{"GET", csPath, "Providers_Get", ResourcesAPIVersion, (*Server).getProvider},
	{"GET", "subscriptions/*/providers/microsoft.compute/skus", "ResourceSkus_List", SkusAPIVersion, (*Server).listSkus},
	{"GET", locPath + "/kubernetesversions", "ManagedClusters_ListKubernetesVersions", APIVersion, (*Server).listVersions},
	{"GET", locPath + "/operations/*", "Operations_GetStatus", APIVersion, (*Server).operationStatus},
	{"GET", locPath + "/operationresults/*", "Operations_GetResult", APIVersion, (*Server).operationResult},
	{"GET", csPath + "/managedclusters", "ManagedClusters_List", APIVersion, (*Server).listAllClusters},
	{"GET", rgPath + "/providers/microsoft.containerservice/managedclusters", "ManagedClusters_ListByResourceGroup", APIVersion, (*Server).listClusters},
	{"PUT", mcPath, "ManagedClusters_CreateOrUpdate", APIVersion, (*Server).putCluster},
	{"GET", mcPath, "ManagedClusters_Get", APIVersion, (*Server).getCluster},
	{"DELETE", mcPath, "ManagedClusters_Delete", APIVersion, (*Server).deleteCluster},
	{"POST", mcPath + "/listclusterusercredential", "ManagedClusters_ListClusterUserCredentials", APIVersion, (*Server).listCredential},
	{"POST", mcPath + "/listclusteradmincredential", "ManagedClusters_ListClusterAdminCredentials", APIVersion, (*Server).listCredential},
	{"GET", mcPath + "/agentpools", "AgentPools_List", APIVersion, (*Server).listPools},
	{"PUT", mcPath + "/agentpools/*", "AgentPools_CreateOrUpdate", APIVersion, (*Server).putPool},
	{"GET", mcPath + "/agentpools/*", "AgentPools_Get", APIVersion, (*Server).getPool},
	{"DELETE", mcPath + "/agentpools/*", "AgentPools_Delete", APIVersion, (*Server).deletePool},
}

func matches(pattern string, segs []string) bool {
	p := strings.Split(pattern, "/")
	if len(p) != len(segs) {
		return false
	}
	for i := range p {
		if p[i] != "*" && p[i] != strings.ToLower(segs[i]) {
			return false
		}
	}
	return true
}

// implemented lists the operations served, for the error on one that is not.
func implemented() string {
	var n []string
	for _, r := range routes {
		n = append(n, r.op)
	}
	return strings.Join(n, ", ")
}

// arm authenticates and serves an ARM request.
func (s *Server) arm(w http.ResponseWriter, r *http.Request, segs []string) {
	if e := s.authenticate(r); e != nil {
		w.Header().Set("WWW-Authenticate", `Bearer authorization_uri="`+s.BaseURL()+`", error="invalid_token"`)
		writeARMError(w, e)
		return
	}
	var rt *route
	pathKnown := false
	for i := range routes {
		if matches(routes[i].pattern, segs) {
			pathKnown = true
			if routes[i].method == r.Method {
				rt = &routes[i]
				break
			}
		}
	}
	if rt == nil {
		if pathKnown {
			writeARMError(w, aerr(405, "MethodNotAllowed", "nuv azure emulator does not implement %s on %s (it implements: %s)", r.Method, r.URL.Path, implemented()))
			return
		}
		writeARMError(w, aerr(400, "UnsupportedOperation", "nuv azure emulator does not implement the operation %s %s (it implements: %s)", r.Method, r.URL.Path, implemented()))
		return
	}
	if e := s.checkAPIVersion(r, segs, rt); e != nil {
		writeARMError(w, e)
		return
	}
	s.Mu.Lock()
	sub := s.St.SubscriptionID
	s.Mu.Unlock()
	if !strings.EqualFold(segs[1], sub) {
		writeARMError(w, aerr(404, "SubscriptionNotFound", "The subscription '%s' could not be found.", segs[1]))
		return
	}
	c := &call{r: r, segs: segs, hdr: w.Header(), op: rt.op}
	if f := s.fault(rt.op, r.URL.Path); f != nil {
		if f.Kind == "lro-failure" {
			c.lroFail = f.failure(rt.op)
		} else {
			s.Log.V(1).Infof("azure emulator: fault %s on %s", f.Kind, rt.op)
			writeFault(w, f, rt.op)
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
	s.Mu.Lock()
	status, out, e := rt.h(s, c)
	var b []byte
	if e == nil && out != nil {
		// Encode under the lock: out points into the state the reconciler changes.
		b, err = json.Marshal(out)
		if err != nil {
			e = aerr(500, "InternalServerError", "nuv azure emulator: encode %s: %v", rt.op, err)
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
		s.Log.V(1).Infof("azure emulator: %s -> %s", rt.op, e.Code)
		writeARMError(w, e)
		return
	}
	s.Log.V(2).Infof("azure emulator: %s %d", rt.op, status)
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

// checkAPIVersion refuses a request without api-version or with one the route does not serve, as
// ARM does.
func (s *Server) checkAPIVersion(r *http.Request, segs []string, rt *route) *armError {
	v := r.URL.Query().Get("api-version")
	if v == "" {
		return aerr(400, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests.")
	}
	if v == rt.version {
		return nil
	}
	if rt.version == APIVersion {
		typ := "managedClusters"
		if strings.Contains(rt.pattern, "agentpools") {
			typ = "managedClusters/agentPools"
		} else if strings.Contains(rt.pattern, "locations") {
			typ = "locations"
		}
		return aerr(400, "NoRegisteredProviderFound", "No registered resource provider found for location '%s' and API version '%s' for type '%s'. The supported api-versions are '%s'. The supported locations are '%s'.",
			"global", v, typ, APIVersion, regionNames())
	}
	return aerr(400, "InvalidApiVersionParameter", "The api-version '%s' is invalid. The supported versions are '%s'.", v, rt.version)
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
	c.hdr.Set("Azure-AsyncOperation", base+"/operations/"+op.ID+"?api-version="+APIVersion)
	if withLocation {
		c.hdr.Set("Location", base+"/operationresults/"+op.ID+"?api-version="+APIVersion)
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

// operationResult is the Location of an operation: 202 while it runs, then 204 (a deletion), the
// resource, or the operation's error.
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

package azure

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// rgWire is a resource group as ARM answers it.
type rgWire struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Type       string            `json:"type"`
	Location   string            `json:"location"`
	ManagedBy  string            `json:"managedBy,omitempty"`
	Tags       map[string]string `json:"tags,omitempty"`
	Properties struct {
		ProvisioningState string `json:"provisioningState"`
	} `json:"properties"`
}

func (s *Server) groupWire(g *group) rgWire {
	w := rgWire{ID: fmt.Sprintf("/subscriptions/%s/resourceGroups/%s", s.St.SubscriptionID, g.Name), Name: g.Name,
		Type: "Microsoft.Resources/resourceGroups", Location: g.Location, ManagedBy: g.ManagedBy, Tags: g.Tags}
	w.Properties.ProvisioningState = g.State
	return w
}

func groupNotFound(name string) *armError {
	return aerr(404, "ResourceGroupNotFound", "Resource group '%s' could not be found.", name)
}

func (s *Server) listGroups(*call) (int, any, *armError) {
	var out []rgWire
	for _, k := range sortedKeys(s.St.Groups) {
		out = append(out, s.groupWire(s.St.Groups[k]))
	}
	return 200, map[string]any{"value": out}, nil
}

func (s *Server) putGroup(c *call) (int, any, *armError) {
	name := c.segs[3]
	var in struct {
		Location  string            `json:"location"`
		Tags      map[string]string `json:"tags"`
		ManagedBy string            `json:"managedBy"`
	}
	if e := decode(c, &in); e != nil {
		return 0, nil, e
	}
	if in.Location == "" {
		return 0, nil, aerr(400, "LocationRequired", "The location property is required for this definition.")
	}
	r, ok := region(in.Location)
	if !ok {
		return 0, nil, aerr(400, "LocationNotAvailableForResourceGroup", "The provided location '%s' is not available for resource group. List of available regions is '%s'.", in.Location, regionNames())
	}
	if g, ok := s.St.Groups[strings.ToLower(name)]; ok {
		if g.State == "Deleting" {
			return 0, nil, aerr(409, "ResourceGroupBeingDeleted", "The resource group '%s' is in deprovisioning state and cannot perform this operation.", g.Name)
		}
		if g.Location != r.Name {
			return 0, nil, aerr(409, "InvalidResourceGroupLocation", "Invalid resource group location '%s'. The Resource group already exists in location '%s'.", in.Location, g.Location)
		}
		g.Tags = in.Tags
		return 200, s.groupWire(g), nil
	}
	g := &group{Name: name, Location: r.Name, Tags: in.Tags, State: "Succeeded"}
	s.St.Groups[strings.ToLower(name)] = g
	s.Log.Infof("azure emulator: resource group %s created in %s", name, r.Name)
	return 201, s.groupWire(g), nil
}

func (s *Server) getGroup(c *call) (int, any, *armError) {
	g, ok := s.St.Groups[strings.ToLower(c.segs[3])]
	if !ok {
		return 0, nil, groupNotFound(c.segs[3])
	}
	if c.r.Method == "HEAD" {
		return 204, nil, nil
	}
	return 200, s.groupWire(g), nil
}

// deleteGroup deletes a resource group and everything in it (its managed clusters first), as a
// long-running operation polled through Location.
func (s *Server) deleteGroup(c *call) (int, any, *armError) {
	g, ok := s.St.Groups[strings.ToLower(c.segs[3])]
	if !ok {
		return 0, nil, groupNotFound(c.segs[3])
	}
	if g.ManagedBy != "" && g.State != "Deleting" {
		return 0, nil, aerr(409, "OperationNotAllowed", "The resource group '%s' is managed by %s and is deleted with it.", g.Name, g.ManagedBy)
	}
	if g.State != "Deleting" {
		op := &operation{ID: newUUID(), Name: c.op, Resource: g.Name, Location: g.Location, Status: "InProgress", Start: time.Now().UTC(), FailWith: c.lroFail}
		s.St.Operations[op.ID] = op
		g.State, g.Due, g.Op = "Deleting", time.Now().Add(s.Delay), op.ID
		for _, mc := range s.St.Clusters {
			if strings.EqualFold(mc.Group, g.Name) {
				s.beginClusterDelete(mc, "")
			}
		}
		s.Log.Infof("azure emulator: deleting resource group %s", g.Name)
	}
	c.hdr.Set("Location", fmt.Sprintf("%s/subscriptions/%s/operationresults/%s?api-version=%s", s.Base, s.St.SubscriptionID, g.Op, c.apiVersion))
	c.hdr.Set("Retry-After", "1")
	return 202, nil, nil
}

// reconcileGroups removes resource groups being deleted once they are empty and due.
func (s *Server) reconcileGroups(t time.Time) bool {
	changed := false
	for k, g := range s.St.Groups {
		if g.State != "Deleting" || t.Before(g.Due) {
			continue
		}
		busy := false
		for _, mc := range s.St.Clusters {
			if strings.EqualFold(mc.Group, g.Name) {
				busy = true
			}
		}
		if busy {
			continue
		}
		if op := s.St.Operations[g.Op]; op != nil && op.FailWith != nil {
			s.finishOp(g.Op, op.FailWith)
			g.State = "Succeeded"
			changed = true
			continue
		}
		delete(s.St.Groups, k)
		s.finishOp(g.Op, nil)
		s.Log.Infof("azure emulator: resource group %s deleted", g.Name)
		changed = true
	}
	return changed
}

func (s *Server) listResources(c *call) (int, any, *armError) {
	g, ok := s.St.Groups[strings.ToLower(c.segs[3])]
	if !ok {
		return 0, nil, groupNotFound(c.segs[3])
	}
	type res struct {
		ID       string             `json:"id"`
		Name     string             `json:"name"`
		Type     string             `json:"type"`
		Location string             `json:"location"`
		Tags     map[string]*string `json:"tags,omitempty"`
	}
	out := []res{}
	for _, k := range sortedKeys(s.St.Clusters) {
		mc := s.St.Clusters[k]
		if strings.EqualFold(mc.Group, g.Name) {
			out = append(out, res{ID: mc.ID, Name: mc.Name, Type: "Microsoft.ContainerService/managedClusters", Location: mc.Location, Tags: tagsWire(mc.Tags)})
		}
	}
	return 200, map[string]any{"value": out}, nil
}

func (s *Server) getProvider(c *call) (int, any, *armError) {
	var locs []string
	for _, r := range Regions {
		locs = append(locs, r.Display)
	}
	type rt struct {
		ResourceType string   `json:"resourceType"`
		Locations    []string `json:"locations"`
		APIVersions  []string `json:"apiVersions"`
	}
	return 200, map[string]any{
		"id":                fmt.Sprintf("/subscriptions/%s/providers/Microsoft.ContainerService", s.St.SubscriptionID),
		"namespace":         "Microsoft.ContainerService",
		"registrationState": "Registered",
		"resourceTypes": []rt{
			{"managedClusters", locs, clustersType.newestFirst()},
			{"managedClusters/agentPools", locs, poolsType.newestFirst()},
			{"locations/kubernetesVersions", locs, kubeVersType.newestFirst()},
		},
	}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

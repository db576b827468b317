package aws

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"time"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
	"github.com/nuv-dev/nuv/internal/kube"
)

// Clusters runs the control planes behind EKS clusters (LocalClusters: nuv local clusters).
type Clusters interface {
	// Ensure makes the control plane of cp.Name exist and run (creating it, or starting it when
	// stopped) and returns where it answers.
	Ensure(ctx context.Context, cp ControlPlane) (Endpoint, error)
	// SetNodeGroups makes the cluster's nodes those of groups: nodes are added and removed so
	// each group has Count nodes.
	SetNodeGroups(ctx context.Context, name string, groups []NodeGroup) error
	// Delete stops and removes the control plane; a missing one is no error.
	Delete(ctx context.Context, name string) error
}

// ControlPlane is what an EKS cluster asks of its control plane.
type ControlPlane struct {
	Name    string // the EKS cluster's name
	Version string // the EKS Kubernetes version (the control plane may run another, see LocalClusters)
	// TokenWebhook is the URL of the emulator's TokenReview endpoint for this cluster.
	TokenWebhook string
}

// Endpoint is where a control plane answers: its HTTPS URL and CA certificate (PEM).
type Endpoint = emucore.Endpoint

// NodeGroup is a managed node group as nodes: Count nodes labelled and tainted as EKS does, with
// providerIDs aws:///<zone>/i-....
type NodeGroup struct {
	Name   string
	Count  int
	Labels map[string]string
	Taints []Taint
	// Zone is the Availability Zone of the group's first subnet (the providerID's zone).
	Zone string
}

// Taint is a Kubernetes node taint (effect NoSchedule, NoExecute or PreferNoSchedule).
type Taint struct {
	Key, Value, Effect string
}

const tokenReviewPath = "eks/token-review/"

// reconcileEKS moves clusters, node groups, add-ons and updates along; s.Mu is held.
func (s *Server) reconcileEKS(t time.Time) bool {
	changed := false
	for name, c := range s.St.EKS.Clusters {
		name, c := name, c
		switch c.Status {
		case "CREATING", "ACTIVE", "UPDATING":
			if !c.Backend || !s.ensured(name) {
				s.spawnEnsure(name, c)
			}
			if c.Status == "CREATING" && c.Backend && c.NodesSynced >= c.NodesWant && !t.Before(c.Due) {
				c.Status = "ACTIVE"
				s.Log.Infof("emulator: EKS cluster %s ACTIVE (endpoint %s)", name, c.Endpoint)
				changed = true
			}
		case "DELETING":
			if !t.Before(c.Due) {
				s.Spawn("cluster/"+name, func(ctx context.Context) func() {
					err := s.clusters.Delete(ctx, name)
					return func() {
						if err != nil {
							s.Log.Warnf("emulator: delete the control plane of EKS cluster %s: %v (retrying)", name, err)
							c.Due = time.Now().Add(5 * time.Second)
							return
						}
						s.deleteSecurityGroup(c.SecurityGroup)
						delete(s.St.EKS.Clusters, name)
						s.Log.Infof("emulator: EKS cluster %s deleted", name)
					}
				})
			}
			continue
		}
		if c.Backend && c.NodesWant != c.NodesSynced {
			s.spawnNodeSync(name, c)
		}
		for ngName, ng := range c.NodeGroups {
			if t.Before(ng.Due) || c.NodesSynced < ng.Gen {
				continue
			}
			switch ng.Status {
			case "CREATING":
				ng.Status, ng.ModifiedAt = "ACTIVE", now()
				s.Log.Infof("emulator: EKS node group %s/%s ACTIVE", name, ngName)
				changed = true
			case "DELETING":
				delete(c.NodeGroups, ngName)
				s.Log.Infof("emulator: EKS node group %s/%s deleted", name, ngName)
				changed = true
			}
		}
		for aName, a := range c.Addons {
			if t.Before(a.Due) {
				continue
			}
			switch a.Status {
			case "CREATING":
				a.Status, a.ModifiedAt = "ACTIVE", now()
				changed = true
			case "DELETING":
				delete(c.Addons, aName)
				changed = true
			}
		}
		for _, u := range c.Updates {
			if u.Status != "InProgress" || t.Before(u.Due) {
				continue
			}
			if ng := c.NodeGroups[u.Nodegroup]; u.Nodegroup != "" && ng != nil && c.NodesSynced < ng.Gen {
				continue
			}
			s.finishUpdate(c, u)
			changed = true
		}
	}
	return changed
}

// ensured reports whether this run of the emulator has checked that the control plane of name runs.
func (s *Server) ensured(name string) bool { return s.Jobs["ensured/"+name] }

// spawnEnsure creates (or starts) the control plane of c in the background.
func (s *Server) spawnEnsure(name string, c *eksCluster) {
	cp := ControlPlane{Name: name, Version: c.Version, TokenWebhook: s.Base + "/_nuv/" + tokenReviewPath + name}
	s.Spawn("cluster/"+name, func(ctx context.Context) func() {
		ep, err := s.clusters.Ensure(ctx, cp)
		return func() {
			if s.St.EKS.Clusters[name] != c {
				return // deleted meanwhile
			}
			if err != nil {
				s.Log.Warnf("emulator: control plane of EKS cluster %s: %v", name, err)
				s.Jobs["ensured/"+name] = true // no retry loop; the next start of the emulator tries again
				if c.Status == "CREATING" {
					c.Status = "FAILED"
					c.Issues = []eksIssue{{Code: "InternalFailure", Message: fmt.Sprintf("the control plane could not be started: %v", err)}}
				}
				return
			}
			if !c.Backend && c.Status == "CREATING" {
				c.NodesWant++ // a new control plane gets the cluster's node groups (none yet) before ACTIVE
			}
			if c.Webhook == "" {
				c.Webhook = cp.TokenWebhook // an existing control plane keeps its first one
			}
			c.Backend = true
			c.Endpoint = ep.URL
			c.CAData = base64.StdEncoding.EncodeToString(ep.CA)
			s.Jobs["ensured/"+name] = true
		}
	})
}

// spawnNodeSync brings the nodes of c in line with its node groups in the background.
func (s *Server) spawnNodeSync(name string, c *eksCluster) {
	want := c.NodesWant
	var groups []NodeGroup
	for _, ngName := range sortedKeys(c.NodeGroups) {
		ng := c.NodeGroups[ngName]
		if ng.Status == "DELETING" {
			continue
		}
		groups = append(groups, s.nodeGroupOf(c, ng))
	}
	s.Spawn("nodes/"+name, func(ctx context.Context) func() {
		err := s.clusters.SetNodeGroups(ctx, name, groups)
		return func() {
			if err != nil {
				s.Log.Warnf("emulator: nodes of EKS cluster %s: %v", name, err)
				for _, ng := range c.NodeGroups {
					if ng.Gen > c.NodesSynced {
						ng.Issues = []eksIssue{{Code: "InternalFailure", Message: err.Error(), ResourceIDs: []string{ng.AutoScalingGroup}}}
						ng.Due = time.Now().Add(5 * time.Second)
					}
				}
				return
			}
			if want > c.NodesSynced {
				c.NodesSynced = want
			}
			for _, ng := range c.NodeGroups {
				ng.Issues = nil
			}
		}
	})
}

// nodeGroupOf is the nodes a node group stands for: EKS's labels, its own labels and taints.
func (s *Server) nodeGroupOf(c *eksCluster, ng *eksNodegroup) NodeGroup {
	w := ng
	labels := map[string]string{
		"eks.amazonaws.com/nodegroup":              w.Name,
		"eks.amazonaws.com/nodegroup-image":        "ami-0" + stableHex(w.ARN+"ami", 16),
		"eks.amazonaws.com/capacityType":           w.CapacityType,
		"eks.amazonaws.com/sourceLaunchTemplateId": "lt-0" + stableHex(w.ARN+"lt", 16),
		"node.kubernetes.io/instance-type":         w.InstanceTypes[0],
		"topology.kubernetes.io/region":            s.St.Region,
	}
	zone := ""
	if len(w.Subnets) > 0 {
		if sn := s.St.EC2.Subnets[w.Subnets[0]]; sn != nil {
			zone = sn.AvailabilityZone
			labels["topology.kubernetes.io/zone"] = zone
		}
	}
	for k, v := range w.Labels {
		labels[k] = v
	}
	// Not an EKS label: it says the node was made by this emulator (reports show "emulated by aws";
	// type detection ignores it), and it is set last so a node group's own labels cannot hide it.
	labels[kube.LabelEmulated] = "aws"
	var taints []Taint
	for _, t := range w.Taints {
		taints = append(taints, Taint{Key: t.Key, Value: t.Value, Effect: taintEffects.Get()[t.Effect]})
	}
	sort.Slice(taints, func(i, j int) bool { return taints[i].Key < taints[j].Key })
	return NodeGroup{Name: w.Name, Count: w.Scaling.Desired, Labels: labels, Taints: taints, Zone: zone}
}

package aws

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// releaseVersion is the AMI release version of a node group at Kubernetes version v.
func releaseVersion(v string) string {
	return fmt.Sprintf("%s.%d-20261115", v, 3+minorOf(v)%5)
}

// createNodegroupWire is the body of CreateNodegroup.
type createNodegroupWire struct {
	NodegroupName  string            `json:"nodegroupName"`
	ScalingConfig  *scalingWire      `json:"scalingConfig"`
	DiskSize       int               `json:"diskSize"`
	Subnets        []string          `json:"subnets"`
	InstanceTypes  []string          `json:"instanceTypes"`
	AmiType        string            `json:"amiType"`
	NodeRole       string            `json:"nodeRole"`
	Labels         map[string]string `json:"labels"`
	Taints         []taintWire       `json:"taints"`
	Tags           map[string]string `json:"tags"`
	CapacityType   string            `json:"capacityType"`
	Version        string            `json:"version"`
	ReleaseVersion string            `json:"releaseVersion"`
	UpdateConfig   map[string]int    `json:"updateConfig"`
}

// eksCreateNodegroup answers CreateNodegroup: the group is checked, completed with EKS's defaults
// and recorded CREATING.
func (s *Server) eksCreateNodegroup(r *eksRequest) (any, error) {
	c, err := s.activeCluster(r.segs[1])
	if err != nil {
		return nil, err
	}
	var in createNodegroupWire
	if err := r.decode(&in); err != nil {
		return nil, err
	}
	name := c.Name
	inval := func(f string, a ...any) error {
		return errf(400, "InvalidParameterException", f, a...).with("clusterName", name).with("nodegroupName", in.NodegroupName)
	}
	if err := s.checkNewNodegroup(c, &in, inval); err != nil {
		return nil, err
	}
	sc, err := in.settle(c, inval)
	if err != nil {
		return nil, err
	}
	id := uuid()
	ng := &eksNodegroup{Name: in.NodegroupName, ARN: s.eksARN("nodegroup", name+"/"+in.NodegroupName+"/"+id),
		Cluster: name, Version: in.Version, ReleaseVersion: in.ReleaseVersion, CreatedAt: now(), ModifiedAt: now(),
		Status: "CREATING", CapacityType: in.CapacityType, Scaling: scalingOf(sc), InstanceTypes: in.InstanceTypes,
		Subnets: in.Subnets, AmiType: in.AmiType, NodeRole: in.NodeRole, Labels: in.Labels, Taints: taintsOf(in.Taints),
		AutoScalingGroup: "eks-" + in.NodegroupName + "-" + id,
		DiskSize:         in.DiskSize, UpdateConfig: in.UpdateConfig, Tags: in.Tags, Due: s.due()}
	c.NodesWant++
	ng.Gen = c.NodesWant
	c.NodeGroups[in.NodegroupName] = ng
	s.Log.Infof("emulator: EKS node group %s/%s CREATING (%d node(s))", name, in.NodegroupName, *sc.DesiredSize)
	return map[string]any{"nodegroup": ng.wire()}, nil
}

// checkNewNodegroup checks a new node group of cluster c: a valid name not yet taken, a node role
// EC2 may assume, and subnets in the cluster's VPC.
func (s *Server) checkNewNodegroup(c *eksCluster, in *createNodegroupWire, inval func(string, ...any) error) error {
	name := c.Name
	if in.NodegroupName == "" || len(in.NodegroupName) > 63 || !eksNameRE.MatchString(in.NodegroupName) {
		return inval("The nodegroup name %q is invalid: letters, digits, '-' and '_', at most 63 characters", in.NodegroupName)
	}
	if c.NodeGroups[in.NodegroupName] != nil {
		return errf(409, "ResourceInUseException", "NodeGroup already exists with name %s and cluster name %s", in.NodegroupName, name).with("clusterName", name).with("nodegroupName", in.NodegroupName)
	}
	if err := s.checkRole(in.NodeRole, "ec2.amazonaws.com", "nodeRole"); err != nil {
		return err
	}
	vpc, err := s.checkSubnets(in.Subnets, false)
	if err != nil {
		return err
	}
	if vpc != c.VPC.VpcID {
		return inval("Subnets of a node group must be in the cluster's VPC %s", c.VPC.VpcID)
	}
	return nil
}

// settle checks the new node group's scaling, instance types, capacity type, taints and version
// (one of cluster c's, or up to three minors older), fills in EKS's defaults for what is not
// given, and returns the scaling.
func (in *createNodegroupWire) settle(c *eksCluster, inval func(string, ...any) error) (scalingWire, error) {
	var err error
	sc := scalingWire{MinSize: intp(1), MaxSize: intp(2), DesiredSize: intp(2)}
	if in.ScalingConfig != nil {
		if sc, err = mergeScaling(sc, *in.ScalingConfig); err != nil {
			return sc, inval("%v", err)
		}
	}
	if len(in.InstanceTypes) == 0 {
		in.InstanceTypes = []string{"t3.medium"}
	}
	for _, t := range in.InstanceTypes {
		if _, _, _, ok := lookupInstanceType(t); !ok {
			return sc, inval("Instance type %q is not a valid EC2 instance type", t)
		}
	}
	switch in.CapacityType {
	case "":
		in.CapacityType = "ON_DEMAND"
	case "ON_DEMAND", "SPOT", "CAPACITY_BLOCK":
	default:
		return sc, inval("capacityType %q: valid values are ON_DEMAND, SPOT, CAPACITY_BLOCK", in.CapacityType)
	}
	if in.AmiType == "" {
		in.AmiType = "AL2023_x86_64_STANDARD"
	}
	if in.DiskSize == 0 {
		in.DiskSize = 20
	}
	for _, t := range in.Taints {
		if _, ok := taintEffects.Get()[t.Effect]; !ok || t.Key == "" {
			return sc, inval("taint %q: effect %q is not one of NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE", t.Key, t.Effect)
		}
	}
	if in.Version == "" {
		in.Version = c.Version
	} else if in.Version != c.Version && !(minorOf(in.Version) < minorOf(c.Version) && minorOf(c.Version)-minorOf(in.Version) <= 3 && supportedVersion(in.Version)) {
		return sc, inval("Requested Nodegroup Kubernetes version %s is not compatible with the cluster version %s", in.Version, c.Version)
	}
	if in.ReleaseVersion == "" {
		in.ReleaseVersion = releaseVersion(in.Version)
	}
	if in.Tags == nil {
		in.Tags = map[string]string{}
	}
	if in.UpdateConfig == nil {
		in.UpdateConfig = map[string]int{"maxUnavailable": 1}
	}
	return sc, nil
}

var taintEffects = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}
}}

// mergeScaling applies a scaling request and checks min <= desired <= max.
func mergeScaling(cur, req scalingWire) (scalingWire, error) {
	if req.MinSize != nil {
		cur.MinSize = req.MinSize
	}
	if req.MaxSize != nil {
		cur.MaxSize = req.MaxSize
	}
	if req.DesiredSize != nil {
		cur.DesiredSize = req.DesiredSize
	}
	mn, mx, d := *cur.MinSize, *cur.MaxSize, *cur.DesiredSize
	switch {
	case mn < 0 || d < 0:
		return cur, fmt.Errorf("minSize and desiredSize cannot be negative")
	case mx < 1:
		return cur, fmt.Errorf("maxSize %d must be at least 1", mx)
	case mn > mx:
		return cur, fmt.Errorf("Minimum capacity %d can't be greater than maximum capacity %d", mn, mx)
	case d > mx:
		return cur, fmt.Errorf("Desired capacity %d can't be greater than maximum capacity %d", d, mx)
	case d < mn:
		return cur, fmt.Errorf("Minimum capacity %d can't be greater than desired size %d", mn, d)
	case mx > 100:
		return cur, fmt.Errorf("maxSize %d: the emulator runs at most 100 nodes per node group", mx)
	}
	return cur, nil
}

func (s *Server) nodegroup(r *eksRequest) (*eksCluster, *eksNodegroup, error) {
	c, err := s.cluster(r.segs[1])
	if err != nil {
		return nil, nil, err
	}
	ng := c.NodeGroups[r.segs[3]]
	if ng == nil {
		return nil, nil, errf(404, "ResourceNotFoundException", "No node group found for name: %s.", r.segs[3]).with("clusterName", c.Name).with("nodegroupName", r.segs[3])
	}
	return c, ng, nil
}

func (s *Server) eksListNodegroups(r *eksRequest) (any, error) {
	c, err := s.cluster(r.segs[1])
	if err != nil {
		return nil, err
	}
	return r.page(sortedKeys(c.NodeGroups), "nodegroups")
}

func (s *Server) eksDescribeNodegroup(r *eksRequest) (any, error) {
	_, ng, err := s.nodegroup(r)
	if err != nil {
		return nil, err
	}
	return map[string]any{"nodegroup": ng.wire()}, nil
}

func (s *Server) eksDeleteNodegroup(r *eksRequest) (any, error) {
	c, ng, err := s.nodegroup(r)
	if err != nil {
		return nil, err
	}
	switch ng.Status {
	case "DELETING":
		return map[string]any{"nodegroup": ng.wire()}, nil
	case "CREATING", "UPDATING":
		return nil, errf(409, "ResourceInUseException", "Nodegroup %s is currently in %s status and cannot be deleted", ng.Name, ng.Status).with("clusterName", c.Name).with("nodegroupName", ng.Name)
	}
	ng.Status, ng.ModifiedAt = "DELETING", now()
	c.NodesWant++
	ng.Gen, ng.Due = c.NodesWant, s.due()
	s.Log.Infof("emulator: EKS node group %s/%s DELETING", c.Name, ng.Name)
	return map[string]any{"nodegroup": ng.wire()}, nil
}

func (s *Server) nodegroupUpdatable(c *eksCluster, ng *eksNodegroup) error {
	if ng.Status != "ACTIVE" || c.inProgress(ng.Name, "") != nil {
		return errf(409, "ResourceInUseException", "Nodegroup %s is in %s status; it can be updated only when ACTIVE", ng.Name, ng.Status).with("clusterName", c.Name).with("nodegroupName", ng.Name)
	}
	return nil
}

// updateNodegroupConfigWire is the body of UpdateNodegroupConfig.
type updateNodegroupConfigWire struct {
	Labels        *labelsUpdateWire `json:"labels"`
	Taints        *taintsUpdateWire `json:"taints"`
	ScalingConfig *scalingWire      `json:"scalingConfig"`
	UpdateConfig  map[string]int    `json:"updateConfig"`
}

// labelsUpdateWire is the labels to add or change and to remove in UpdateNodegroupConfig.
type labelsUpdateWire struct {
	AddOrUpdateLabels map[string]string `json:"addOrUpdateLabels"`
	RemoveLabels      []string          `json:"removeLabels"`
}

// taintsUpdateWire is the taints to add or change and to remove in UpdateNodegroupConfig.
type taintsUpdateWire struct {
	AddOrUpdateTaints []taintWire `json:"addOrUpdateTaints"`
	RemoveTaints      []taintWire `json:"removeTaints"`
}

// eksUpdateNodegroupConfig answers UpdateNodegroupConfig: the scaling, labels, taints and update
// settings given are applied to the group, recorded UPDATING, once the whole request is valid.
func (s *Server) eksUpdateNodegroupConfig(r *eksRequest) (any, error) {
	c, ng, err := s.nodegroup(r)
	if err != nil {
		return nil, err
	}
	if err := s.nodegroupUpdatable(c, ng); err != nil {
		return nil, err
	}
	var in updateNodegroupConfigWire
	if err := r.decode(&in); err != nil {
		return nil, err
	}
	inval := func(f string, a ...any) error {
		return errf(400, "InvalidParameterException", f, a...).with("clusterName", c.Name).with("nodegroupName", ng.Name)
	}
	w := *ng // the group as the update leaves it, kept once the request is valid
	var p []eksParam
	if in.ScalingConfig != nil {
		sp, err := updateScaling(&w, in.ScalingConfig)
		if err != nil {
			return nil, inval("%v", err)
		}
		p = append(p, sp...)
	}
	if l := in.Labels; l != nil {
		p = append(p, updateLabels(&w, l)...)
	}
	if t := in.Taints; t != nil {
		tp, err := updateTaints(&w, t, inval)
		if err != nil {
			return nil, err
		}
		p = append(p, tp...)
	}
	if in.UpdateConfig != nil {
		w.UpdateConfig = in.UpdateConfig
		b, _ := json.Marshal(in.UpdateConfig)
		p = append(p, eksParam{"UpdateConfig", string(b)})
	}
	if len(p) == 0 {
		return nil, inval("No changes needed: give scalingConfig, labels, taints or updateConfig")
	}
	w.Status, w.ModifiedAt = "UPDATING", now()
	*ng = w
	c.NodesWant++
	ng.Gen = c.NodesWant
	u := s.newUpdate(c, "ConfigUpdate", p, r.body, ng.Name, "")
	ng.Due = u.Due
	s.Log.Infof("emulator: EKS node group %s/%s UPDATING (%d node(s))", c.Name, ng.Name, w.Scaling.Desired)
	return map[string]any{"update": u.wire()}, nil
}

// updateScaling applies a scaling request to node group w and returns the update's parameters:
// the sizes given.
func updateScaling(w *eksNodegroup, req *scalingWire) ([]eksParam, error) {
	sc, err := mergeScaling(scalingWireOf(w.Scaling), *req)
	if err != nil {
		return nil, err
	}
	w.Scaling = scalingOf(sc)
	var p []eksParam
	if v := req.MinSize; v != nil {
		p = append(p, eksParam{"MinSize", strconv.Itoa(*v)})
	}
	if v := req.MaxSize; v != nil {
		p = append(p, eksParam{"MaxSize", strconv.Itoa(*v)})
	}
	if v := req.DesiredSize; v != nil {
		p = append(p, eksParam{"DesiredSize", strconv.Itoa(*v)})
	}
	return p, nil
}

// updateLabels adds, changes and removes node group w's labels and returns the update's
// parameters: the labels added and removed.
func updateLabels(w *eksNodegroup, l *labelsUpdateWire) []eksParam {
	labels := map[string]string{}
	for k, v := range w.Labels {
		labels[k] = v
	}
	for k, v := range l.AddOrUpdateLabels {
		labels[k] = v
	}
	for _, k := range l.RemoveLabels {
		delete(labels, k)
	}
	w.Labels = labels
	var p []eksParam
	if len(l.AddOrUpdateLabels) > 0 {
		b, _ := json.Marshal(l.AddOrUpdateLabels)
		p = append(p, eksParam{"LabelsToAdd", string(b)})
	}
	if len(l.RemoveLabels) > 0 {
		b, _ := json.Marshal(l.RemoveLabels)
		p = append(p, eksParam{"LabelsToRemove", string(b)})
	}
	return p
}

// updateTaints adds, changes and removes node group w's taints (kept sorted by key and effect),
// refusing an unknown effect, and returns the update's parameter: the request's taints.
func updateTaints(w *eksNodegroup, t *taintsUpdateWire, inval func(string, ...any) error) ([]eksParam, error) {
	byKey := map[string]eksTaint{}
	for _, x := range w.Taints {
		byKey[x.Key+"/"+x.Effect] = x
	}
	for _, x := range t.AddOrUpdateTaints {
		if _, ok := taintEffects.Get()[x.Effect]; !ok || x.Key == "" {
			return nil, inval("taint %q: effect %q is not one of NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE", x.Key, x.Effect)
		}
		byKey[x.Key+"/"+x.Effect] = eksTaint(x)
	}
	for _, x := range t.RemoveTaints {
		delete(byKey, x.Key+"/"+x.Effect)
	}
	w.Taints = nil
	for _, k := range sortedKeys(byKey) {
		w.Taints = append(w.Taints, byKey[k])
	}
	b, _ := json.Marshal(t)
	return []eksParam{{"TaintsToAdd", string(b)}}, nil
}

func (s *Server) eksUpdateNodegroupVersion(r *eksRequest) (any, error) {
	c, ng, err := s.nodegroup(r)
	if err != nil {
		return nil, err
	}
	if err := s.nodegroupUpdatable(c, ng); err != nil {
		return nil, err
	}
	var in struct {
		Version        string `json:"version"`
		ReleaseVersion string `json:"releaseVersion"`
	}
	if err := r.decode(&in); err != nil {
		return nil, err
	}
	if in.Version == "" {
		in.Version = c.Version
	}
	if minorOf(in.Version) > minorOf(c.Version) || !supportedVersion(in.Version) {
		return nil, errf(400, "InvalidParameterException", "Requested Nodegroup Kubernetes version %s is not compatible with the cluster version %s", in.Version, c.Version).with("clusterName", c.Name).with("nodegroupName", ng.Name)
	}
	rel := in.ReleaseVersion
	if rel == "" {
		rel = releaseVersion(in.Version)
	}
	ng.Status, ng.ModifiedAt = "UPDATING", now()
	u := s.newUpdate(c, "VersionUpdate", []eksParam{{"Version", in.Version}, {"ReleaseVersion", rel}}, r.body, ng.Name, "")
	ng.Due = u.Due
	return map[string]any{"update": u.wire()}, nil
}

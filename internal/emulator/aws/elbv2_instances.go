package aws

// What Elastic Load Balancing needs of EC2 instances: instance targets resolve to the instance's
// private address, and balancers take their addresses where no instance has one. This is the one
// place that reads EC2's instances for it.

// elbInstance is an EC2 instance as a target sees it.
type elbInstance struct {
	VpcID, SubnetID string
	// PrivateIP is the instance's private IPv4 address in its subnet.
	PrivateIP string
	// State is the instance's state name (pending, running, stopping, stopped, ...).
	State string
}

// ec2InstanceTarget looks up instance id for an instance target (s.Mu held); false when EC2 has
// no such instance or it is terminated (an instance target AWS refuses with InvalidTarget).
func (s *Server) ec2InstanceTarget(id string) (elbInstance, bool) {
	in := s.instances()[id]
	if in == nil || !in.live() {
		return elbInstance{}, false
	}
	return elbInstance{VpcID: in.VpcID, SubnetID: in.SubnetID, PrivateIP: in.PrivateIP, State: in.State}, true
}

// ec2PrivateAddresses are the private addresses EC2 instances hold (s.Mu held).
func (s *Server) ec2PrivateAddresses() []string {
	var out []string
	for _, in := range s.instances() {
		if in.live() {
			out = append(out, in.PrivateIP)
		}
	}
	return out
}

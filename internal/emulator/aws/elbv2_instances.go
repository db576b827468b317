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
// no such instance. The emulator's EC2 does not run instances yet, so no id is found: instance
// targets are refused with InvalidTarget, as AWS refuses an unknown instance.
func (s *Server) ec2InstanceTarget(id string) (elbInstance, bool) {
	return elbInstance{}, false
}

// ec2PrivateAddresses are the private addresses EC2 instances hold (s.Mu held).
func (s *Server) ec2PrivateAddresses() []string { return nil }

package aws

import (
	"context"
	"errors"
	"time"
)

// ErrNoMachine is wrapped by the errors of Start and Stop about a machine that does not exist
// (removed behind the emulator's back): its instance is then terminated.
var ErrNoMachine = errors.New("the machine does not exist")

// Machines runs the machines behind the emulator's EC2 instances, and the network of each subnet
// they sit on. The emulator calls it from its background jobs, never while it holds its lock, so
// a method may take as long as a machine takes to boot. ContainerMachines is the real one: each
// machine a privileged systemd container of nuv's node image on the project's Docker daemon.
type Machines interface {
	// Image is the machine image instances boot from; resolving it may build or load it (seconds
	// when it is cached).
	Image(ctx context.Context) (MachineImage, error)
	// Create makes machine m on the network of its subnet (created with the subnet's CIDR when m
	// is the first machine there), boots it and returns once it is up and its user data ran. A
	// machine of that ID that exists already is started if needed and waited for, so a launch
	// interrupted by a restart of the emulator can run again.
	Create(ctx context.Context, m MachineSpec) error
	// Start boots a stopped machine and returns once it is up.
	Start(ctx context.Context, id string) error
	// Stop shuts a machine down; its disk and address stay.
	Stop(ctx context.Context, id string) error
	// Remove removes a machine and its disk; a machine that does not exist is no error.
	Remove(ctx context.Context, id string) error
	// List reports the emulator's machines by instance ID (the ones that exist).
	List(ctx context.Context) (map[string]MachineStatus, error)
	// RemoveNetwork removes the network of subnet; one that does not exist is no error.
	RemoveNetwork(ctx context.Context, subnet string) error
	// SetRoutes makes the routes of the traffic leaving each subnet's network (through the VPC's
	// router) exactly routes[subnet]: the routes of its route table to instances that take them
	// (podroute.go). A network whose subnet is not in routes has none.
	SetRoutes(ctx context.Context, routes map[string][]InstanceRoute) error
}

// MachineImage is the image machines boot from, which DescribeImages shows as an AMI.
type MachineImage struct {
	// Ref is the container image (nuv.dev/kind-node:v<version>-<key>).
	Ref string
	// KubernetesVersion is the version of the Kubernetes binaries it carries (1.36.3).
	KubernetesVersion string
	// Created is when the image was made.
	Created time.Time
	// Architecture is the EC2 architecture (x86_64 or arm64).
	Architecture string
}

// MachineSpec is one machine to make: an EC2 instance's container.
type MachineSpec struct {
	// ID is the instance ID (i-0123456789abcdef0).
	ID string
	// Image is MachineImage.Ref.
	Image string
	// Subnet is the subnet ID, CIDR its block: the machine's network and where IP comes from.
	Subnet, CIDR string
	// VPC is the subnet's VPC and VPCCIDR its block (the networks of a VPC's subnets are linked).
	VPC, VPCCIDR string
	// IP is the machine's private address (in CIDR).
	IP string
	// Hostname is the machine's host name (ip-10-0-1-5, as EC2 names its instances).
	Hostname string
	// AuthorizedKeys are the OpenSSH public keys root may log in with (the instance's key pair).
	AuthorizedKeys []string
	// UserData is the instance's user data, decoded; it runs once, as cloud-init runs it.
	UserData []byte
	// Tags are the instance's tags at launch (the backend may label the machine with them).
	Tags map[string]string
}

// MachineStatus is what List reports of a machine.
type MachineStatus struct {
	// Running says the machine is up (false: it exists but is stopped).
	Running bool
}

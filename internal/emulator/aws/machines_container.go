package aws

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/nodeimage"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/machine/container"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

// Labels on the emulator's machines and networks.
const (
	// LabelEmulator marks what an AWS emulator made (value "aws").
	LabelEmulator = "nuv.dev/emulator"
	// LabelAccount is the emulator's account: emulators sharing a Docker daemon leave each
	// other's machines alone.
	LabelAccount = "nuv.dev/aws-account"
	// LabelInstance is the instance ID of a machine; LabelSubnet the subnet of a network.
	LabelInstance = "nuv.dev/ec2-instance"
	LabelSubnet   = "nuv.dev/ec2-subnet"
)

// ContainerMachines runs each EC2 instance as a privileged systemd container of nuv's node image
// on the project's container runtime (package machine/container, the runtime kind clusters use):
// the container is named after the instance ID and labelled nuv.dev/emulator=aws, its instance
// and the emulator's account; it sits on the network nuv-ec2-<subnet ID>, made with the subnet's
// CIDR when the subnet's first machine is made, so its address is the instance's private IP. The
// user data runs once after boot as cloud-init runs it; the key pair's public key is added to
// root's authorized_keys. Nothing is done until an instance is launched.
type ContainerMachines struct {
	// Account is the emulator's account (LabelAccount).
	Account string
	Log     cli.Logger
	// Getenv reads DOCKER_HOST, PATH and what the node-image build reads (nil: the process's).
	Getenv func(string) string

	mu  sync.Mutex
	mgr *container.Manager
	rt  containerrt.Runtime
}

// NewContainerMachines runs the machines of the emulator of account on the container runtime.
func NewContainerMachines(account string, log cli.Logger) *ContainerMachines {
	if log == nil {
		log = cli.Quiet()
	}
	return &ContainerMachines{Account: account, Log: log, Getenv: os.Getenv}
}

var _ Machines = (*ContainerMachines)(nil)

// manager finds the container runtime the first time it is needed.
func (c *ContainerMachines) manager(ctx context.Context) (*container.Manager, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mgr != nil {
		return c.mgr, nil
	}
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	rt, err := containerrt.Detect(ctx, getenv)
	if err != nil {
		return nil, fmt.Errorf("EC2 instances are containers: %w", err)
	}
	mgr, err := container.New(container.Runtime{Name: rt.Name, Path: rt.Path}, c.Log)
	if err != nil {
		return nil, err
	}
	c.mgr, c.rt = mgr, rt
	// re-adoption: a restarted emulator makes the VPCs' routing again
	if err := LinkVPCs(ctx, mgr, c.Account); err != nil {
		c.Log.Warnf("emulator: %v", err)
	}
	return mgr, nil
}

// networkName is the machine network of subnet.
func networkName(subnet string) string { return "nuv-ec2-" + subnet }

func (c *ContainerMachines) labels() map[string]string {
	return map[string]string{LabelEmulator: "aws", LabelAccount: c.Account}
}

// Image makes sure nuv's node image is in the runtime (building it from the cache if needed).
// Each step's time is logged: a client that gave up waiting for DescribeImages or RunInstances
// sees only its own timeout, the emulator's log says which step took it.
func (c *ContainerMachines) Image(ctx context.Context) (MachineImage, error) {
	start := time.Now()
	if _, err := c.manager(ctx); err != nil {
		return MachineImage{}, err
	}
	found := time.Since(start)
	ref, err := nodeimage.Ensure(ctx, nodeimage.Options{Log: c.Log, Getenv: c.Getenv, Runtime: c.rt.Path})
	if err != nil {
		return MachineImage{}, fmt.Errorf("the machine image (after %s): %w", time.Since(start).Round(time.Millisecond), err)
	}
	defer func() {
		c.Log.Infof("emulator: machine image %s resolved in %s (container runtime %s found in %s)", ref,
			time.Since(start).Round(time.Millisecond), c.rt.Name, found.Round(time.Millisecond))
	}()
	img := MachineImage{Ref: ref, KubernetesVersion: companion.KubeVersion, Architecture: ec2Arch(runtime.GOARCH)}
	// nuv assembles the image without a creation time (zero): the emulator then dates the AMI.
	out, err := exec.CommandContext(ctx, c.rt.Path, "image", "inspect", "--format", "{{.Created}}", ref).Output()
	if err != nil {
		return MachineImage{}, fmt.Errorf("inspect the node image %s: %w", ref, err)
	}
	if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(out))); err == nil && t.Year() > 2000 {
		img.Created = t
	}
	return img, nil
}

// ec2Arch is EC2's name of a Go architecture.
func ec2Arch(goarch string) string {
	if goarch == "amd64" {
		return "x86_64"
	}
	return goarch
}

// Create makes and boots the machine of m (see Machines).
func (c *ContainerMachines) Create(ctx context.Context, m MachineSpec) error {
	mgr, err := c.manager(ctx)
	if err != nil {
		return err
	}
	info, err := mgr.Inspect(ctx, m.ID)
	switch {
	case err == nil && info.Labels[LabelInstance] == m.ID:
		// made by a launch the emulator did not see finish: boot it (user data runs once)
		if err := mgr.Start(ctx, m.ID); err != nil && !isUserDataError(err, c.Log) {
			return err
		}
	case err == nil:
		return fmt.Errorf("a container named %s exists and is not the machine of instance %s", m.ID, m.ID)
	case errors.Is(err, container.ErrNotFound):
		netLabels := subnetNetworkLabels(c.Account, m.Subnet, m.VPC, m.VPCCIDR)
		if err := mgr.EnsureNetwork(ctx, networkName(m.Subnet), m.CIDR, netLabels); err != nil {
			return fmt.Errorf("the network of subnet %s (%s): %w", m.Subnet, m.CIDR, err)
		}
		if err := LinkVPC(ctx, mgr, c.Account, m.VPC); err != nil {
			return err
		}
		labels := c.labels()
		labels[LabelInstance] = m.ID
		if name := m.Tags["Name"]; name != "" && !strings.ContainsAny(name, "\n") {
			labels["nuv.dev/ec2-name"] = name
		}
		var ud []byte
		if len(m.UserData) > 0 {
			ud = m.UserData
		}
		info, err = mgr.Run(ctx, container.Spec{Name: m.ID, Image: m.Image, Network: networkName(m.Subnet), IP: m.IP,
			Hostname: m.Hostname, Labels: labels, UserData: ud})
		if err != nil && !isUserDataError(err, c.Log) {
			return err
		}
	default:
		return err
	}
	if info.Name == "" {
		if info, err = mgr.Inspect(ctx, m.ID); err != nil {
			return err
		}
	}
	if err := markEmulated(ctx, mgr, info); err != nil {
		return err
	}
	if len(m.AuthorizedKeys) == 0 {
		return nil
	}
	return addAuthorizedKeys(ctx, mgr, info, m.AuthorizedKeys)
}

// EmulatorMark is the file in which each machine says whose machine it is: "aws", this emulator's.
// Software on the machine (nuv's bootstrap, which labels the nodes nuv.dev/emulated=aws) reads it
// to tell an emulated instance from a real EC2 one, which has no such file.
const EmulatorMark = "/etc/nuv/emulator"

// markEmulated writes EmulatorMark into the machine.
func markEmulated(ctx context.Context, mgr *container.Manager, info container.Info) error {
	if _, err := mgr.Machine(info).Run(ctx, "mkdir -p /etc/nuv; echo aws > "+EmulatorMark, nil); err != nil {
		return fmt.Errorf("mark machine %s as the emulator's: %w", info.Name, err)
	}
	return nil
}

// isUserDataError says (and logs) whether err is user data that failed: the machine stays up,
// as an EC2 instance whose user data failed stays running.
func isUserDataError(err error, log cli.Logger) bool {
	var ue *container.UserDataError
	if errors.As(err, &ue) {
		log.Warnf("emulator: EC2 instance %s: %v", ue.Machine, err)
		return true
	}
	return false
}

// addAuthorizedKeys adds keys to root's authorized_keys (what cloud-init does with the key pair).
func addAuthorizedKeys(ctx context.Context, mgr *container.Manager, info container.Info, keys []string) error {
	const script = `umask 077; mkdir -p /root/.ssh; touch /root/.ssh/authorized_keys
while IFS= read -r k; do [ -n "$k" ] && { grep -qxF "$k" /root/.ssh/authorized_keys || printf '%s\n' "$k" >> /root/.ssh/authorized_keys; }; done`
	if _, err := mgr.Machine(info).Run(ctx, script, strings.NewReader(strings.Join(keys, "\n")+"\n")); err != nil {
		return fmt.Errorf("install the key pair in machine %s: %w", info.Name, err)
	}
	return nil
}

// Start boots the stopped machine id.
func (c *ContainerMachines) Start(ctx context.Context, id string) error {
	mgr, err := c.manager(ctx)
	if err != nil {
		return err
	}
	if err := mgr.Start(ctx, id); err != nil && !isUserDataError(err, c.Log) {
		return noMachine(err)
	}
	return nil
}

// noMachine wraps ErrNoMachine into an error about a container that does not exist.
func noMachine(err error) error {
	if errors.Is(err, container.ErrNotFound) {
		return fmt.Errorf("%w: %w", ErrNoMachine, err)
	}
	return err
}

// Stop shuts machine id down.
func (c *ContainerMachines) Stop(ctx context.Context, id string) error {
	mgr, err := c.manager(ctx)
	if err != nil {
		return err
	}
	return noMachine(mgr.Stop(ctx, id))
}

// Remove removes machine id and its disk.
func (c *ContainerMachines) Remove(ctx context.Context, id string) error {
	mgr, err := c.manager(ctx)
	if err != nil {
		return err
	}
	return mgr.Remove(ctx, id)
}

// List reports the emulator's machines (its account's) by instance ID.
func (c *ContainerMachines) List(ctx context.Context) (map[string]MachineStatus, error) {
	mgr, err := c.manager(ctx)
	if err != nil {
		return nil, err
	}
	infos, err := mgr.List(ctx, c.labels())
	if errors.Is(err, container.ErrNotFound) {
		// listed while being made or removed (docker ps names it, inspect does not yet or no
		// more): ask again
		time.Sleep(time.Second)
		infos, err = mgr.List(ctx, c.labels())
	}
	if err != nil {
		return nil, err
	}
	out := map[string]MachineStatus{}
	for _, i := range infos {
		if id := i.Labels[LabelInstance]; id != "" {
			out[id] = MachineStatus{Running: i.Running}
		}
	}
	return out, nil
}

// RemoveNetwork removes the network of subnet.
func (c *ContainerMachines) RemoveNetwork(ctx context.Context, subnet string) error {
	mgr, err := c.manager(ctx)
	if err != nil {
		return err
	}
	return removeSubnetNetwork(ctx, mgr, networkName(subnet))
}

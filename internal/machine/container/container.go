// Package container runs machines as privileged systemd containers from nuv's node image, the
// way kind runs its nodes: systemd is PID 1, /tmp and /run are tmpfs, /var is a volume of the
// container's own, and the container has a fixed IPv4 address on a network whose subnet is a
// VPC subnet's CIDR. A machine's user data runs once, the way cloud-init runs it on an EC2
// instance: stored under /var/lib/cloud/instance, run after systemd is up, its output in
// /var/log/cloud-init-output.log, and a boot-finished mark that keeps a restarted machine from
// running it again. The AWS emulator's instances and load balancers, and tests, are such machines.
//
// Only containers and networks this package made (labelled dev.nuv.machine) are listed, stopped
// or removed; the runtime is the one kind clusters use (containerrt.Detect finds it).
//
// The frequent questions (list and inspect containers and networks, and commands run without
// standard input, such as the boot check polled every 300 ms) go to the daemon's Engine API over
// its unix socket (package dockerapi) when the docker CLI would use such a socket: with
// DOCKER_HOST=tcp://, ssh:// or a docker context every request runs the docker CLI, as does what
// changes the daemon's state (run, start, stop, rm, network create and rm) and what needs
// standard input or logs. Both paths give the same Info: they parse the same inspect document.
package container

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/machine"
	"github.com/nuv-dev/nuv/internal/machine/dockerapi"
)

// Labels nuv puts on what this package makes.
const (
	// MachineLabel marks a machine container.
	MachineLabel = "dev.nuv.machine"
	// NetworkLabel marks a machines' network.
	NetworkLabel = "dev.nuv.machine-network"
)

// Paths inside a machine, as cloud-init has them.
const (
	InstanceDir  = "/var/lib/cloud/instance"
	UserDataPath = InstanceDir + "/user-data.txt"
	ScriptPath   = InstanceDir + "/scripts/part-001"
	BootFinished = InstanceDir + "/boot-finished"
	OutputLog    = "/var/log/cloud-init-output.log"
)

// DefaultBootWait is how long Run and Start wait for a machine's systemd by default. A machine
// boots in seconds on a quiet host; on two cores shared by several clusters booting at once its
// systemd took more than two minutes, and an EC2 instance whose machine is given up on fails its
// launch.
const DefaultBootWait = 5 * time.Minute

// ErrNotFound is wrapped by the errors about a machine or network that does not exist.
var ErrNotFound = errors.New("not found")

// Runtime is the container runtime machines run in: containerrt.Detect's Name and Path.
type Runtime struct {
	// Name is docker (the only runtime whose flags this package uses).
	Name string
	// Path is its program; Env its whole environment (nil: nuv's own, with DOCKER_HOST).
	Path string
	Env  []string
}

// Manager makes, lists and removes machine containers and their networks.
type Manager struct {
	rt Runtime
	// api asks the daemon over its socket; nil: every request runs the CLI (see the package doc).
	api *dockerapi.Client
	// Log receives the progress of long waits (every 15 s).
	Log cli.Logger
	// BootWait bounds the wait for systemd in Run and Start (default DefaultBootWait).
	BootWait time.Duration
	// netMu serialises EnsureNetwork: machines launched at once into one subnet all ask for its
	// network, and Docker answers a create racing another with "pool overlaps" before the first
	// network is visible by name.
	netMu sync.Mutex
}

// New returns a Manager on rt; log may be nil.
func New(rt Runtime, log cli.Logger) (*Manager, error) {
	if rt.Name != "docker" {
		return nil, fmt.Errorf("machine containers need docker (its --cgroupns and --ip flags); the container runtime found is %q", rt.Name)
	}
	if rt.Path == "" {
		return nil, errors.New("machine containers: the path of the docker program is required")
	}
	if log == nil {
		log = cli.Quiet()
	}
	m := &Manager{rt: rt, Log: log, BootWait: DefaultBootWait}
	if ep := dockerapi.Resolve(rt.Env, nil); ep.Socket != "" {
		m.api = dockerapi.New(ep.Socket)
	} else {
		log.V(1).Infof("machine containers: every request to the daemon runs %s: %s", rt.Path, ep.Reason)
	}
	return m, nil
}

// Spec is one machine to run.
type Spec struct {
	// Name is the container's name (the instance ID); Image nuv's node image.
	Name, Image string
	// Network is the machines' network (EnsureNetwork made it); IP the machine's address in it.
	Network, IP string
	// Hostname is the machine's hostname (default Name). The runtime sets it at every start, so
	// it should be the one the user data sets, if any.
	Hostname string
	// Labels are put on the container besides MachineLabel.
	Labels map[string]string
	// UserData is run once after boot when it is a script (starts with "#!"); other user data is
	// stored only. Nil: none.
	UserData []byte
}

// Info is what a machine container is now.
type Info struct {
	Name, ID, Image string
	Hostname        string
	Network, IP     string
	Labels          map[string]string
	// State is the runtime's: created, running, paused, restarting, removing, exited, dead.
	State   string
	Running bool
	// Pid is the container's init process on the host (0 when it is not running).
	Pid     int
	Created time.Time
	// Volumes are the container's volumes (its /var); Remove removes them with it.
	Volumes []string
}

// Machine is the machine.Machine of info, reached with the runtime's exec.
func (m *Manager) Machine(info Info) *machine.Exec {
	return &machine.Exec{Runtime: m.rt.Path, Env: m.rt.Env, Container: info.Name, IP: info.IP}
}

// UserDataError is a machine whose user data failed. The machine stays (an EC2 instance whose
// user data failed stays running); its whole output is in OutputLog inside it.
type UserDataError struct {
	Machine  string
	ExitCode int
	// Tail is the end of the user data's output.
	Tail string
}

func (e *UserDataError) Error() string {
	msg := fmt.Sprintf("user data of machine %s exited with code %d (its output: %s inside it)", e.Machine, e.ExitCode, OutputLog)
	if t := strings.TrimSpace(e.Tail); t != "" {
		msg += ":\n" + t
	}
	return msg
}

// docker runs the runtime with args and stdin; it returns stdout, or an error with the end of stderr.
func (m *Manager) docker(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, m.rt.Path, args...)
	cmd.Env = m.rt.Env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return stdout.Bytes(), fmt.Errorf("%s %s: %w", m.rt.Name, args[0], ctx.Err())
		}
		return stdout.Bytes(), newDockerError(args, exitCode(err), stderr.Bytes(), err.Error())
	}
	return stdout.Bytes(), nil
}

// newDockerError is the failure of a docker command args that exited with code: the end of its
// standard error, or fallback when it wrote none.
func newDockerError(args []string, code int, stderr []byte, fallback string) *dockerError {
	msg := strings.TrimSpace(string(stderr))
	if len(msg) > 2048 {
		msg = msg[len(msg)-2048:]
	}
	if msg == "" {
		msg = fallback
	}
	return &dockerError{args: args, code: code, msg: msg}
}

type dockerError struct {
	args []string
	code int
	msg  string
}

func (e *dockerError) Error() string {
	sub := e.args[0]
	if len(e.args) > 1 && (sub == "network" || sub == "volume") {
		sub += " " + e.args[1]
	}
	return fmt.Sprintf("docker %s: %s", sub, e.msg)
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// noSuch says whether err is the runtime's "no such container/network".
func noSuch(err error) bool {
	if dockerapi.IsNotFound(err) {
		return true
	}
	var de *dockerError
	if !errors.As(err, &de) {
		return false
	}
	s := strings.ToLower(de.msg)
	return strings.Contains(s, "no such") || strings.Contains(s, "not found")
}

func labelArgs(labels map[string]string) ([]string, error) {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var args []string
	for _, k := range keys {
		if k == "" || strings.ContainsAny(k, "=\n") || strings.Contains(labels[k], "\n") {
			return nil, fmt.Errorf("label %q=%q: a key must be non-empty without '=' and neither may hold a newline", k, labels[k])
		}
		args = append(args, "--label", k+"="+labels[k])
	}
	return args, nil
}

// EnsureNetwork makes network name with subnet cidr (gateway its first address) and labels, or
// finds it made already with that subnet. A network of that name with another subnet is refused.
func (m *Manager) EnsureNetwork(ctx context.Context, name, cidr string, labels map[string]string) error {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() || p.Masked() != p || p.Bits() > 29 {
		return fmt.Errorf("network %s: subnet %q is not an IPv4 CIDR of a network (e.g. 10.0.1.0/24, at most /29)", name, cidr)
	}
	check := func() (bool, error) {
		subnets, err := m.networkSubnets(ctx, name)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				return false, nil
			}
			return false, err
		}
		for _, s := range subnets {
			if s == p.String() {
				return true, nil
			}
		}
		return true, fmt.Errorf("network %s exists with subnet %s, not %s: remove it or choose another name", name, strings.Join(subnets, ", "), cidr)
	}
	m.netMu.Lock()
	defer m.netMu.Unlock()
	if ok, err := check(); ok || err != nil {
		return err
	}
	all := map[string]string{NetworkLabel: "true"}
	for k, v := range labels {
		all[k] = v
	}
	la, err := labelArgs(all)
	if err != nil {
		return fmt.Errorf("network %s: %w", name, err)
	}
	gw := p.Addr().Next()
	args := append([]string{"network", "create", "--driver", "bridge", "--subnet", p.String(), "--gateway", gw.String()}, la...)
	if _, err := m.docker(ctx, nil, append(args, name)...); err != nil {
		// Made meanwhile by another process: the same subnet is success. Docker reserves the
		// subnet before the network shows by name, so a create that lost the race ("pool
		// overlaps") looks again for a few seconds.
		for deadline := time.Now().Add(5 * time.Second); ; {
			if ok, cerr := check(); ok {
				return cerr
			}
			if !strings.Contains(err.Error(), "overlaps") || time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
		return fmt.Errorf("create network %s (%s): %w", name, cidr, err)
	}
	return nil
}

func (m *Manager) networkSubnets(ctx context.Context, name string) ([]string, error) {
	if m.api != nil {
		n, err := m.inspectNetwork(ctx, name)
		if err != nil {
			return nil, err
		}
		var subnets []string
		for _, c := range n.IPAM.Config {
			if c.Subnet != "" {
				subnets = append(subnets, c.Subnet)
			}
		}
		return subnets, nil
	}
	out, err := m.docker(ctx, nil, "network", "inspect", "--format", "{{range .IPAM.Config}}{{.Subnet}} {{end}}", name)
	if err != nil {
		if noSuch(err) {
			return nil, fmt.Errorf("network %s: %w", name, ErrNotFound)
		}
		return nil, fmt.Errorf("inspect network %s: %w", name, err)
	}
	return strings.Fields(string(out)), nil
}

// inspectNetwork asks the API for network name; a missing one is an error wrapping ErrNotFound.
func (m *Manager) inspectNetwork(ctx context.Context, name string) (dockerapi.Network, error) {
	n, err := m.api.InspectNetwork(ctx, name)
	if err != nil {
		if noSuch(err) {
			return n, fmt.Errorf("network %s: %w", name, ErrNotFound)
		}
		return n, fmt.Errorf("inspect network %s: %w", name, err)
	}
	return n, nil
}

// RemoveNetwork removes network name; one that does not exist is success. A network still used
// by containers is an error naming them.
func (m *Manager) RemoveNetwork(ctx context.Context, name string) error {
	if _, err := m.docker(ctx, nil, "network", "rm", name); err != nil {
		if noSuch(err) {
			return nil
		}
		if u := m.networkUsers(ctx, name); len(u) > 0 {
			return fmt.Errorf("remove network %s: still used by %s", name, strings.Join(u, ", "))
		}
		return fmt.Errorf("remove network %s: %w", name, err)
	}
	return nil
}

// networkUsers names the containers attached to network name (none when that cannot be known).
func (m *Manager) networkUsers(ctx context.Context, name string) []string {
	if m.api != nil {
		cs, _ := m.api.Containers(ctx, dockerapi.Filters{"network": {name}})
		var names []string
		for _, c := range cs {
			names = append(names, c.Name())
		}
		return names
	}
	users, _ := m.docker(ctx, nil, "ps", "-a", "--filter", "network="+name, "--format", "{{.Names}}")
	return strings.Fields(string(users))
}

// execNoStdin runs args in container name without standard input and returns its standard
// output. A command that exits non-zero is a *dockerError with its exit code and the end of its
// standard error, as from the CLI.
func (m *Manager) execNoStdin(ctx context.Context, name string, args ...string) ([]byte, error) {
	if m.api == nil {
		return m.docker(ctx, nil, append([]string{"exec", name}, args...)...)
	}
	res, err := m.api.Exec(ctx, name, args)
	if err != nil {
		return res.Stdout, err
	}
	if res.ExitCode != 0 {
		return res.Stdout, newDockerError(append([]string{"exec", name}, args...), res.ExitCode, res.Stderr, fmt.Sprintf("exit status %d", res.ExitCode))
	}
	return res.Stdout, nil
}

// Run creates and starts machine s, waits until its systemd is up and runs its user data once.
// A machine that does not boot is removed again (nothing half-made is left); a machine whose user
// data failed stays, and the error is a *UserDataError.
func (m *Manager) Run(ctx context.Context, s Spec) (Info, error) {
	if s.Name == "" || s.Image == "" || s.Network == "" {
		return Info{}, fmt.Errorf("run machine %q: name, image and network are required", s.Name)
	}
	ip, err := netip.ParseAddr(s.IP)
	if err != nil || !ip.Is4() {
		return Info{}, fmt.Errorf("run machine %s: address %q is not an IPv4 address", s.Name, s.IP)
	}
	if s.Hostname == "" {
		s.Hostname = s.Name
	}
	all := map[string]string{MachineLabel: "true"}
	for k, v := range s.Labels {
		all[k] = v
	}
	la, err := labelArgs(all)
	if err != nil {
		return Info{}, fmt.Errorf("run machine %s: %w", s.Name, err)
	}
	args := []string{"run", "--detach", "--tty",
		"--name", s.Name, "--hostname", s.Hostname,
		"--network", s.Network, "--ip", ip.String(),
		// systemd as PID 1 running containerd and kubelet: what kind's nodes are given.
		"--privileged",
		"--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
		"--tmpfs", "/tmp", "--tmpfs", "/run",
		"--volume", "/var", "--volume", "/lib/modules:/lib/modules:ro",
		// Restarted after a host or daemon restart, not after a failure of its own.
		"--restart=on-failure:1", "--init=false", "--cgroupns=private",
	}
	args = append(args, la...)
	args = append(args, s.Image)
	start := time.Now()
	if _, err := m.docker(ctx, nil, args...); err != nil {
		// docker run creates, then starts: a start that failed leaves a container behind.
		m.removeQuiet(s.Name)
		return Info{}, fmt.Errorf("run machine %s: %w", s.Name, err)
	}
	if err := m.waitBoot(ctx, s.Name, start); err != nil {
		m.removeQuiet(s.Name)
		return Info{}, err
	}
	if s.UserData != nil {
		if _, err := m.docker(ctx, s.UserData, "exec", "-i", s.Name, "sh", "-c", storeUserData); err != nil {
			return Info{}, fmt.Errorf("store the user data of machine %s: %w", s.Name, err)
		}
		if err := m.runUserData(ctx, s.Name); err != nil {
			info, _ := m.Inspect(ctx, s.Name)
			return info, err
		}
	}
	return m.Inspect(ctx, s.Name)
}

// removeQuiet removes a machine that failed to start, whatever the caller's context says.
func (m *Manager) removeQuiet(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = m.Remove(ctx, name)
}

// storeUserData stores its standard input as the instance's user data (once: a machine keeps the
// user data it was made with), owner-only: user data carries secrets.
const storeUserData = `set -e; umask 077; mkdir -p ` + InstanceDir + `/scripts
[ -e ` + UserDataPath + ` ] && exit 0
cat > ` + UserDataPath + `.tmp; mv -f ` + UserDataPath + `.tmp ` + UserDataPath

// runOnce runs the stored user data if it is a script and the machine has not finished its
// first boot, as cloud-init's per-instance scripts run: output appended to the output log, the
// boot-finished mark written whatever the script's status. It exits with the script's status.
const runOnce = `umask 077
[ -e ` + BootFinished + ` ] && exit 0
[ -e ` + UserDataPath + ` ] || exit 0
rc=0
if [ "$(head -c 2 ` + UserDataPath + `)" = '#!' ]; then
  cp ` + UserDataPath + ` ` + ScriptPath + ` && chmod 0700 ` + ScriptPath + `
  echo "nuv machine: running user data, $(date -u +%Y-%m-%dT%H:%M:%S.%NZ)" >> ` + OutputLog + `
  ` + ScriptPath + ` >> ` + OutputLog + ` 2>&1 < /dev/null || rc=$?
  echo "nuv machine: user data exited with $rc, $(date -u +%Y-%m-%dT%H:%M:%S.%NZ)" >> ` + OutputLog + `
else
  echo "nuv machine: user data is not a script (#!): stored only" >> ` + OutputLog + `
fi
echo "$(cut -d' ' -f1 /proc/uptime) - $(date -u +%Y-%m-%dT%H:%M:%SZ) - exit $rc" > ` + BootFinished + `
exit $rc`

func (m *Manager) runUserData(ctx context.Context, name string) error {
	_, err := m.execNoStdin(ctx, name, "sh", "-c", runOnce)
	var de *dockerError
	if err != nil && errors.As(err, &de) && de.code > 0 && de.code < 125 {
		out, _ := m.execNoStdin(ctx, name, "tail", "-n", "20", OutputLog)
		return &UserDataError{Machine: name, ExitCode: de.code, Tail: string(out)}
	}
	if err != nil {
		return fmt.Errorf("run the user data of machine %s: %w", name, err)
	}
	return nil
}

// waitBoot waits until systemd in machine name says running or degraded.
func (m *Manager) waitBoot(ctx context.Context, name string, start time.Time) error {
	bound := m.BootWait
	if bound <= 0 {
		bound = DefaultBootWait
	}
	var lastLog time.Time
	last := ""
	for {
		out, err := m.execNoStdin(ctx, name, "systemctl", "is-system-running")
		state := strings.TrimSpace(string(out))
		if state == "running" || state == "degraded" {
			m.Log.V(1).Infof("machine %s: systemd %s after %s", name, state, time.Since(start).Round(100*time.Millisecond))
			return nil
		}
		if err != nil && state == "" {
			info, ierr := m.Inspect(ctx, name)
			if ierr != nil {
				return fmt.Errorf("machine %s did not boot: %w", name, ierr)
			}
			if !info.Running && info.State != "created" && info.State != "restarting" {
				logs, _ := m.docker(ctx, nil, "logs", "--tail", "20", name)
				return fmt.Errorf("machine %s did not boot: its container is %s; its last output:\n%s", name, info.State, strings.TrimSpace(string(logs)))
			}
			state = "no answer yet"
		}
		if ctx.Err() != nil {
			return fmt.Errorf("wait for machine %s to boot: %w", name, ctx.Err())
		}
		waited := time.Since(start)
		if waited > bound {
			return fmt.Errorf("machine %s did not boot in %s: systemd says %q", name, bound, state)
		}
		if state != last || time.Since(lastLog) >= 15*time.Second {
			if waited >= 15*time.Second || state != last && last != "" {
				m.Log.Infof("waiting for machine %s to boot: systemd %s, %s so far", name, state, waited.Round(time.Second))
			}
			last, lastLog = state, time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for machine %s to boot: %w", name, ctx.Err())
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// Stop stops machine name (systemd shuts down on the image's stop signal); a stopped one is
// left so.
func (m *Manager) Stop(ctx context.Context, name string) error {
	if _, err := m.own(ctx, name); err != nil {
		return err
	}
	if _, err := m.docker(ctx, nil, "stop", "--time", "30", name); err != nil {
		return fmt.Errorf("stop machine %s: %w", name, err)
	}
	return nil
}

// Start starts a stopped machine and waits until its systemd is up; its user data does not run
// again (unless its first boot never finished).
func (m *Manager) Start(ctx context.Context, name string) error {
	if _, err := m.own(ctx, name); err != nil {
		return err
	}
	start := time.Now()
	if _, err := m.docker(ctx, nil, "start", name); err != nil {
		return fmt.Errorf("start machine %s: %w", name, err)
	}
	if err := m.waitBoot(ctx, name, start); err != nil {
		return err
	}
	return m.runUserData(ctx, name)
}

// own inspects machine name and refuses a container that is not a machine.
func (m *Manager) own(ctx context.Context, name string) (Info, error) {
	info, err := m.Inspect(ctx, name)
	if err != nil {
		return info, err
	}
	if info.Labels[MachineLabel] != "true" {
		return info, fmt.Errorf("container %s is not a machine of nuv's (no %s label): leaving it alone", name, MachineLabel)
	}
	return info, nil
}

// Remove removes machine name and its volume; one that does not exist is success. Frozen cgroup
// v1 freezer groups are thawed first, and a runtime that fails to kill a busy container is asked
// again a few times.
func (m *Manager) Remove(ctx context.Context, name string) error {
	for attempt := 1; ; attempt++ {
		info, err := m.own(ctx, name)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if n := ThawPID(info.Pid); n > 0 {
			m.Log.Infof("thawed %d frozen cgroup(s) of machine %s (a frozen group cannot be killed)", n, name)
		}
		_, err = m.docker(ctx, nil, "rm", "--force", "--volumes", name)
		if err == nil || noSuch(err) {
			return nil
		}
		if attempt == 4 || ctx.Err() != nil {
			return fmt.Errorf("remove machine %s (%d attempts): %w", name, attempt, err)
		}
		m.Log.Infof("removing machine %s failed (%v); trying again", name, err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("remove machine %s: %w", name, ctx.Err())
		case <-time.After(time.Duration(attempt) * 2 * time.Second):
		}
	}
}

// List returns the machines that carry all of labels (nil: every machine), by name.
func (m *Manager) List(ctx context.Context, labels map[string]string) ([]Info, error) {
	names, err := m.listNames(ctx, labels)
	if err != nil {
		return nil, fmt.Errorf("list machines: %w", err)
	}
	if len(names) == 0 {
		return nil, nil
	}
	infos, err := m.inspect(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("list machines: %w", err)
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	return infos, nil
}

// listNames names the machines that carry all of labels.
func (m *Manager) listNames(ctx context.Context, labels map[string]string) ([]string, error) {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	filters := []string{MachineLabel + "=true"}
	for _, k := range keys {
		filters = append(filters, k+"="+labels[k])
	}
	if m.api != nil {
		cs, err := m.api.Containers(ctx, dockerapi.Filters{"label": filters})
		if err != nil {
			return nil, err
		}
		names := make([]string, 0, len(cs))
		for _, c := range cs {
			names = append(names, c.Name())
		}
		return names, nil
	}
	args := []string{"ps", "-a", "--no-trunc", "--format", "{{.Names}}"}
	for _, f := range filters {
		args = append(args, "--filter", "label="+f)
	}
	out, err := m.docker(ctx, nil, args...)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// Inspect returns what machine name is now; a missing one is an error wrapping ErrNotFound.
func (m *Manager) Inspect(ctx context.Context, name string) (Info, error) {
	infos, err := m.inspect(ctx, name)
	if err != nil {
		return Info{}, err
	}
	return infos[0], nil
}

type inspected struct {
	ID      string `json:"Id"`
	Name    string
	Created string
	State   struct {
		Status  string
		Running bool
		Pid     int
	}
	Config struct {
		Hostname string
		Image    string
		Labels   map[string]string
	}
	Mounts []struct {
		Type, Name string
	}
	NetworkSettings struct {
		Networks map[string]struct {
			IPAddress  string
			IPAMConfig *struct{ IPv4Address string }
		}
	}
}

func (m *Manager) inspect(ctx context.Context, names ...string) ([]Info, error) {
	if m.api != nil {
		return m.inspectAPI(ctx, names)
	}
	out, err := m.docker(ctx, nil, append([]string{"inspect", "--type", "container"}, names...)...)
	if err != nil {
		if noSuch(err) && len(names) == 1 {
			return nil, fmt.Errorf("machine %s: %w", names[0], ErrNotFound)
		}
		if !noSuch(err) || len(out) == 0 {
			return nil, fmt.Errorf("inspect machine %s: %w", strings.Join(names, ", "), err)
		}
		// Some of several went meanwhile: the others are in out.
	}
	var raw []inspected
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, fmt.Errorf("inspect machine %s: %s's answer: %w", strings.Join(names, ", "), m.rt.Name, err)
	}
	return parseInspected(names, raw)
}

// inspectAPI is inspect over the API: one request a container, those gone meanwhile left out
// (as the CLI leaves them out of its answer).
func (m *Manager) inspectAPI(ctx context.Context, names []string) ([]Info, error) {
	raw := make([]inspected, 0, len(names))
	for _, name := range names {
		b, err := m.api.InspectContainer(ctx, name)
		if err != nil {
			if noSuch(err) {
				continue
			}
			return nil, fmt.Errorf("inspect machine %s: %w", name, err)
		}
		var r inspected
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("inspect machine %s: the daemon's answer: %w", name, err)
		}
		raw = append(raw, r)
	}
	return parseInspected(names, raw)
}

// parseInspected makes the Info of inspect documents (the CLI's and the API's are the same);
// none is an error wrapping ErrNotFound.
func parseInspected(names []string, raw []inspected) ([]Info, error) {
	var infos []Info
	for _, r := range raw {
		info := Info{
			Name: strings.TrimPrefix(r.Name, "/"), ID: r.ID, Image: r.Config.Image, Hostname: r.Config.Hostname,
			Labels: r.Config.Labels, State: r.State.Status, Running: r.State.Running, Pid: r.State.Pid,
		}
		if t, err := time.Parse(time.RFC3339Nano, r.Created); err == nil {
			info.Created = t
		}
		for _, mt := range r.Mounts {
			if mt.Type == "volume" && mt.Name != "" {
				info.Volumes = append(info.Volumes, mt.Name)
			}
		}
		nets := make([]string, 0, len(r.NetworkSettings.Networks))
		for n := range r.NetworkSettings.Networks {
			nets = append(nets, n)
		}
		sort.Strings(nets)
		if len(nets) > 0 {
			n := r.NetworkSettings.Networks[nets[0]]
			info.Network, info.IP = nets[0], n.IPAddress
			if n.IPAMConfig != nil && n.IPAMConfig.IPv4Address != "" {
				info.IP = n.IPAMConfig.IPv4Address
			}
		}
		infos = append(infos, info)
	}
	if len(infos) == 0 {
		return nil, fmt.Errorf("machine %s: %w", strings.Join(names, ", "), ErrNotFound)
	}
	return infos, nil
}

package awsmachines

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nuv-dev/nuv/internal/bootstrap"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/machine"
)

// Default pod and Service ranges of a self-managed cluster (kubeadm's and kind's).
const (
	defaultPodCIDR     = "10.244.0.0/16"
	defaultServiceCIDR = "10.96.0.0/12"
)

// machineInfo is one instance of a self-managed cluster that is not terminated.
type machineInfo struct {
	key     string // instance/NAME
	id      string
	state   string
	role    string
	ip      string // private
	public  string
	hostKey string // authorized_keys line
	inst    ec2types.Instance
}

// clusterInstances lists the instances tagged for cluster name that are not (being) terminated,
// by resource key.
func (s *session) clusterInstances(ctx context.Context, name string) (map[string]machineInfo, error) {
	out := map[string]machineInfo{}
	pg := ec2.NewDescribeInstancesPaginator(s.EC2, &ec2.DescribeInstancesInput{Filters: awsnet.TagFilter(name)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("ec2:DescribeInstances: %s", awsnet.APIMessage(err))
		}
		for _, r := range page.Reservations {
			for _, in := range r.Instances {
				st := ec2types.InstanceStateNameTerminated
				if in.State != nil {
					st = in.State.Name
				}
				if st == ec2types.InstanceStateNameTerminated || st == ec2types.InstanceStateNameShuttingDown {
					continue
				}
				t := awsnet.TagsOf(in.Tags)
				k := t[awsnet.TagResource]
				if cluster.KindOf(k) != kindInstance {
					k = awsnet.Key(kindInstance, aws.ToString(in.InstanceId))
				}
				out[k] = machineInfo{key: k, id: aws.ToString(in.InstanceId), state: string(st), role: t[TagRole],
					ip: aws.ToString(in.PrivateIpAddress), public: aws.ToString(in.PublicIpAddress), hostKey: t[TagHostKey], inst: in}
			}
		}
	}
	return out, nil
}

// nodeName is the name of a machine's Kubernetes node (and its hostname): CLUSTER-NAME.
func nodeName(clusterName, instanceKey string) string {
	_, n, _ := strings.Cut(instanceKey, "/")
	return clusterName + "-" + n
}

// sshMachine is a machine of the cluster reached over SSH, dialled on first use with its host
// key pinned; the connection is kept for the apply's other steps.
type sshMachine struct {
	p    *Provider
	name string
	info machineInfo
	key  *machine.Key

	mu   sync.Mutex
	conn *machine.SSH
}

var _ bootstrap.Machine = (*sshMachine)(nil)

func (m *sshMachine) Name() string    { return m.name }
func (m *sshMachine) Address() string { return m.info.ip }

func (m *sshMachine) dial(ctx context.Context) (*machine.SSH, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conn != nil {
		return m.conn, nil
	}
	if c := m.p.conn(m.info.id); c != nil {
		m.conn = c
		return c, nil
	}
	hk, err := machine.ParsePublicKey(m.info.hostKey)
	if err != nil {
		return nil, fmt.Errorf("machine %s (%s) has no host key nuv made (tag %s): %w", m.name, m.info.id, TagHostKey, err)
	}
	addr := m.info.public
	if addr == "" {
		addr = m.info.ip
	}
	c, err := machine.DialSSH(ctx, machine.SSHConfig{Name: m.name, Address: m.info.ip, Endpoint: net.JoinHostPort(addr, "22"), Key: m.key, HostKey: hk,
		HostKeyGrace: machine.DefaultSSHWait, Log: m.p.Log})
	if err != nil {
		return nil, err
	}
	m.conn = c
	m.p.keepConn(m.info.id, c)
	return c, nil
}

func (m *sshMachine) Run(ctx context.Context, script string, stdin io.Reader) ([]byte, error) {
	c, err := m.dial(ctx)
	if err != nil {
		return nil, err
	}
	return c.Run(ctx, script, stdin)
}

func (m *sshMachine) WriteFile(ctx context.Context, path string, data []byte, mode fs.FileMode) error {
	c, err := m.dial(ctx)
	if err != nil {
		return err
	}
	return c.WriteFile(ctx, path, data, mode)
}

func (m *sshMachine) ReadFile(ctx context.Context, path string) ([]byte, error) {
	c, err := m.dial(ctx)
	if err != nil {
		return nil, err
	}
	return c.ReadFile(ctx, path)
}

// conn and keepConn share SSH connections between the changes of an apply; forgetMachine drops a
// terminated machine's.
func (p *Provider) conn(id string) *machine.SSH {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conns[id]
}

func (p *Provider) keepConn(id string, c *machine.SSH) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		p.conns = map[string]*machine.SSH{}
	}
	p.conns[id] = c
}

func (p *Provider) forgetMachine(id string) {
	p.mu.Lock()
	c := p.conns[id]
	delete(p.conns, id)
	p.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// booted is a self-managed cluster's bootstrap over the machines that run now.
type booted struct {
	b        *bootstrap.Bootstrap
	machines map[string]*sshMachine // by instance key
}

// boot assembles the bootstrap of the cluster from its running machines: the control planes in
// order, the one kubeadm initialised first (a replacement of control-plane-0 joins like any other),
// the load balancer as the endpoint, and the machines' facts (cgroup v1, a container).
func (x *exec) boot(ctx context.Context) (*booted, error) {
	if x.m == nil {
		r, errs := x.p.resolveMachines(ctx, x.C)
		if len(errs) > 0 {
			return nil, fmt.Errorf("%v", errs[0])
		}
		x.m = r
	}
	infos, err := x.s.clusterInstances(ctx, x.Name)
	if err != nil {
		return nil, err
	}
	if infos, err = x.waitPending(ctx, infos); err != nil {
		return nil, err
	}
	key, err := x.p.clientKey(x.Name, false)
	if err != nil {
		return nil, err
	}
	bt := &booted{machines: map[string]*sshMachine{}}
	var cps, workers, etcd []bootstrap.Machine
	var lb bootstrap.Machine
	for _, k := range slices.Sorted(maps.Keys(infos)) {
		info := infos[k]
		if info.state != string(ec2types.InstanceStateNameRunning) {
			continue
		}
		m := &sshMachine{p: x.p, name: nodeName(x.Name, k), info: info, key: key}
		bt.machines[k] = m
		switch info.role {
		case RoleControlPlane:
			cps = append(cps, m)
		case RoleWorker:
			workers = append(workers, m)
		case RoleEtcd:
			etcd = append(etcd, m)
		case RoleLoadBalancer:
			lb = m
		}
	}
	if len(cps) == 0 {
		return nil, fmt.Errorf("cluster %s has no running control-plane machine", x.Name)
	}
	x.p.rememberNodes(x.Name, bt.machines)
	// The initialised control plane goes first: it holds the admin credentials and makes the join
	// secrets.
	for i, m := range cps {
		ok, err := bootstrap.Initialised(ctx, m)
		if err != nil {
			return nil, err
		}
		if ok {
			cps[0], cps[i] = cps[i], cps[0]
			break
		}
	}
	endpoint, sans, err := x.endpoint(ctx, lb)
	if err != nil {
		return nil, err
	}
	host, err := machineFacts(ctx, cps[0])
	if err != nil {
		return nil, err
	}
	bc := bootstrap.Cluster{Name: x.Name, KubernetesVersion: x.m.version, Endpoint: endpoint, CertSANs: sans,
		PodCIDR: awsnet.OrDefault(x.C.Spec.Networking.PodCIDR, defaultPodCIDR), ServiceCIDR: awsnet.OrDefault(x.C.Spec.Networking.ServiceCIDR, defaultServiceCIDR),
		ControlPlanes: cps, Workers: workers, Etcd: etcd, LoadBalancer: lb, Host: host, NodeLabels: machineNodeLabels(x.Name, host)}
	log := x.p.log()
	bt.b = &bootstrap.Bootstrap{Cluster: bc, Log: func(f string, a ...any) { log.Infof("  "+f, a...) }}
	return bt, nil
}

// waitPending waits until the cluster's pending machines run and lists the machines again. The
// machines this apply launched come first (launch.go): one whose launch EC2 failed is
// launched again, one that does not start fails the step. Others were launched by an apply a kill
// cut short (found by their record or their tags; the plan does not launch them again): one that
// does not start is left out (the bootstrap step that needs it says so; the next plan replaces it).
func (x *exec) waitPending(ctx context.Context, infos map[string]machineInfo) (map[string]machineInfo, error) {
	waited := false
	if ls := x.p.launched(x.Name); len(ls) > 0 {
		if err := x.running(ctx, ls...); err != nil {
			return nil, err
		}
		var err error
		if infos, err = x.s.clusterInstances(ctx, x.Name); err != nil {
			return nil, err
		}
		waited = true
	}
	for _, k := range slices.Sorted(maps.Keys(infos)) {
		if info := infos[k]; info.state == string(ec2types.InstanceStateNamePending) {
			if err := x.p.waitInstance(ctx, x.s, k, info.id, true); err != nil {
				if ctx.Err() != nil {
					return nil, err
				}
				x.p.log().Warnf("%v", err)
			}
			waited = true
		}
	}
	if !waited {
		return infos, nil
	}
	return x.s.clusterInstances(ctx, x.Name)
}

// endpoint is the API's load balancer as host:port, and the names its certificate must carry.
func (x *exec) endpoint(ctx context.Context, lb bootstrap.Machine) (string, []string, error) {
	if x.m.sec.LoadBalancer.Type == LBHAProxy {
		if lb == nil {
			return "", nil, fmt.Errorf("cluster %s has no running load-balancer machine", x.Name)
		}
		return net.JoinHostPort(lb.Address(), "6443"), nil, nil
	}
	return x.nlbEndpoint(ctx)
}

// machineFacts reads what the configuration must adapt to from a machine: a cgroup v1 hierarchy,
// and whether it is a container (an emulated instance).
func machineFacts(ctx context.Context, m bootstrap.Machine) (bootstrap.Host, error) {
	out, err := m.Run(ctx, `t=$(stat -fc %T /sys/fs/cgroup); echo "cgroup=$t"
v=$(systemd-detect-virt --container 2>/dev/null || true); echo "container=${v:-none}"
e=$(cat `+emulatorMark+` 2>/dev/null || true); echo "emulator=$e"
`, nil)
	if err != nil {
		return bootstrap.Host{}, fmt.Errorf("read the facts of machine %s: %w", m.Name(), err)
	}
	var h bootstrap.Host
	for _, l := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(l), "=")
		switch k {
		case "cgroup":
			h.CgroupV1 = v == "tmpfs"
		case "container":
			h.Containerized = v != "" && v != "none"
		case "emulator":
			h.Emulator = v
		}
	}
	return h, nil
}

// The bootstrap's steps as plan resources. Each records the instance it ran on: a step whose
// machine was replaced runs again on the new one.

func (x *exec) haproxy(ctx context.Context, _ cluster.Change) error {
	bt, err := x.boot(ctx)
	if err != nil {
		return err
	}
	if err := bt.b.LoadBalancer(ctx); err != nil {
		return err
	}
	return x.ranOn(bt, awsnet.Key(kindInstance, x.RName))
}

// stepMachine is the bootstrap and the running machine of the step's instance (its "instance"
// field); a machine that is not running is an error naming the step.
func (x *exec) stepMachine(ctx context.Context) (*booted, *sshMachine, error) {
	bt, err := x.boot(ctx)
	if err != nil {
		return nil, nil, err
	}
	ik := x.Res.Fields["instance"]
	m := bt.machines[ik]
	if m == nil {
		return nil, nil, fmt.Errorf("%s: its machine %s is not running", x.Res.Key(), ik)
	}
	return bt, m, nil
}

func (x *exec) etcdMember(ctx context.Context, _ cluster.Change) error {
	bt, err := x.boot(ctx)
	if err != nil {
		return err
	}
	ik := x.Res.Fields["instance"]
	m := bt.machines[ik]
	i := slices.IndexFunc(bt.b.Cluster.Etcd, func(e bootstrap.Machine) bool { return m != nil && e.Name() == m.Name() })
	if i < 0 {
		return fmt.Errorf("%s: its machine %s is not running", x.Res.Key(), ik)
	}
	if err := bt.b.EtcdMember(ctx, i); err != nil {
		return err
	}
	// A member healed at another address than its lost machine's: the API servers follow.
	if err := bt.b.RepointEtcd(ctx); err != nil {
		return err
	}
	return x.ranOn(bt, ik)
}

// kubeadmInit initialises the cluster once: when a control plane is initialised already (the
// cluster exists and lost another machine, or a killed apply got that far), nothing runs.
func (x *exec) kubeadmInit(ctx context.Context, _ cluster.Change) error {
	bt, err := x.boot(ctx)
	if err != nil {
		return err
	}
	first := bt.b.Cluster.ControlPlanes[0].(*sshMachine)
	if state, err := os.ReadFile(x.p.controlPlaneStatePath(x.Name)); err == nil {
		// The lone control plane's roll stopped between its terminate and its replacement's
		// start: the replacement starts from its predecessor's state, not as a new cluster.
		x.p.log().Infof("  %s: the roll of the lone control plane resumes: %s starts from its predecessor's state", x.Res.Key(), first.Name())
		if err := x.restoreControlPlane(ctx, bt, first, state); err != nil {
			return err
		}
		return x.Made(first.info.id)
	}
	if err := bt.b.Init(ctx); err != nil {
		return err
	}
	return x.Made(first.info.id)
}

// kubeadmJoin joins a control plane or a worker. The control plane kubeadm initialised has
// nothing to join; a control plane joins after the etcd member of the machine it replaces (same
// name, gone) is removed.
func (x *exec) kubeadmJoin(ctx context.Context, _ cluster.Change) error {
	bt, m, err := x.stepMachine(ctx)
	if err != nil {
		return err
	}
	if x.Res.Fields["role"] == RoleControlPlane {
		ok, err := bootstrap.Initialised(ctx, m)
		if err != nil || ok {
			if err != nil {
				return err
			}
			return x.ranOn(bt, x.Res.Fields["instance"])
		}
	}
	joined, err := m.Run(ctx, "[ -e "+bootstrap.KubeletConf+" ] && echo yes || echo no\n", nil)
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(joined)) != "yes" {
		// The steps below run through the first control plane (its admin kubeconfig, the join
		// secrets it makes): never this new, empty machine, which is the first when it replaces
		// the lost control-plane-0 (the machine kubeadm initialised).
		lastOf(bt, m)
		// A new machine under a name the cluster knew (it replaces a lost one): the lost machine's
		// etcd member and its Node (whose mirror pods name the dead etcd, where kubeadm looks for
		// the members) go first.
		if x.Res.Fields["role"] == RoleControlPlane && len(bt.b.Cluster.Etcd) == 0 {
			members, err := bt.b.EtcdMembers(ctx)
			if err != nil {
				return err
			}
			if slices.Contains(members, m.Name()) {
				if err := bt.b.RemoveEtcdMember(ctx, m.Name()); err != nil {
					return err
				}
			}
		}
		if err := bt.b.DeleteNode(ctx, m.Name()); err != nil {
			return err
		}
	}
	if x.Res.Fields["role"] == RoleControlPlane {
		if err := bt.b.JoinControlPlane(ctx, m); err != nil {
			return err
		}
		// HAProxy's backends name the control planes by address: a control plane healed at
		// another address than its lost machine's is put in.
		if err := bt.b.LoadBalancer(ctx); err != nil {
			return err
		}
	} else if err := bt.b.JoinWorker(ctx, m); err != nil {
		return err
	}
	return x.ranOn(bt, x.Res.Fields["instance"])
}

// leaving is the delete of a join: when the cluster stays (a group scaled down, a machine taken
// out of the spec) the node is drained, its etcd member removed and kubeadm reset before its
// machine goes; when the whole cluster goes, nothing is drained.
func (x *exec) leaving(ctx context.Context, ch cluster.Change) error {
	if machinesKeys(x.C)[ch.Key] {
		return nil // the cluster itself is being deleted
	}
	bt, err := x.boot(ctx)
	if err != nil {
		return err
	}
	ik := ch.Actual.Fields["instance"]
	node := nodeName(x.Name, ik)
	if m := bt.machines[ik]; m != nil {
		lastOf(bt, m) // the steps run through another control plane
	}
	if ch.Actual.Fields["role"] == RoleControlPlane {
		// out of HAProxy's backends before its API server stops
		if err := bt.b.DrainLoadBalancer(ctx, node); err != nil {
			return err
		}
	}
	if err := bt.b.Drain(ctx, node); err != nil {
		return err
	}
	if m := bt.machines[ik]; m != nil {
		if err := bt.b.Reset(ctx, m); err != nil {
			return err
		}
	}
	if ch.Actual.Fields["role"] == RoleControlPlane && len(bt.b.Cluster.Etcd) == 0 {
		if err := bt.b.RemoveEtcdMember(ctx, node); err != nil {
			return err
		}
	}
	return bt.b.DeleteNode(ctx, node)
}

// drainLeaving drains the node of the machine instanceKey, which leaves a cluster that stays,
// through another control plane.
func (x *exec) drainLeaving(ctx context.Context, instanceKey string) error {
	bt, err := x.boot(ctx)
	if err != nil {
		return err
	}
	if m := bt.machines[instanceKey]; m != nil {
		lastOf(bt, m)
	}
	return bt.b.Drain(ctx, nodeName(x.Name, instanceKey))
}

func (x *exec) removeEtcdMember(ctx context.Context, ch cluster.Change) error {
	if machinesKeys(x.C)[ch.Key] {
		return nil
	}
	bt, err := x.boot(ctx)
	if err != nil {
		return err
	}
	return bt.b.RemoveEtcdMember(ctx, nodeName(x.Name, ch.Actual.Fields["instance"]))
}

func (x *exec) cni(ctx context.Context, _ cluster.Change) error {
	bt, err := x.boot(ctx)
	if err != nil {
		return err
	}
	if err := bt.b.CNI(ctx); err != nil {
		return err
	}
	return x.Made(x.Res.Fields["network"])
}

// machinesKubeconfig writes the admin kubeconfig, its server the load balancer (0600).
func (x *exec) machinesKubeconfig(ctx context.Context, _ cluster.Change) error {
	bt, err := x.boot(ctx)
	if err != nil {
		return err
	}
	b, err := bt.b.ReadKubeconfig(ctx)
	if err != nil {
		return err
	}
	if err := kit.WriteKubeconfig(x.p.KubeconfigPath(x.Name), b); err != nil {
		return err
	}
	x.Res.ID = x.p.KubeconfigPath(x.Name)
	return nil
}

// noop is the delete of a step that goes with its machines.
func noop(*exec, context.Context, cluster.Change) error { return nil }

// ranOn records the step with the instance it ran on.
func (x *exec) ranOn(bt *booted, instanceKey string) error {
	m := bt.machines[instanceKey]
	if m == nil {
		return fmt.Errorf("%s: its machine %s is not running", x.Res.Key(), instanceKey)
	}
	return x.Made(m.info.id)
}

// machinesKeys are the keys of the resources a self-managed spec asks for (their names depend on
// the spec alone).
func machinesKeys(c *spec.Cluster) map[string]bool {
	sec := Key.Get(c).withDefaults()
	zones := zonesOr(c.Spec.Zones)
	subnets, _ := awsnet.CarveSubnets(c.Spec.Networking.VPCCIDR, zones, sec.PublicSubnetCIDRs, sec.PrivateSubnetCIDRs)
	out := map[string]bool{}
	for _, r := range machinesDesired(c, &machinesResolved{sec: sec, zones: zones, subnets: subnets}) {
		out[r.Key()] = true
	}
	return out
}

package awsmachines

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Self-managed clusters on EC2 machines (`provider: aws`), kOps' and ksctl's kind of cluster:
// nuv makes the network as for EKS, security groups that open the ports kubeadm documents, a key
// pair, a load balancer in front of the API servers (an AWS Network Load Balancer or a machine
// running HAProxy), the machines of every role, and then bootstraps Kubernetes on them with
// kubeadm, each step a resource of its own so a killed apply resumes where it stopped:
//
//	security-group/control-plane        6443 from the API's clients; 2379-2380 (stacked etcd),
//	                                    10250, 10257, 10259 from the control planes
//	security-group/workers              10250 from the control planes, 10256 from the VPC,
//	                                    30000-32767 (NodePort services) from the API's clients
//	security-group/etcd                 2379 from the control planes, 2380 between members (external)
//	security-group/lb                   6443 from the API's clients (the HAProxy machine)
//	security-group/machines             22 from spec.aws.ssh.cidrs (nuv bootstraps over SSH), and
//	                                    everything between the cluster's machines: the pod network
//	                                    routes pods' traffic between nodes without encapsulation
//	key-pair/nuv-NAME                   nuv's SSH key (its private half stays in nuv's home, 0600)
//	load-balancer/NAME                  nlb: the Network Load Balancer, with
//	target-group/NAME-api               the control planes' 6443, and
//	listener/api                        6443 forwarded to it
//	instance/ROLE-N                     the machines: control-plane-N, etcd-N, lb-0 (haproxy), GROUP-N
//	haproxy/lb-0                        the load-balancer machine's HAProxy, the control planes behind it
//	etcd-member/etcd-N                  an external etcd member, certificates made by nuv, joined in turn
//	kubeadm-init/control-plane-0        `kubeadm init` with the load balancer as controlPlaneEndpoint
//	kubeadm-join/control-plane-N        the other control planes, joined one at a time
//	kubeadm-join/GROUP-N                the workers
//	cni/NAME                            the pod network
//	kubeconfig/NAME                     clusters/NAME.kubeconfig (0600), through the load balancer
const (
	kindKeyPair      = awsnet.KindKeyPair
	kindLoadBalancer = "load-balancer"
	kindTargetGroup  = "target-group"
	kindListener     = "listener"
	kindInstance     = "instance"
	kindHAProxy      = "haproxy"
	kindEtcdMember   = "etcd-member"
	kindKubeadmInit  = "kubeadm-init"
	kindKubeadmJoin  = "kubeadm-join"
	kindCNI          = "cni"
	kindKubeconfig   = "kubeconfig"
)

// Name is the self-managed provider's name in specs.
const Name = "aws"

// Machine roles, the value of every instance's nuv.dev/role tag.
const (
	RoleControlPlane = "control-plane"
	RoleWorker       = "worker"
	RoleEtcd         = "etcd"
	RoleLoadBalancer = "load-balancer"
)

// TagRole says what an instance of a self-managed cluster is (RoleControlPlane, ...).
const TagRole = "nuv.dev/role"

// Etcd placements and load balancer types of spec.aws.
const (
	EtcdStacked  = "stacked"
	EtcdExternal = "external"
	LBNetwork    = "nlb"
	LBHAProxy    = "haproxy"
)

// Kubernetes' ports that the security groups open (kubeadm's "Ports and Protocols").
const (
	portAPI        = 6443
	portKubelet    = 10250
	portKubeProxy  = 10256
	portController = 10257
	portScheduler  = 10259
)

// Machines is the section of a self-managed cluster, `spec.aws:`.
type Machines struct {
	// Endpoint and Profile are as spec.eks's: the AWS API (nuv's emulator) and the credentials.
	Endpoint string `yaml:"endpoint,omitempty" json:"endpoint,omitempty"`
	Profile  string `yaml:"profile,omitempty" json:"profile,omitempty"`
	// NAT, PublicSubnetCIDRs and PrivateSubnetCIDRs shape the VPC as for EKS.
	NAT                string   `yaml:"nat,omitempty" json:"nat,omitempty"`
	PublicSubnetCIDRs  []string `yaml:"publicSubnetCIDRs,omitempty" json:"publicSubnetCIDRs,omitempty"`
	PrivateSubnetCIDRs []string `yaml:"privateSubnetCIDRs,omitempty" json:"privateSubnetCIDRs,omitempty"`
	// ControlPlane is the control planes' machine (their number is spec.controlPlane.count).
	ControlPlane MachineSize `yaml:"controlPlane,omitempty" json:"controlPlane,omitempty"`
	// Etcd is where etcd runs: stacked on the control planes (kOps' way, the default) or on
	// machines of its own (ksctl's datastore tier).
	Etcd Etcd `yaml:"etcd,omitempty" json:"etcd,omitempty"`
	// LoadBalancer fronts the API servers.
	LoadBalancer LoadBalancer `yaml:"loadBalancer,omitempty" json:"loadBalancer,omitempty"`
	// Bootstrap is how Kubernetes is installed on the machines: kubeadm.
	Bootstrap string `yaml:"bootstrap,omitempty" json:"bootstrap,omitempty"`
	// Image is the machines' AMI, by name or id (default: nuv's machine image for the version).
	Image string `yaml:"image,omitempty" json:"image,omitempty"`
	// SSH says who may reach the machines' SSH port, which nuv bootstraps them through.
	SSH SSHAccess `yaml:"ssh,omitempty" json:"ssh,omitempty"`
	// APIAccessCIDRs may reach the API's load balancer and NodePort services (default anywhere).
	APIAccessCIDRs []string `yaml:"apiAccessCIDRs,omitempty" json:"apiAccessCIDRs,omitempty"`
}

// MachineSize is a role's machine.
type MachineSize struct {
	InstanceType string `yaml:"instanceType,omitempty" json:"instanceType,omitempty"`
}

// Etcd is the etcd tier.
type Etcd struct {
	// Placement is stacked or external.
	Placement string `yaml:"placement,omitempty" json:"placement,omitempty"`
	// Count is the number of external members, 3 or 5 (stacked: one per control plane).
	Count        int    `yaml:"count,omitempty" json:"count,omitempty"`
	InstanceType string `yaml:"instanceType,omitempty" json:"instanceType,omitempty"`
}

// LoadBalancer is what fronts the API servers.
type LoadBalancer struct {
	// Type is nlb (an AWS Network Load Balancer, the default) or haproxy (a machine running it).
	Type string `yaml:"type,omitempty" json:"type,omitempty"`
	// InstanceType is the HAProxy machine's.
	InstanceType string `yaml:"instanceType,omitempty" json:"instanceType,omitempty"`
}

// SSHAccess is who may reach the machines' SSH port.
type SSHAccess struct {
	CIDRs []string `yaml:"cidrs,omitempty" json:"cidrs,omitempty"`
}

// Key names spec.aws: its decoder (the registry's), reader and writer.
var Key = spec.SectionKey[Machines]("aws")

// Default machine types: kubeadm wants 2 CPUs and 2 GB on a control plane.
const (
	defaultControlPlaneType = "m6i.large"
	defaultEtcdType         = "m6i.large"
	defaultLBType           = "t3.small"
)

// withDefaults fills what the spec leaves out.
func (m Machines) withDefaults() Machines {
	if m.NAT == "" {
		m.NAT = awsnet.NATSingle
	}
	if m.ControlPlane.InstanceType == "" {
		m.ControlPlane.InstanceType = defaultControlPlaneType
	}
	if m.Etcd.Placement == "" {
		m.Etcd.Placement = EtcdStacked
	}
	if m.Etcd.Placement == EtcdExternal {
		if m.Etcd.Count == 0 {
			m.Etcd.Count = 3
		}
		if m.Etcd.InstanceType == "" {
			m.Etcd.InstanceType = defaultEtcdType
		}
	}
	if m.LoadBalancer.Type == "" {
		m.LoadBalancer.Type = LBNetwork
	}
	if m.LoadBalancer.Type == LBHAProxy && m.LoadBalancer.InstanceType == "" {
		m.LoadBalancer.InstanceType = defaultLBType
	}
	if m.Bootstrap == "" {
		m.Bootstrap = "kubeadm"
	}
	if len(m.SSH.CIDRs) == 0 {
		m.SSH.CIDRs = []string{"0.0.0.0/0"}
	}
	if len(m.APIAccessCIDRs) == 0 {
		m.APIAccessCIDRs = []string{"0.0.0.0/0"}
	}
	return m
}

// checkMachines is the rules of a self-managed spec that need no API call; every problem has its
// field path.
func checkMachines(c *spec.Cluster) []spec.FieldError {
	var errs []spec.FieldError
	add := func(path, f string, a ...any) { errs = append(errs, spec.Errorf(path, f, a...)) }
	raw, derrs := Key.Decode(c)
	errs = append(errs, derrs...)
	var m Machines
	if raw != nil {
		m = *raw
	}
	s := &c.Spec
	switch n := s.ControlPlane.Count; n {
	case 0, 1, 3, 5:
	default:
		add("spec.controlPlane.count", "%d control planes: want 1, 3 or 5 (etcd needs a majority: an even count adds no tolerance)", n)
	}
	switch m.Etcd.Placement {
	case "", EtcdStacked:
		if m.Etcd.Count != 0 {
			add("spec.aws.etcd.count", "stacked etcd runs one member on each control plane: set spec.controlPlane.count, or placement: external")
		}
		if m.Etcd.InstanceType != "" {
			add("spec.aws.etcd.instanceType", "stacked etcd runs on the control planes' machines: leave instanceType out, or placement: external")
		}
	case EtcdExternal:
		switch m.Etcd.Count {
		case 0, 3, 5:
		default:
			add("spec.aws.etcd.count", "%d etcd members: want 3 or 5", m.Etcd.Count)
		}
	default:
		add("spec.aws.etcd.placement", "%q: want stacked or external", m.Etcd.Placement)
	}
	switch m.LoadBalancer.Type {
	case "", LBNetwork:
		if m.LoadBalancer.InstanceType != "" {
			add("spec.aws.loadBalancer.instanceType", "a Network Load Balancer is not a machine: leave instanceType out, or type: haproxy")
		}
	case LBHAProxy:
	default:
		add("spec.aws.loadBalancer.type", "%q: want nlb or haproxy", m.LoadBalancer.Type)
	}
	switch m.Bootstrap {
	case "", "kubeadm":
	case "k3s":
		add("spec.aws.bootstrap", "k3s cannot be installed by nuv: its release can be neither obtained nor verified here (the Go module proxy refuses github.com/k3s-io/k3s and Debian does not package it); use kubeadm")
	default:
		add("spec.aws.bootstrap", "%q: want kubeadm", m.Bootstrap)
	}
	if m.NAT != "" && m.NAT != awsnet.NATNone && m.NAT != awsnet.NATSingle && m.NAT != awsnet.NATPerAZ {
		add("spec.aws.nat", "%q: want none, single or perAZ", m.NAT)
	}
	for field, cidrs := range map[string][]string{"spec.aws.ssh.cidrs": m.SSH.CIDRs, "spec.aws.apiAccessCIDRs": m.APIAccessCIDRs} {
		for i, cidr := range cidrs {
			if _, err := netip.ParsePrefix(cidr); err != nil {
				add(fmt.Sprintf("%s[%d]", field, i), "invalid CIDR %q", cidr)
			}
		}
	}
	if s.KubernetesVersion != "" {
		if v, _ := spec.NormalVersion(s.KubernetesVersion); strings.Count(v, ".") != 1 {
			add("spec.kubernetesVersion", "%q: the machine image fixes the patch release; give MAJOR.MINOR", s.KubernetesVersion)
		}
	}
	if n := len(s.Zones); n > 3 {
		add("spec.zones", "%d zones: a self-managed cluster nuv makes spans 1 to 3 zones", n)
	}
	for i, g := range s.NodeGroups {
		path := "spec.nodeGroups[" + strconv.Itoa(i) + "]"
		if g.Manager != "" && g.Manager != "managed" {
			add(path+".manager", "%q: the machines of a self-managed cluster are nuv's own instance groups; leave manager out", g.Manager)
		}
		if g.Spot {
			add(path+".spot", "spot machines are not offered for self-managed clusters yet: a reclaimed machine would not be replaced")
		}
		for _, r := range []string{RoleControlPlane, RoleEtcd, "lb"} {
			if g.Name == r {
				add(path+".name", "%q names a machine role; call the group something else", g.Name)
			}
		}
	}
	if s.Registry {
		add("spec.registry", "nuv's loopback registry is not reachable from the machines; push to a registry they can pull from")
	}
	_, cerrs := awsnet.CarveSubnets(s.Networking.VPCCIDR, zonesOr(s.Zones), m.PublicSubnetCIDRs, m.PrivateSubnetCIDRs)
	for _, e := range cerrs {
		e.Path = strings.Replace(e.Path, "spec.eks.", "spec.aws.", 1)
		errs = append(errs, e)
	}
	errs = append(errs, c.CheckSections()...)
	slices.SortFunc(errs, func(a, b spec.FieldError) int { return strings.Compare(a.Path, b.Path) })
	return errs
}

// zonesOr is zones, or two placeholder zones for checks made before the API names the real ones
// (the carving is the same).
func zonesOr(zones []string) []string {
	if len(zones) == 0 {
		return []string{"a", "b"}
	}
	return zones
}

// machinesResolved is what a self-managed spec means once AWS has answered.
type machinesResolved struct {
	sec     Machines
	version string // MAJOR.MINOR.PATCH of the machine image
	image   string // the AMI's name
	zones   []string
	subnets []awsnet.Subnet
}

// machinesDesired lists the resources of a self-managed cluster (a pure function: the plan golden
// tests it): the network, the security groups and key pair, the machines, the API's endpoint and
// the bootstrap, in that order.
func machinesDesired(c *spec.Cluster, r *machinesResolved) []cluster.Resource {
	name := c.Metadata.Name
	n := awsnet.NetworkDesired(c, r.subnets, r.zones, r.sec.NAT)
	d := &machinesBuild{c: c, r: r, n: n, kp: awsnet.Key(kindKeyPair, "nuv-"+name)}
	d.out = append(d.out, n.Resources...)
	d.out = append(d.out, securityGroupsDesired(c, r.sec, n)...)
	d.add(cluster.Resource{Kind: kindKeyPair, Name: "nuv-" + name, Fields: map[string]string{"algorithm": "ed25519"}})
	d.machines()
	endpoint := d.endpoint()
	d.out = append(d.out, d.checks...)
	d.bootstrap(endpoint)
	return d.out
}

// machinesBuild is machinesDesired's work in progress.
type machinesBuild struct {
	c   *spec.Cluster
	r   *machinesResolved
	n   awsnet.Network
	kp  string // the key pair's key
	out []cluster.Resource
	// checks are the source/destination checks of the machines that carry pods: they wait for
	// their machines to run, so they come after every launch.
	checks           []cluster.Resource
	cpKeys, etcdKeys []string
	workers          []planWorker
}

// planWorker is a worker machine's instance key and its node group.
type planWorker struct{ key, group string }

func (d *machinesBuild) add(res cluster.Resource) { d.out = append(d.out, res) }

func sgKey(role string) string { return awsnet.Key(awsnet.KindSG, role) }

// securityGroupsDesired are a self-managed cluster's security groups, one per role, with one
// ingress rule per port range and source, as AWS lists them.
func securityGroupsDesired(c *spec.Cluster, sec Machines, n awsnet.Network) []cluster.Resource {
	vpcCIDR := awsnet.OrDefault(c.Spec.Networking.VPCCIDR, awsnet.DefaultVPCCIDR)
	api := strings.Join(sec.APIAccessCIDRs, " ")
	rules := map[string][]string{
		"control-plane": {
			rule(portAPI, portAPI, api),
			rule(portKubelet, portKubelet, sgKey("control-plane")),
			rule(portController, portController, sgKey("control-plane")),
			rule(portScheduler, portScheduler, sgKey("control-plane")),
		},
		"workers": {
			rule(portKubelet, portKubelet, sgKey("control-plane")),
			rule(portKubeProxy, portKubeProxy, vpcCIDR),
			rule(30000, 32767, api),
		},
		"machines": {
			rule(22, 22, strings.Join(sec.SSH.CIDRs, " ")),
			"all:" + sgKey("machines"),
		},
	}
	if sec.Etcd.Placement == EtcdStacked {
		rules["control-plane"] = append(rules["control-plane"], rule(2379, 2380, sgKey("control-plane")))
	} else {
		rules["etcd"] = []string{rule(2379, 2379, sgKey("control-plane")), rule(2380, 2380, sgKey("etcd"))}
	}
	if sec.LoadBalancer.Type == LBNetwork {
		// An NLB keeps the client's address: the API's rule above lets clients in; its health
		// checks come from the VPC.
		rules["control-plane"] = append(rules["control-plane"], rule(portAPI, portAPI, vpcCIDR))
	} else {
		rules["lb"] = []string{rule(portAPI, portAPI, api)}
	}
	var out []cluster.Resource
	for _, role := range slices.Sorted(maps.Keys(rules)) {
		var rs []string
		for _, r := range rules[role] {
			head := r[:strings.LastIndex(r, ":")+1]
			for _, src := range ruleSources(r) {
				rs = append(rs, head+src)
			}
		}
		slices.Sort(rs)
		rs = slices.Compact(rs)
		var deps []string
		for _, r := range rs {
			for _, src := range ruleSources(r) {
				if strings.HasPrefix(src, awsnet.KindSG+"/") && src != sgKey(role) {
					deps = append(deps, src)
				}
			}
		}
		slices.Sort(deps)
		out = append(out, cluster.Resource{Kind: awsnet.KindSG, Name: role, Fields: map[string]string{"vpc": n.VPC, "ingress": strings.Join(rs, ",")},
			Replace: []string{"vpc"}, DependsOn: append([]string{n.VPC}, slices.Compact(deps)...)})
	}
	return out
}

// instance adds the instance of a machine, in the private subnet of the i-th zone in turn (the
// public one for a public machine), and returns its key. The machines boot at the same time
// (launch.go): what waits for a machine to run comes after every launch.
func (d *machinesBuild) instance(role, iname, itype string, i int, public bool, groups ...string) string {
	zone := d.r.zones[i%len(d.r.zones)]
	subnet := awsnet.Key(awsnet.KindSubnet, "private-"+zone)
	if public {
		subnet = awsnet.Key(awsnet.KindSubnet, "public-"+zone)
	}
	sgs := []string{sgKey("machines")}
	for _, g := range groups {
		sgs = append(sgs, sgKey(g))
	}
	slices.Sort(sgs)
	deps := append([]string{subnet, d.kp}, sgs...)
	deps = append(deps, d.n.Routes...)
	d.add(cluster.Resource{Kind: kindInstance, Name: iname, Fields: map[string]string{
		"role": role, "instanceType": itype, "subnet": subnet, "image": d.r.image, "keyPair": d.kp,
		"securityGroups": strings.Join(sgs, ","),
	}, Replace: []string{"instanceType", "subnet", "image", "role"}, DependsOn: deps})
	if carriesPods(role) {
		check, _ := podNetDesired(awsnet.Key(kindInstance, iname), "", nil)
		d.checks = append(d.checks, check)
	}
	return awsnet.Key(kindInstance, iname)
}

// machines adds the control planes, the external etcd tier and the node groups' workers.
func (d *machinesBuild) machines() {
	sec := d.r.sec
	for i := range max(d.c.Spec.ControlPlane.Count, 1) {
		d.cpKeys = append(d.cpKeys, d.instance(RoleControlPlane, fmt.Sprintf("control-plane-%d", i), sec.ControlPlane.InstanceType, i, false, "control-plane"))
	}
	if sec.Etcd.Placement == EtcdExternal {
		for i := range sec.Etcd.Count {
			d.etcdKeys = append(d.etcdKeys, d.instance(RoleEtcd, fmt.Sprintf("etcd-%d", i), sec.Etcd.InstanceType, i, false, "etcd"))
		}
	}
	for _, g := range d.c.Spec.NodeGroups {
		for i := range g.Size() {
			k := d.instance(RoleWorker, fmt.Sprintf("%s-%d", g.Name, i), awsnet.InstanceTypeOf(g), i, false, "workers")
			d.workers = append(d.workers, planWorker{k, g.Name})
		}
	}
}

// endpoint adds the API's endpoint, a network load balancer or an HAProxy machine, and returns
// the keys of what makes it.
func (d *machinesBuild) endpoint() []string {
	name, sec, n := d.c.Metadata.Name, d.r.sec, d.n
	if sec.LoadBalancer.Type != LBNetwork {
		lbm := d.instance(RoleLoadBalancer, "lb-0", sec.LoadBalancer.InstanceType, 0, true, "lb")
		d.add(cluster.Resource{Kind: kindHAProxy, Name: "lb-0", Fields: map[string]string{"port": strconv.Itoa(portAPI), "backends": strings.Join(awsnet.Names(d.cpKeys), ",")},
			DependsOn: append([]string{lbm}, d.cpKeys...)})
		return []string{awsnet.Key(kindHAProxy, "lb-0")}
	}
	lb := awsnet.Key(kindLoadBalancer, name)
	d.add(cluster.Resource{Kind: kindLoadBalancer, Name: name, Fields: map[string]string{"type": "network", "scheme": "internet-facing",
		"subnets": strings.Join(awsnet.Names(n.Public), ",")}, Replace: []string{"type", "scheme"}, DependsOn: append([]string{n.Routes[0]}, n.Public...)})
	tg := awsnet.Key(kindTargetGroup, name+"-api")
	d.add(cluster.Resource{Kind: kindTargetGroup, Name: name + "-api", Fields: map[string]string{"protocol": "TCP", "port": strconv.Itoa(portAPI),
		"vpc": n.VPC, "targets": strings.Join(awsnet.Names(d.cpKeys), ",")}, Replace: []string{"protocol", "port", "vpc"}, DependsOn: append([]string{n.VPC}, d.cpKeys...)})
	d.add(cluster.Resource{Kind: kindListener, Name: "api", Fields: map[string]string{"protocol": "TCP", "port": strconv.Itoa(portAPI),
		"loadBalancer": lb, "targetGroup": tg}, Replace: []string{"loadBalancer"}, DependsOn: []string{lb, tg}})
	return []string{lb, awsnet.Key(kindListener, "api")}
}

// bootstrap adds the bootstrap in kubeadm's order: the etcd members, kubeadm init, the control
// planes' joins, the pod network, the workers' joins, the pod routes and the kubeconfig.
func (d *machinesBuild) bootstrap(endpoint []string) {
	name, sec, cpKeys := d.c.Metadata.Name, d.r.sec, d.cpKeys
	var etcdDeps []string
	for i, k := range d.etcdKeys {
		deps := []string{k}
		if i > 0 {
			deps = append(deps, awsnet.Key(kindEtcdMember, fmt.Sprintf("etcd-%d", i-1))) // members join one at a time
		}
		d.add(cluster.Resource{Kind: kindEtcdMember, Name: fmt.Sprintf("etcd-%d", i), Fields: map[string]string{"instance": k}, DependsOn: deps})
		etcdDeps = append(etcdDeps, awsnet.Key(kindEtcdMember, fmt.Sprintf("etcd-%d", i)))
	}
	initKey := awsnet.Key(kindKubeadmInit, "control-plane-0")
	initFields := map[string]string{"instance": cpKeys[0], "version": d.r.version, "etcd": sec.Etcd.Placement,
		"podCIDR": d.c.Spec.Networking.PodCIDR, "serviceCIDR": d.c.Spec.Networking.ServiceCIDR}
	d.add(cluster.Resource{Kind: kindKubeadmInit, Name: "control-plane-0", Fields: initFields,
		Replace: []string{"version", "etcd", "podCIDR", "serviceCIDR"}, DependsOn: append(append([]string{cpKeys[0]}, endpoint...), etcdDeps...)})
	// Every control plane has a join: the one kubeadm initialised has nothing to do, and a
	// machine that replaces it joins like the others.
	prev := initKey
	for _, k := range cpKeys {
		_, n, _ := strings.Cut(k, "/")
		d.add(cluster.Resource{Kind: kindKubeadmJoin, Name: n, Fields: map[string]string{"instance": k, "role": RoleControlPlane}, DependsOn: []string{k, prev}})
		prev = awsnet.Key(kindKubeadmJoin, n) // control planes join one at a time: etcd grows by one member
	}
	cni := awsnet.Key(kindCNI, name)
	d.add(cluster.Resource{Kind: kindCNI, Name: name, Fields: map[string]string{"network": "nuv-podnet"}, DependsOn: []string{initKey}})
	for _, w := range d.workers {
		_, n, _ := strings.Cut(w.key, "/")
		d.add(cluster.Resource{Kind: kindKubeadmJoin, Name: n, Fields: map[string]string{"instance": w.key, "role": RoleWorker, "group": w.group}, DependsOn: []string{w.key, initKey}})
	}
	// The pod network's routes, each after its node joined (podnet.go).
	tables := privateRouteTables(d.n)
	nodes := slices.Clone(cpKeys)
	for _, w := range d.workers {
		nodes = append(nodes, w.key)
	}
	for _, k := range nodes {
		_, n, _ := strings.Cut(k, "/")
		_, route := podNetDesired(k, awsnet.Key(kindKubeadmJoin, n), tables)
		d.add(route)
	}
	d.add(cluster.Resource{Kind: kindKubeconfig, Name: name, Fields: map[string]string{"path": "clusters/" + name + ".kubeconfig"}, DependsOn: append([]string{initKey, cni}, endpoint...)})
}

// rule is a security group's ingress rule in the plan's form: "tcp:FROM-TO:SOURCE SOURCE...".
func rule(from, to int, sources string) string {
	ports := strconv.Itoa(from)
	if to != from {
		ports += "-" + strconv.Itoa(to)
	}
	return "tcp:" + ports + ":" + sources
}

// ruleSources are the sources of a rule: CIDRs and security group keys.
func ruleSources(r string) []string {
	return strings.Fields(r[strings.LastIndex(r, ":")+1:])
}

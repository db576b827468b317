package awsmachines

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/bootstrap"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/fsutil"
)

// Rolling replacement, kOps' rolling update: a change of a machine's instance type (or image,
// subnet, role) replaces the machines of the cluster one at a time, each a change of the plan
// (instance/NAME, replace) that the record marks done before the next starts, so an apply killed
// during a roll resumes with the machines still to roll (a machine killed half-way is found
// terminated, or launched but not joined, and healed as a lost one). For each machine:
//
//	control plane  its target leaves the load balancer (the NLB's target group, or HAProxy's
//	               backends, reloaded gracefully); its node is drained; kubeadm reset (its
//	               stacked etcd member leaves), the member removed if reset could not; its Node
//	               deleted; the machine terminated and launched anew at the same private address;
//	               kubeadm join --control-plane; its Node Ready; its target back and healthy
//	worker         drained, reset, its Node deleted, terminated, launched anew, joined, Ready
//	etcd           its member removed through the others, reset, terminated, launched anew,
//	               added back as a learner and promoted (external etcd)
//	load balancer  terminated, launched anew at the same address, HAProxy configured
//
// and then the cluster is validated before the next machine: every node Ready and the API's
// /readyz answering through the load balancer, twice in a row, and etcd's members all started,
// voting and answering. The private address stays the machine's, so what names machines by
// address (the API servers' etcd endpoints, HAProxy's backends) stays right.
//
// While a control plane, an etcd machine or the load balancer rolls, a prober asks the API's
// /readyz through the load balancer every 200 ms; apply reports how many requests failed and the
// longest time without an answer. A lone control plane cannot keep the API up: its state
// (certificates, kubeconfigs, etcd's data) moves to the new machine, which starts as the same
// member, and the plan says the API is down meanwhile.

// RollReport is what the roll of one machine measured.
type RollReport struct {
	// Key is the machine's resource key (instance/control-plane-1), Role its role.
	Key, Role string
	// Took is the machine's whole roll, leave to validation.
	Took time.Duration
	// Probe is the API prober's count (zero when no prober ran: a worker's roll).
	Probe ProbeReport
}

// ProbeReport counts the prober's requests to the API through the load balancer.
type ProbeReport struct {
	Requests, Failed int
	// LongestGap is the longest time between two answered requests (or from the start, or to
	// the end).
	LongestGap time.Duration
}

func (r ProbeReport) String() string {
	return fmt.Sprintf("%d requests, %d failed, longest gap %s", r.Requests, r.Failed, r.LongestGap.Round(10*time.Millisecond))
}

// Rolls returns the reports of the machines this provider rolled, in order.
func (p *Provider) Rolls() []RollReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.rolls)
}

func (p *Provider) addRoll(r RollReport) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rolls = append(p.rolls, r)
}

// Timings of a roll.
var (
	rollNodeReady   = 4 * time.Minute
	rollValidate    = 5 * time.Minute
	rollProbeEvery  = 200 * time.Millisecond
	rollProbeWait   = 2 * time.Second
	rollTargetReady = 3 * time.Minute
)

// instanceChange launches a machine, or replaces one: a machine that runs is rolled; one that
// does not (stopped, failed) is terminated and launched again, its bootstrap steps being in the
// plan already (they are not done on a machine that does not run).
func (x *exec) instanceChange(ctx context.Context, ch cluster.Change) error {
	if ch.Action != cluster.Replace {
		// A machine lost behind nuv's back, or whose roll an apply cut short between its
		// terminate and its launch, comes back at its address (Observe found it in the record).
		if addr, err := x.ID(addressKey(ch.Key)); err == nil && addr != "" {
			if err := x.waitShutDown(ctx, ch.Key); err != nil {
				return err
			}
			defer x.p.remember(x.Name, addressKey(ch.Key), "")
			return x.relaunch(ctx, ch, addr)
		}
		return x.launchInstance(ctx)
	}
	if ch.Actual != nil && ch.Actual.Broken == "" && ch.Actual.ID != "" {
		return x.roll(ctx, ch)
	}
	if err := x.deleteInstance(ctx, ch); err != nil {
		return err
	}
	x.Res.ID = ""
	return x.launchInstance(ctx)
}

// relaunch launches a lost machine again at its former private address addr, so that what names
// it by address (HAProxy's backends, etcd's peer URLs, the API servers' etcd endpoints, its
// certificates) stays right. When AWS refuses the address (something else has it now), the
// machine is launched at a new one and the bootstrap's steps rewrite what named the old one:
// HAProxy's backends after a control plane's join, the API servers' etcd endpoints after an etcd
// member's; the load-balancer machine's address is the cluster's endpoint, in every kubeconfig
// and certificate, and is not moved.
func (x *exec) relaunch(ctx context.Context, ch cluster.Change, addr string) error {
	x.keepIP = addr
	err := x.launchInstance(ctx)
	x.keepIP = ""
	var taken *addressTakenError
	if !errors.As(err, &taken) {
		return err
	}
	if x.Res.Fields["role"] == RoleLoadBalancer {
		return fmt.Errorf("%s: the load-balancer machine cannot come back at %s, the cluster's endpoint (in every kubeconfig and the API's certificate): %w; free the address and apply again", ch.Key, addr, taken)
	}
	x.p.log().Warnf("%s: %v; launched at a new address instead, and the configurations that named %s (HAProxy's backends, the API servers' etcd endpoints) are rewritten by its bootstrap step", ch.Key, taken, addr)
	return x.launchInstance(ctx)
}

// roll replaces one running machine of the cluster (see the top of this file).
func (x *exec) roll(ctx context.Context, ch cluster.Change) error {
	t0 := time.Now()
	log := x.p.log()
	ik := ch.Key
	role := ch.Actual.Fields["role"]
	bt, err := x.boot(ctx)
	if err != nil {
		return fmt.Errorf("roll %s: %w", ik, err)
	}
	old := bt.machines[ik]
	if old == nil || old.info.id != ch.Actual.ID {
		return fmt.Errorf("roll %s: its machine %s is not running (plan again)", ik, ch.Actual.ID)
	}
	up, err := x.clusterUp(ctx, bt, old)
	if err != nil {
		return fmt.Errorf("roll %s: %w", ik, err)
	}
	if !up {
		return x.replaceUnbooted(ctx, ch, role)
	}
	r := &rolling{ik: ik, role: role, node: nodeName(x.Name, ik), lone: role == RoleControlPlane && len(bt.b.Cluster.ControlPlanes) == 1}
	log.Infof("  roll %s (%s, %s -> %s): one machine at a time", ik, role, ch.Actual.Fields["instanceType"], x.Res.Fields["instanceType"])

	var probe *prober
	if role != RoleWorker {
		kc, err := bt.b.ReadKubeconfig(ctx)
		if err != nil {
			return fmt.Errorf("roll %s: %w", ik, err)
		}
		if probe, err = startProber(ctx, kc); err != nil {
			return fmt.Errorf("roll %s: %w", ik, err)
		}
		defer probe.stop()
	}
	if err := x.rollLeave(ctx, bt, old, r); err != nil {
		return err
	}
	if err := x.rollReplace(ctx, ch, old); err != nil {
		return err
	}
	bt, err = x.boot(ctx)
	if err != nil {
		return fmt.Errorf("roll %s: %w", ik, err)
	}
	m := bt.machines[ik]
	if m == nil {
		return fmt.Errorf("roll %s: the new machine %s is not running", ik, x.Res.ID)
	}
	if err := x.rollJoin(ctx, bt, m, r); err != nil {
		return err
	}

	// Validate before the next machine.
	if err := x.validate(ctx, bt, role != RoleWorker && role != RoleLoadBalancer); err != nil {
		return fmt.Errorf("roll %s: the cluster does not validate after the machine's replacement: %w", ik, err)
	}
	rep := RollReport{Key: ik, Role: role, Took: time.Since(t0)}
	if probe != nil {
		rep.Probe = probe.stop()
		log.Infof("  API probe during the roll of %s: %s", ik, rep.Probe)
	}
	x.p.addRoll(rep)
	log.Infof("  rolled %s in %s", ik, rep.Took.Round(100*time.Millisecond))
	return nil
}

// rolling is one machine's roll in progress.
type rolling struct {
	ik, role, node string
	// lone: the cluster's only control plane, whose state is saved and restored on its
	// replacement (the API is down in between).
	lone bool
	// state is a lone control plane's saved state.
	state []byte
}

// replaceUnbooted replaces the machine of a cluster nothing is bootstrapped on yet: a plain
// replace; the bootstrap's steps follow in the plan.
func (x *exec) replaceUnbooted(ctx context.Context, ch cluster.Change, role string) error {
	x.p.log().Infof("  roll %s: the cluster is not bootstrapped yet: the machine is replaced", ch.Key)
	if err := x.deleteInstance(ctx, ch); err != nil {
		return err
	}
	x.Res.ID = ""
	if err := x.instance(ctx, ch); err != nil {
		return err
	}
	if !carriesPods(role) {
		return nil
	}
	// its check was off on the machine it replaces: the plan does not have it
	if err := x.sourceDestOff(ctx, x.Res.ID); err != nil {
		return err
	}
	return x.record(awsnet.Key(kindSourceDestCheck, x.RName), x.Res.ID)
}

// rollLeave takes the old machine out of the cluster as its role asks: a lone control plane's
// state saved; a control plane out of the load balancer, drained, reset, its etcd member and
// node removed; a worker drained, reset and its node removed; an etcd machine's member removed.
func (x *exec) rollLeave(ctx context.Context, bt *booted, old *sshMachine, r *rolling) error {
	var err error
	switch {
	case r.lone:
		x.p.log().Infof("  roll %s: the only control plane: the API is down until its replacement runs", r.ik)
		if r.state, err = bootstrap.SaveControlPlane(ctx, bt.b, old); err != nil {
			return fmt.Errorf("roll %s: %w", r.ik, err)
		}
		// Kept in nuv's home (0600) until the replacement runs from it: an apply killed in
		// between restores it on its next run instead of making a new cluster (kubeadmInit).
		if err := fsutil.WriteFileAtomic(x.p.controlPlaneStatePath(x.Name), r.state, 0o600); err != nil {
			return fmt.Errorf("roll %s: keep the control plane's state: %w", r.ik, err)
		}
	case r.role == RoleControlPlane || r.role == RoleWorker:
		lastOf(bt, old)
		if r.role == RoleControlPlane {
			if err := x.target(ctx, old.info.id, false); err != nil {
				return err
			}
			if err := bt.b.DrainLoadBalancer(ctx, old.Name()); err != nil {
				return err
			}
		}
		if err := bt.b.Drain(ctx, r.node); err != nil {
			return err
		}
		if err := bt.b.Reset(ctx, old); err != nil {
			return err
		}
		if r.role == RoleControlPlane && len(bt.b.Cluster.Etcd) == 0 {
			if err := bt.b.RemoveEtcdMember(ctx, r.node); err != nil {
				return err
			}
		}
		return bt.b.DeleteNode(ctx, r.node)
	case r.role == RoleEtcd:
		if err := bt.b.RemoveEtcdMember(ctx, r.node); err != nil {
			return err
		}
		return bt.b.Reset(ctx, old)
	}
	return nil
}

// rollReplace replaces the old machine by a new one at the same private address, recorded first
// (an apply killed before the launch launches the machine there on its next run).
func (x *exec) rollReplace(ctx context.Context, ch cluster.Change, old *sshMachine) error {
	held := *ch.Actual
	held.Fields = maps.Clone(held.Fields)
	held.Fields[fieldAddress] = old.info.ip
	if err := x.Save(held); err != nil {
		return err
	}
	if err := x.deleteInstance(ctx, ch); err != nil {
		return err
	}
	x.Res.ID, x.keepIP = "", old.info.ip
	if err := x.instance(ctx, ch); err != nil {
		return err
	}
	x.keepIP = ""
	return nil
}

// rollJoin brings the new machine m into the cluster as its role asks and records the step that
// did it: a lone control plane restored from its state, a control plane or worker joined (and
// Ready, the control plane back in the load balancer), an etcd member added, HAProxy configured;
// a machine that carries pods gets its pod network.
func (x *exec) rollJoin(ctx context.Context, bt *booted, m *sshMachine, r *rolling) error {
	step := ""
	switch {
	case r.lone:
		if err := x.restoreControlPlane(ctx, bt, m, r.state); err != nil {
			return fmt.Errorf("roll %s: %w", r.ik, err)
		}
		if err := x.target(ctx, m.info.id, true); err != nil {
			return err
		}
		step = awsnet.Key(kindKubeadmJoin, x.RName)
		if err := x.record(awsnet.Key(kindKubeadmInit, "control-plane-0"), m.info.id); err != nil {
			return err
		}
	case r.role == RoleControlPlane || r.role == RoleWorker:
		lastOf(bt, m)
		var err error
		if r.role == RoleControlPlane {
			err = bt.b.JoinControlPlane(ctx, m)
		} else {
			err = bt.b.JoinWorker(ctx, m)
		}
		if err != nil {
			return err
		}
		if err := bt.b.WaitNodeReady(ctx, r.node, rollNodeReady); err != nil {
			return err
		}
		if r.role == RoleControlPlane {
			if err := x.target(ctx, m.info.id, true); err != nil {
				return err
			}
			if err := bt.b.LoadBalancer(ctx); err != nil {
				return err
			}
		}
		step = awsnet.Key(kindKubeadmJoin, x.RName)
	case r.role == RoleEtcd:
		i := slices.IndexFunc(bt.b.Cluster.Etcd, func(e bootstrap.Machine) bool { return e.Name() == m.Name() })
		if err := bt.b.EtcdMember(ctx, i); err != nil {
			return err
		}
		step = awsnet.Key(kindEtcdMember, x.RName)
	case r.role == RoleLoadBalancer:
		if err := bt.b.LoadBalancer(ctx); err != nil {
			return err
		}
		step = awsnet.Key(kindHAProxy, x.RName)
	}
	if step != "" {
		if err := x.record(step, m.info.id); err != nil {
			return err
		}
	}
	if r.role == RoleControlPlane || r.role == RoleWorker {
		// the new machine takes its node's pods: check off, the route to it
		if err := x.rollPodNet(ctx, bt, r.ik, m); err != nil {
			return fmt.Errorf("roll %s: %w", r.ik, err)
		}
	}
	return nil
}

// controlPlaneStatePath is where a lone control plane's state waits for its replacement (nuv's
// home, 0600, beside the cluster's SSH key).
func (p *Provider) controlPlaneStatePath(name string) string {
	return filepath.Join(filepath.Dir(p.sshKeyPath(name)), "control-plane-state.tgz")
}

// restoreControlPlane starts the lone control plane m from the state its predecessor left, waits
// for its Node Ready, and forgets the state.
func (x *exec) restoreControlPlane(ctx context.Context, bt *booted, m *sshMachine, state []byte) error {
	if err := bootstrap.RestoreControlPlane(ctx, bt.b, m, state); err != nil {
		return err
	}
	if err := bt.b.WaitNodeReady(ctx, m.Name(), rollNodeReady); err != nil {
		return err
	}
	if err := os.Remove(x.p.controlPlaneStatePath(x.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the control plane's state: %w", err)
	}
	return nil
}

// clusterUp says whether the cluster has been bootstrapped: a control plane other than the
// leaving machine holds the admin kubeconfig (a lone control plane: the machine itself).
func (x *exec) clusterUp(ctx context.Context, bt *booted, leaving *sshMachine) (bool, error) {
	cps := bt.b.Cluster.ControlPlanes
	for _, m := range cps {
		if m.Name() == leaving.Name() && len(cps) > 1 {
			continue
		}
		out, err := m.Run(ctx, "[ -e "+bootstrap.AdminConf+" ] && echo yes || echo no\n", nil)
		if err != nil {
			return false, err
		}
		return strings.TrimSpace(string(out)) == "yes", nil
	}
	return false, nil
}

// lastOf moves machine m to the end of the control planes, so that the steps run through another
// one (the first holds the admin kubeconfig the steps use and makes the join secrets).
func lastOf(bt *booted, m *sshMachine) {
	cps := bt.b.Cluster.ControlPlanes
	i := slices.IndexFunc(cps, func(c bootstrap.Machine) bool { return c.Name() == m.Name() })
	if i < 0 || len(cps) < 2 {
		return
	}
	bt.b.Cluster.ControlPlanes = append(slices.Delete(slices.Clone(cps), i, i+1), m)
}

// record saves bootstrap step k (its desired form) as done on instance id: a rolled machine's join
// is part of its roll.
func (x *exec) record(k, id string) error {
	for _, r := range machinesDesired(x.C, x.m) {
		if r.Key() == k {
			r.ID = id
			x.p.remember(x.Name, k, id)
			return x.Save(r)
		}
	}
	return nil
}

// target takes a control plane out of the API's Network Load Balancer (its target deregistered:
// the balancer stops sending it new connections) or puts it back and waits until the balancer
// finds it healthy. Nothing to do with an HAProxy machine.
func (x *exec) target(ctx context.Context, id string, add bool) error {
	if x.m.sec.LoadBalancer.Type != LBNetwork {
		return nil
	}
	tgk := awsnet.Key(kindTargetGroup, x.Name+"-api")
	arn, err := x.ID(tgk)
	if err != nil {
		return err
	}
	td := []elbtypes.TargetDescription{{Id: aws.String(id), Port: aws.Int32(portAPI)}}
	if !add {
		_, err := x.s.elb.DeregisterTargets(ctx, &elb.DeregisterTargetsInput{TargetGroupArn: aws.String(arn), Targets: td})
		if err != nil && !awsnet.NotFound(err) {
			return x.Fail("elasticloadbalancing:DeregisterTargets", tgk, err)
		}
		return nil
	}
	if _, err := x.s.elb.RegisterTargets(ctx, &elb.RegisterTargetsInput{TargetGroupArn: aws.String(arn), Targets: td}); err != nil {
		return x.Fail("elasticloadbalancing:RegisterTargets", tgk, err)
	}
	g := x.p.progress(tgk + " target " + id)
	delay := max(x.s.Poll, time.Second)
	for deadline := time.Now().Add(rollTargetReady); ; {
		out, err := x.s.elb.DescribeTargetHealth(ctx, &elb.DescribeTargetHealthInput{TargetGroupArn: aws.String(arn), Targets: td})
		if err != nil {
			return x.Fail("elasticloadbalancing:DescribeTargetHealth", tgk, err)
		}
		st := "unknown"
		for _, d := range out.TargetHealthDescriptions {
			if d.TargetHealth != nil {
				st = string(d.TargetHealth.State)
			}
		}
		g.Status(st)
		if st == string(elbtypes.TargetHealthStateEnumHealthy) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: target %s is %s after %s", tgk, id, st, rollTargetReady)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

// validate waits until the cluster validates twice in a row: every node Ready and /readyz
// answering through the load balancer and, with etcd, every member started, voting and
// answering.
func (x *exec) validate(ctx context.Context, bt *booted, etcd bool) error {
	kc, err := bt.b.ReadKubeconfig(ctx)
	if err != nil {
		return err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return fmt.Errorf("the admin kubeconfig: %w", err)
	}
	cfg.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	check := func() error {
		if _, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
			return fmt.Errorf("the API's /readyz through the load balancer: %w", err)
		}
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list nodes through the load balancer: %w", err)
		}
		var notReady []string
		for _, n := range nodes.Items {
			ready := false
			for _, c := range n.Status.Conditions {
				ready = ready || c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
			}
			if !ready {
				notReady = append(notReady, n.Name)
			}
		}
		if len(notReady) > 0 {
			return fmt.Errorf("node(s) not Ready: %s", strings.Join(notReady, ", "))
		}
		if etcd {
			return bt.b.EtcdHealthy(ctx)
		}
		return nil
	}
	g := x.p.progress("validation of cluster " + x.Name)
	passed := 0
	var last error
	for deadline := time.Now().Add(rollValidate); ; {
		if last = check(); last == nil {
			passed++
			if passed == 2 {
				return nil
			}
			g.Status("passed once")
		} else {
			passed = 0
			g.Status(last.Error())
		}
		if time.Now().After(deadline) {
			return last
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// prober asks the API's /readyz through the load balancer every rollProbeEvery.
type prober struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	rep    ProbeReport
}

func startProber(ctx context.Context, kubeconfig []byte) (*prober, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("the prober's kubeconfig: %w", err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("the prober's client: %w", err)
	}
	url := strings.TrimRight(cfg.Host, "/") + "/readyz"
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pr := &prober{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(pr.done)
		start := time.Now()
		lastOK := start
		tick := time.NewTicker(rollProbeEvery)
		defer tick.Stop()
		for {
			ok := probeOnce(ctx, hc, url)
			if ctx.Err() != nil {
				break
			}
			now := time.Now()
			pr.rep.Requests++
			if ok {
				pr.rep.LongestGap = max(pr.rep.LongestGap, now.Sub(lastOK))
				lastOK = now
			} else {
				pr.rep.Failed++
			}
			select {
			case <-ctx.Done():
			case <-tick.C:
				continue
			}
			break
		}
		pr.rep.LongestGap = max(pr.rep.LongestGap, time.Since(lastOK))
	}()
	return pr, nil
}

func probeOnce(ctx context.Context, hc *http.Client, url string) bool {
	rctx, cancel := context.WithTimeout(ctx, rollProbeWait)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// stop ends the probe and returns its count (the first count on later calls).
func (pr *prober) stop() ProbeReport {
	pr.once.Do(func() {
		pr.cancel()
		<-pr.done
	})
	return pr.rep
}

// Preflight annotates the plan of a self-managed cluster: each replacement of a running machine
// says it is a rolling one, its place in its group's roll and what it does, and what the API
// cannot keep meanwhile (a lone control plane, the HAProxy machine). It refuses nothing.
func (p *Provider) Preflight(_ context.Context, c *spec.Cluster, plan *cluster.Plan) error {
	annotateRolls(c, plan)
	return nil
}

// annotateRolls sets the Reason of every rolling replacement of plan (a pure function of the
// spec and the plan: the golden tests check it).
func annotateRolls(c *spec.Cluster, plan *cluster.Plan) {
	group := func(ch cluster.Change) string {
		role := ch.Actual.Fields["role"]
		if role != RoleWorker {
			return role
		}
		_, n, _ := strings.Cut(ch.Key, "/")
		if i := strings.LastIndex(n, "-"); i > 0 {
			n = n[:i]
		}
		return "node group " + n
	}
	rolling := func(ch cluster.Change) bool {
		return ch.Action == cluster.Replace && cluster.KindOf(ch.Key) == kindInstance && ch.Actual != nil && ch.Actual.Broken == "" && ch.Actual.ID != ""
	}
	total := map[string]int{}
	for _, ch := range plan.Changes {
		if rolling(ch) {
			total[group(ch)]++
		}
	}
	sec := Key.Get(c).withDefaults()
	cps := max(c.Spec.ControlPlane.Count, 1)
	seen := map[string]int{}
	for i, ch := range plan.Changes {
		if ch.Action == cluster.Delete && cluster.KindOf(ch.Key) == kindKubeadmJoin {
			// (a plan that deletes the whole cluster is not annotated: it drains nothing)
			plan.Changes[i].Reason = "the machine leaves a cluster that stays: its node is drained (its pods move), kubeadm reset, its etcd member removed (a control plane) and its Node deleted before its instance is terminated"
		}
		if ch.Action == cluster.Delete && cluster.KindOf(ch.Key) == kindPodRoute {
			plan.Changes[i].Reason = "its node is drained first (its pods move while their traffic still reaches them), then the route of its pod range goes"
		}
		if !rolling(ch) {
			continue
		}
		g := group(ch)
		seen[g]++
		var what string
		switch ch.Actual.Fields["role"] {
		case RoleControlPlane:
			if cps == 1 {
				what = "the only control plane: the API is DOWN while it is replaced (its certificates and etcd's data move to the new machine); stop it, terminate, launch anew at the same address, start it, wait for its Node Ready, validate"
				break
			}
			etcd := ", remove its etcd member"
			if sec.Etcd.Placement == EtcdExternal {
				etcd = ""
			}
			out := "take it out of the load balancer, "
			if sec.LoadBalancer.Type != LBNetwork {
				out = "" // HAProxy's checks take it out
			}
			what = out + "drain its node" + etcd + ", kubeadm reset, delete the Node, terminate; launch anew at the same address, kubeadm join, wait for its Node Ready, put it back in; validate (nodes Ready, API through the load balancer, etcd healthy); the API is probed meanwhile"
		case RoleWorker:
			what = "drain its node, kubeadm reset, delete the Node, terminate; launch anew at the same address, kubeadm join, wait for its Node Ready; validate (nodes Ready, API through the load balancer)"
		case RoleEtcd:
			what = "remove its etcd member, reset, terminate; launch anew at the same address, add it back as a learner and promote it; validate (etcd healthy, nodes Ready); the API is probed meanwhile"
		case RoleLoadBalancer:
			what = "the only load balancer: the API is UNREACHABLE while it is replaced; terminate, launch anew at the same address, configure HAProxy; validate"
		}
		plan.Changes[i].Reason = fmt.Sprintf("rolling replacement %d of %d (%s), one machine at a time, the next only once this one validates: %s", seen[g], total[g], g, what)
	}
}

// waitShutDown waits until the machines of key that are shutting down are terminated: their
// address is free then.
func (x *exec) waitShutDown(ctx context.Context, k string) error {
	out, err := x.s.EC2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: append(awsnet.TagFilter(x.Name),
		ec2types.Filter{Name: aws.String("tag:" + awsnet.TagResource), Values: []string{k}},
		ec2types.Filter{Name: aws.String("instance-state-name"), Values: []string{string(ec2types.InstanceStateNameShuttingDown)}})})
	if err != nil {
		return x.Fail("ec2:DescribeInstances", k, err)
	}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			if err := x.p.waitInstance(ctx, x.s, k, aws.ToString(in.InstanceId), false); err != nil {
				return err
			}
		}
	}
	return nil
}

// fieldAddress is the private address of a machine being rolled, in its record between its
// terminate and the launch of its replacement.
const fieldAddress = "rollingAddress"

// addressKey is where Observe leaves a rolled machine's address for its launch (with the ids).
func addressKey(instanceKey string) string { return "address:" + instanceKey }

// optional is s for an optional API parameter: nil when empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

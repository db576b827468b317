package kind

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kind/pkg/apis/config/defaults"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/lazy"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

// kind's default networks (the values a spec without networking gets).
const (
	DefaultPodCIDR     = "10.244.0.0/16"
	DefaultServiceCIDR = "10.96.0.0/16"
)

// fields that only a replacement of the cluster can change.
var replaceFields = []string{"version", "image", "controlPlanes", "workers", "labels", "taints", "podCIDR", "serviceCIDR", "kubeProxyMode", "ports"}

// recordedFields are the fields Observe takes from the state record rather than from the cluster
// (what nuv configured and kind does not show back cheaply).
var recordedFields = []string{"image", "podCIDR", "serviceCIDR", "kubeProxyMode", "ports"}

var validName = lazy.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Validate checks what a kind cluster can be.
func (p *Provider) Validate(c *spec.Cluster) []spec.FieldError {
	var errs []spec.FieldError
	s := &c.Spec
	// kind names containers <name>-control-plane2, <name>-worker12: keep the cluster name short
	// enough for a DNS label.
	if n := c.Metadata.Name; len(n) > 40 || !validName.MatchString(n) {
		errs = append(errs, spec.Errorf("metadata.name", "%q: a kind cluster name is lower-case letters, digits and '-', at most 40 characters", n))
	}
	if s.Region != "" {
		errs = append(errs, spec.Errorf("spec.region", "kind clusters have no region"))
	}
	if len(s.Zones) > 0 {
		errs = append(errs, spec.Errorf("spec.zones", "kind clusters have no zones"))
	}
	if len(s.Tags) > 0 {
		errs = append(errs, spec.Errorf("spec.tags", "kind clusters have no cloud resources to tag"))
	}
	if s.Networking.VPCCIDR != "" {
		errs = append(errs, spec.Errorf("spec.networking.vpcCIDR", "kind clusters have no VPC"))
	}
	if s.KubernetesVersion != "" {
		if v, _ := spec.NormalVersion(s.KubernetesVersion); v != "" && !strings.HasPrefix(v, "1.") {
			errs = append(errs, spec.Errorf("spec.kubernetesVersion", "%q: kind runs Kubernetes 1.x", s.KubernetesVersion))
		}
	}
	total := s.ControlPlane.Count
	for i, g := range s.NodeGroups {
		path := "spec.nodeGroups[" + strconv.Itoa(i) + "]"
		if g.Manager == "karpenter" {
			errs = append(errs, spec.Errorf(path+".manager", "kind clusters have no Karpenter (its nodes come from a cloud); leave manager out"))
		}
		if g.Count == nil && (g.Min != nil || g.Max != nil) {
			errs = append(errs, spec.Errorf(path+".count", "required: kind clusters have no autoscaler, so min and max alone do not size a group"))
		}
		if g.InstanceType != "" {
			errs = append(errs, spec.Errorf(path+".instanceType", "kind nodes are containers of this machine; they have no instance type"))
		}
		if g.Spot {
			errs = append(errs, spec.Errorf(path+".spot", "kind nodes are containers of this machine; they are never spot"))
		}
		if g.Name == ControlPlaneGroup {
			errs = append(errs, spec.Errorf(path+".name", "%q names kind's control-plane nodes; call the group something else", g.Name))
		}
		total += g.Size()
	}
	if total > 20 {
		errs = append(errs, spec.Errorf("spec.nodeGroups", "%d nodes in all: a kind cluster on one machine has at most 20", total))
	}
	k, serrs := Key.Decode(c)
	errs = append(errs, serrs...)
	if k != nil {
		switch k.KubeProxyMode {
		case "", "iptables", "nftables", "ipvs", "none":
		default:
			errs = append(errs, spec.Errorf("spec.kind.kubeProxyMode", "%q: want nftables, iptables, ipvs or none", k.KubeProxyMode))
		}
		for i, pm := range k.Ports {
			path := "spec.kind.ports[" + strconv.Itoa(i) + "]"
			if pm.ContainerPort < 1 || pm.ContainerPort > 65535 {
				errs = append(errs, spec.Errorf(path+".containerPort", "%d: want a port between 1 and 65535", pm.ContainerPort))
			}
			if pm.HostPort < 0 || pm.HostPort > 65535 {
				errs = append(errs, spec.Errorf(path+".hostPort", "%d: want a port between 1 and 65535", pm.HostPort))
			}
			switch strings.ToUpper(pm.Protocol) {
			case "", "TCP", "UDP", "SCTP":
			default:
				errs = append(errs, spec.Errorf(path+".protocol", "%q: want TCP, UDP or SCTP", pm.Protocol))
			}
		}
	}
	errs = append(errs, c.CheckSections()...)
	slices.SortFunc(errs, func(a, b spec.FieldError) int { return strings.Compare(a.Path, b.Path) })
	return errs
}

// desiredVersion is the version the spec asks for: its kubernetesVersion, else DefaultVersion
// unless it names an image (then whatever the image has: "").
func desiredVersion(c *spec.Cluster) string {
	if v, ok := spec.NormalVersion(c.Spec.KubernetesVersion); ok {
		return v
	}
	if Key.Get(c).Image != "" {
		return ""
	}
	return DefaultVersion
}

func specImage(c *spec.Cluster) string {
	return Key.Get(c).Image
}

// Desired lists the kind cluster and, if asked, the registry advertisement.
func (p *Provider) Desired(c *spec.Cluster) ([]cluster.Resource, error) {
	kc := cluster.Resource{Kind: kindCluster, Name: c.Metadata.Name, Fields: desiredFields(c), Replace: replaceFields}
	out := []cluster.Resource{kc}
	if c.Spec.Registry {
		out = append(out, registryDesired(kc.Key()))
	}
	return out, nil
}

func desiredFields(c *spec.Cluster) map[string]string {
	cps := c.Spec.ControlPlane.Count
	if cps == 0 {
		cps = 1
	}
	groups := map[string]int{}
	labels := map[string]map[string]string{}
	taints := map[string][]string{}
	for _, g := range c.Spec.NodeGroups {
		groups[g.Name] = g.Size()
		if g.Size() > 0 {
			labels[g.Name] = g.Labels
			taints[g.Name] = g.Taints
		}
	}
	var ports []string
	for _, pm := range Key.Get(c).Ports {
		m := portMapping(pm)
		ports = append(ports, fmt.Sprintf("%s:%d->%d/%s", m.ListenAddress, m.HostPort, m.ContainerPort, m.Protocol))
	}
	return map[string]string{
		"version":       desiredVersion(c),
		"image":         specImage(c),
		"controlPlanes": strconv.Itoa(cps),
		"workers":       groupCounts(groups),
		"labels":        groupLabels(labels),
		"taints":        groupTaints(taints),
		"podCIDR":       orDefault(c.Spec.Networking.PodCIDR, DefaultPodCIDR),
		"serviceCIDR":   orDefault(c.Spec.Networking.ServiceCIDR, DefaultServiceCIDR),
		"kubeProxyMode": kubeProxyMode(c),
		"ports":         strings.Join(ports, ","),
		"running":       "true",
	}
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// groupCounts is "a=2,b=1" (groups sorted; empty groups left out: they have no nodes to show).
func groupCounts(g map[string]int) string {
	var out []string
	for _, k := range sortedKeys(g) {
		if g[k] > 0 {
			out = append(out, k+"="+strconv.Itoa(g[k]))
		}
	}
	return strings.Join(out, ",")
}

// groupLabels is "a: k=v,k2=v2; b: k=v" for the groups that have labels.
func groupLabels(l map[string]map[string]string) string {
	var out []string
	for _, g := range sortedKeys(l) {
		if len(l[g]) == 0 {
			continue
		}
		var kv []string
		for _, k := range sortedKeys(l[g]) {
			kv = append(kv, k+"="+l[g][k])
		}
		out = append(out, g+": "+strings.Join(kv, ","))
	}
	return strings.Join(out, "; ")
}

func groupTaints(t map[string][]string) string {
	var out []string
	for _, g := range sortedKeys(t) {
		if len(t[g]) == 0 {
			continue
		}
		ts := slices.Clone(t[g])
		slices.Sort(ts)
		out = append(out, g+": "+strings.Join(ts, ","))
	}
	return strings.Join(out, "; ")
}

// systemLabel reports labels Kubernetes and kind put on nodes (not a node group's own).
func systemLabel(k string) bool {
	for _, p := range []string{"kubernetes.io/", "beta.kubernetes.io/", "node-role.kubernetes.io/", "node.kubernetes.io/", "nuv.dev/"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// Observe finds the kind cluster of the spec's name: its node containers through the runtime,
// its nodes (counts per group, labels, taints, version) through its API server; what kind does
// not show back (image, networks, proxy mode, ports) is what nuv recorded when it made it. A kind
// cluster of that name whose nodes lack nuv's labels, and that nuv has no record of, is Foreign.
func (p *Provider) Observe(ctx context.Context, c *spec.Cluster, recorded []cluster.Resource) ([]cluster.Resource, error) {
	name := c.Metadata.Name
	key := kindCluster + "/" + name
	var rec *cluster.Resource
	for i := range recorded {
		if recorded[i].Key() == key {
			rec = &recorded[i]
		}
	}
	rt, err := p.runtime(ctx)
	if err != nil {
		if rec == nil {
			return nil, nil // no runtime, no record: nothing of it can exist here
		}
		return nil, fmt.Errorf("kind cluster %s is recorded: %w", name, err)
	}
	cs, err := p.containers(ctx, rt, name)
	if err != nil {
		return nil, err
	}
	id := "kind://" + rt.Name + "/" + name
	if len(cs) == 0 {
		if rec != nil {
			if left := p.leftovers(name); len(left) > 0 {
				// nuv's own files of a cluster whose containers are gone: a delete killed after kind
				// removed the nodes (or containers removed by hand). Delete finishes the job; apply
				// replaces it (removing them, then creating).
				return []cluster.Resource{{Kind: kindCluster, Name: name, ID: id, Fields: map[string]string{"running": "gone"},
					Broken: "its node containers are gone (a delete that did not finish, or removed outside nuv) but nuv's " + strings.Join(left, " and ") + " remain: they are removed and the cluster made again"}}, nil
			}
		}
		return nil, nil
	}
	allRunning := true
	for _, n := range cs {
		allRunning = allRunning && n.Running
	}
	var nodes []corev1.Node
	var liveErr error
	if allRunning {
		cfg, err := p.restConfig(rt, name)
		if err == nil {
			nodes, err = nodesOf(ctx, cfg)
		}
		liveErr = err
	}
	live := allRunning && liveErr == nil
	// nuv's clusters are those this nuv (its NUV_HOME) recorded or marked: a kind cluster made by
	// a nuv of another home, though labelled, is as foreign as one made with kind itself (unless gc
	// adopted it by its owner label, below).
	// A cluster gc adopted by its labels (its record and this home's mark lost) is nuv's when its
	// nodes name the owner Adopt read (c.Marks.Owner).
	if owned := rec != nil || p.marked(ctx, rt, name) || (live && ownedByLabel(nodes, name, c.Marks.Owner)); !owned {
		return []cluster.Resource{{Kind: kindCluster, Name: name, ID: id, Foreign: true, Fields: map[string]string{"containers": strconv.Itoa(len(cs))}}}, nil
	}
	f := observedFields(c, rec, nodes, live, allRunning)
	broken := ""
	// A create killed after kind finished and nuv marked the cluster and wrote its kubeconfig,
	// before the record said so, made a whole cluster: it is kept, not made again.
	_, kcErr := os.Stat(p.KubeconfigPath(name))
	finished := live && kcErr == nil && p.marked(ctx, rt, name)
	if rec != nil && rec.Fields["running"] == "creating" && !finished {
		// A create that did not finish (nuv killed while kind made the nodes or ran kubeadm, or
		// before it saw the nodes Ready): what kind did not do (kubeadm's phases, the CNI, the
		// storage class, joining the workers) cannot be told from outside, so only a replacement
		// mends it.
		f["running"] = "incomplete"
		var names []string
		for _, n := range cs {
			names = append(names, n.Name)
		}
		broken = fmt.Sprintf("its create did not finish (nuv was interrupted before the cluster was Ready; node container(s) %s exist, kubeadm and kind's later steps may not have run): they are deleted and the cluster made again", strings.Join(names, ", "))
	}
	out := []cluster.Resource{{Kind: kindCluster, Name: name, ID: id, Fields: f, Broken: broken}}
	var cfg *rest.Config
	if live {
		cfg, _ = p.restConfig(rt, name)
	}
	if r, err := p.observeRegistry(ctx, rt, name, cs, cfg, key); err != nil {
		return nil, err
	} else if r != nil {
		out = append(out, *r)
	}
	return out, nil
}

// observedFields are the fields of nuv's kind cluster: what nuv recorded when it made it (what
// the spec says, for a cluster whose record was removed), with its nodes as its API shows them
// when it is live, and whether it runs.
func observedFields(c *spec.Cluster, rec *cluster.Resource, nodes []corev1.Node, live, allRunning bool) map[string]string {
	f := map[string]string{}
	if rec != nil {
		for k, v := range rec.Fields {
			f[k] = v
		}
	} else {
		// nuv's own cluster without a record (the record was removed): assume what the spec says
		// for what cannot be observed.
		for _, k := range recordedFields {
			f[k] = desiredFields(c)[k]
		}
	}
	switch {
	case live:
		f["running"] = "true"
		for k, v := range observedNodeFields(nodes, desiredVersion(c)) {
			f[k] = v
		}
	case !allRunning:
		f["running"] = "stopped"
	default:
		f["running"] = "unreachable"
	}
	return f
}

func ownedNodes(nodes []corev1.Node, name string) bool {
	for _, n := range nodes {
		if n.Labels[LabelCluster] == name && n.Labels[LabelProvider] == "kind" {
			return true
		}
	}
	return false
}

// observedNodeFields computes the node fields from the cluster's nodes; the version is shown as
// the spec wrote it when it matches (1.36 for 1.36.3).
func observedNodeFields(nodes []corev1.Node, want string) map[string]string {
	cps := 0
	groups := map[string]int{}
	labels := map[string]map[string]string{}
	taints := map[string][]string{}
	version := ""
	for _, n := range nodes {
		version = strings.TrimPrefix(n.Status.NodeInfo.KubeletVersion, "v")
		if _, ok := n.Labels["node-role.kubernetes.io/control-plane"]; ok {
			cps++
			continue
		}
		g := n.Labels[LabelNodeGroup]
		if g == "" {
			g = "(unlabelled)"
		}
		groups[g]++
		if _, seen := labels[g]; seen {
			continue
		}
		l := map[string]string{}
		for k, v := range n.Labels {
			if !systemLabel(k) {
				l[k] = v
			}
		}
		labels[g] = l
		var ts []string
		for _, t := range n.Spec.Taints {
			if strings.HasPrefix(t.Key, "node.kubernetes.io/") || strings.HasPrefix(t.Key, "node.cloudprovider.kubernetes.io/") {
				continue // conditions the node lifecycle sets, not the group's own
			}
			s := t.Key
			if t.Value != "" {
				s += "=" + t.Value
			}
			ts = append(ts, s+":"+string(t.Effect))
		}
		taints[g] = ts
	}
	if want != "" && (version == want || strings.HasPrefix(version, want+".")) {
		version = want
	}
	return map[string]string{
		"version":       version,
		"controlPlanes": strconv.Itoa(cps),
		"workers":       groupCounts(groups),
		"labels":        groupLabels(labels),
		"taints":        groupTaints(taints),
	}
}

// Execute carries out one change.
func (p *Provider) Execute(ctx context.Context, c *spec.Cluster, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	name := c.Metadata.Name
	kind, _, _ := strings.Cut(ch.Key, "/")
	switch kind {
	case kindCluster:
		switch ch.Action {
		case cluster.Create:
			return p.create(ctx, c, save)
		case cluster.Replace:
			if err := p.deleteCluster(ctx, name); err != nil {
				return nil, err
			}
			return p.create(ctx, c, save)
		case cluster.Update: // only "running" changes in place
			if err := p.Start(ctx, name); err != nil {
				return nil, err
			}
			return p.observed(ctx, c, ch.Key)
		case cluster.Delete:
			return nil, p.deleteCluster(ctx, name)
		}
	case kindRegistry:
		return p.executeRegistry(ctx, c, ch)
	}
	return nil, fmt.Errorf("kind provider: cannot %s %s", ch.Action, ch.Key)
}

// observed returns the resource key as Observe now sees it.
func (p *Provider) observed(ctx context.Context, c *spec.Cluster, key string, recorded ...cluster.Resource) (*cluster.Resource, error) {
	return kit.Observed(ctx, p.Observe, c, key, recorded...)
}

// create makes the kind cluster: the node image (refused when its Kubernetes version is not the
// spec's, before anything is made), the configuration, kind's create, the kubeconfig, nodes Ready.
// interruptGrace is how long an interrupted create waits for kind's step in flight before
// returning (kind's create cannot be cancelled).
const interruptGrace = 3 * time.Second

func (p *Provider) create(ctx context.Context, c *spec.Cluster, save func(cluster.Resource) error) (*cluster.Resource, error) {
	name := c.Metadata.Name
	start := time.Now()
	clock := &phaseClock{}
	rt, err := p.runtime(ctx)
	if err != nil {
		return nil, err
	}
	if cs, err := p.containers(ctx, rt, name); err != nil {
		return nil, err
	} else if len(cs) > 0 {
		return nil, fmt.Errorf("create kind cluster %s: %w (its containers exist; `nuv cluster delete %s` removes them if nuv made them)", name, cluster.ErrExists, name)
	}
	if err := p.checkLoadBalancerImage(ctx, rt, c); err != nil {
		return nil, err
	}
	image, err := p.nodeImage(ctx, rt, c)
	if err != nil {
		return nil, err
	}
	t := clock.since("node image", start)
	cfg, err := Config(ConfigInput{Spec: c, Image: image, Host: DetectHost()})
	if err != nil {
		return nil, err
	}
	res := cluster.Resource{Kind: kindCluster, Name: name, ID: "kind://" + rt.Name + "/" + name, Replace: replaceFields, Fields: map[string]string{"running": "creating"}}
	for _, k := range recordedFields {
		res.Fields[k] = desiredFields(c)[k]
	}
	if err := save(res); err != nil {
		return nil, err
	}
	if rt.Name == "podman" {
		p.log().Warnf("kind: %s (creating %s on podman)", podmanNotice, name)
	}
	tmp, err := p.scratch(name)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	p.log().Infof("creating kind cluster %s (%d node(s), image %s, %s %s)", name, len(cfg.Nodes), image, rt.Name, rt.Version)
	if err := p.runKind(ctx, rt, clock, name, cfg, tmp); err != nil {
		return nil, err
	}
	var steps time.Duration
	for _, ph := range clock.Phases() {
		if strings.HasPrefix(ph.Name, "kind: ") {
			steps += ph.Duration
		}
	}
	now := time.Now()
	clock.record(Phase{Name: "kind: the rest (checks, network, kubeconfig)", Duration: now.Sub(t) - steps})
	t = now
	if err := p.mark(ctx, rt, name); err != nil {
		return nil, err
	}
	kc, err := p.writeKubeconfig(rt, name)
	if err != nil {
		return nil, err
	}
	t = clock.since("mark and kubeconfig", t)
	nodesReady, err := p.waitReadyTimed(ctx, rt, name, len(cfg.Nodes), 5*time.Minute)
	if err != nil {
		return nil, err
	}
	clock.add("nodes Ready", nodesReady.Sub(t))
	t = clock.since("default ServiceAccount", nodesReady)
	res.Fields["running"] = "true"
	r, err := p.observed(ctx, c, res.Key(), res)
	if err != nil {
		return nil, err
	}
	clock.since("observe", t)
	// how long the control-plane node took to boot (from its log; it overlaps kind's steps)
	if logs, err := rt.Output(ctx, "logs", "-t", name+"-control-plane"); err == nil {
		for _, ph := range entrypointPhases(name+"-control-plane", logs) {
			clock.record(ph)
		}
	}
	p.Phases = clock.Phases()
	p.log().Infof("kind cluster %s ready in %.1fs: %d node(s) Ready, kubeconfig %s", name, time.Since(start).Seconds(), len(cfg.Nodes), kc)
	p.log().Infof("kind cluster %s create phases: %s", name, FormatPhases(p.Phases))
	return r, nil
}

// runKind runs kind's create of cluster name from cfg (its kubeconfig into dir tmp), holding
// kind's network against another nuv's delete meanwhile. Interrupted, it gives kind a moment and
// returns ctx's error (kind's create takes no context); failed, it removes kind's network when
// nothing else uses it.
func (p *Provider) runKind(ctx context.Context, rt containerrt.Runtime, clock *phaseClock, name string, cfg *v1alpha4.Cluster, tmp string) error {
	// kind's network must not be removed by another nuv's delete while this create joins it
	unlock, err := flock(p.networkLock(), syscall.LOCK_SH)
	if err != nil {
		return fmt.Errorf("create kind cluster %s: %w", name, err)
	}
	done := make(chan error, 1)
	go func() {
		err := p.kindTimed(rt, clock).Create(name, kindcluster.CreateWithV1Alpha4Config(cfg),
			kindcluster.CreateWithKubeconfigPath(tmp+"/kubeconfig"),
			kindcluster.CreateWithDisplayUsage(false), kindcluster.CreateWithDisplaySalutation(false))
		unlock() // before the result: a failed create's removal of the idle network below
		done <- err
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		// kind's create takes no context and can go on for minutes (kubeadm init, joins): give it
		// a moment, then return. The record says "creating", so the next apply finds the node
		// containers kind made so far as an incomplete cluster and replaces them; delete removes
		// them.
		p.log().Infof("interrupted: stopping kind's create of %s (the record says it is incomplete: the next apply makes it again, `nuv cluster delete %s` removes it)", name, name)
		select {
		case <-done:
		case <-time.After(interruptGrace):
		}
		return ctx.Err()
	}
	if err != nil {
		// kind removed the nodes it made; the network it made for them is nuv's to remove when idle
		p.removeIdleNetwork(context.WithoutCancel(ctx), rt)
		return fmt.Errorf("kind create cluster %s: %w%s", name, err, createDetail(rt, err, DetectHost()))
	}
	return nil
}

// nodeImage resolves the spec's node image and checks its Kubernetes version against the spec's.
func (p *Provider) nodeImage(ctx context.Context, rt containerrt.Runtime, c *spec.Cluster) (string, error) {
	want := desiredVersion(c)
	image := specImage(c)
	source := "spec.kind.image"
	if image == "" {
		image, source = p.getenv("NUV_KIND_NODE_IMAGE"), "NUV_KIND_NODE_IMAGE"
	}
	if image == "" && p.NodeImage != nil {
		img, err := p.NodeImage(ctx, fullVersion(want), rt.Path)
		if err != nil {
			return "", fmt.Errorf("node image for Kubernetes %s: %w", want, err)
		}
		image, source = img, "nuv's node image"
	}
	if image == "" {
		image, source = defaults.Image, "kind's default node image"
	}
	labels, err := rt.Output(ctx, "image", "inspect", "--format", nodeImageLabels, image)
	if err != nil {
		p.log().Infof("pulling node image %s (%s)", image, source)
		if _, err := rt.Output(ctx, "pull", image); err != nil {
			return "", fmt.Errorf("node image %s (%s) is not on this machine and cannot be pulled: %w", image, source, err)
		}
		labels, _ = rt.Output(ctx, "image", "inspect", "--format", nodeImageLabels, image)
	}
	have, err := labelVersion(labels)
	if have == "" {
		have, err = imageVersion(ctx, rt, image)
	}
	if err != nil {
		return "", err
	}
	if want != "" && have != want && !strings.HasPrefix(have, want+".") {
		return "", fmt.Errorf("node image %s (%s) has Kubernetes %s, but the spec asks for %s (spec.kubernetesVersion); nothing was created: name an image of %s in spec.kind.image, or set kubernetesVersion to %s",
			image, source, have, want, want, have)
	}
	return image, nil
}

// fullVersion is v with a patch: the default version's when v is MAJOR.MINOR of it.
func fullVersion(v string) string {
	if strings.Count(v, ".") == 2 {
		return v
	}
	if strings.HasPrefix(DefaultVersion, v+".") {
		return DefaultVersion
	}
	return v
}

// nodeImageLabels formats the labels of a node image nuv built (`nuv cluster node-image build`):
// the build that writes /kind/version labels the image with the same version.
const nodeImageLabels = `{{index .Config.Labels "dev.nuv.built-by"}}|{{index .Config.Labels "dev.nuv.kubernetes-version"}}`

// labelVersion is the Kubernetes version of a node image nuv built, from its labels ("" for any
// other image, whose /kind/version is read instead).
func labelVersion(labels string) (string, error) {
	by, v, _ := strings.Cut(strings.TrimSpace(labels), "|")
	if by != "nuv cluster node-image build" || v == "" || v == "<no value>" {
		return "", nil
	}
	v = strings.TrimPrefix(v, "v")
	if _, ok := spec.NormalVersion(v); !ok {
		return "", fmt.Errorf("node image label dev.nuv.kubernetes-version=%q is not a Kubernetes version", v)
	}
	return v, nil
}

// imageVersion reads the Kubernetes version a node image carries (/kind/version, where kind
// reads it), copying the file out of a container that is created but never started: it works for
// any image, whatever programs it has.
func imageVersion(ctx context.Context, rt containerrt.Runtime, image string) (string, error) {
	id, err := rt.Output(ctx, "create", "--network", "none", image, "/kind/version")
	if err != nil {
		return "", fmt.Errorf("read the Kubernetes version of node image %s: %w", image, err)
	}
	id = strings.TrimSpace(id)
	defer func() { _, _ = rt.Output(context.WithoutCancel(ctx), "rm", "-f", id) }()
	archive, err := rt.Output(ctx, "cp", id+":/kind/version", "-")
	if err != nil {
		return "", fmt.Errorf("node image %s has no /kind/version (is it a kind node image?): %w", image, err)
	}
	tr := tar.NewReader(strings.NewReader(archive))
	if _, err := tr.Next(); err != nil {
		return "", fmt.Errorf("node image %s: read /kind/version: %w", image, err)
	}
	b, err := io.ReadAll(io.LimitReader(tr, 1024))
	if err != nil {
		return "", fmt.Errorf("node image %s: read /kind/version: %w", image, err)
	}
	raw := strings.TrimSpace(string(b))
	v := strings.TrimPrefix(raw, "v")
	if i := strings.IndexAny(v, "-+"); i > 0 {
		v = v[:i]
	}
	if _, ok := spec.NormalVersion(v); !ok {
		return "", fmt.Errorf("node image %s: /kind/version says %q, not a Kubernetes version", image, raw)
	}
	return v, nil
}

// deleteCluster deletes nuv's kind cluster name (its containers and their volumes), its
// kubeconfig, and kind's network when no container is left on it.
func (p *Provider) deleteCluster(ctx context.Context, name string) error {
	// The nodes and the network first, nuv's own files last: a delete interrupted before the end
	// leaves files that Observe sees (leftovers), so the next delete finishes it.
	if err := p.DeleteNodes(ctx, name); err != nil {
		return err
	}
	if err := os.Remove(p.KubeconfigPath(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove kubeconfig: %w", err)
	}
	if err := os.RemoveAll(filepath.Join(p.Home, "kind", name)); err != nil {
		return fmt.Errorf("remove nuv's files of kind cluster %s: %w", name, err)
	}
	return nil
}

// DeleteNodes deletes the node containers (and their volumes) of kind cluster name, whoever made
// it, the way nuv deletes its own clusters: frozen cgroup v1 freezer groups are thawed first and a
// runtime that fails to kill a busy node is asked again; kind's network goes too when no container
// is left on it. It leaves nuv's own files of the cluster alone. Tests use it to clean up clusters
// they made with kind's library; no node left is success.
func (p *Provider) DeleteNodes(ctx context.Context, name string) error {
	rt, err := p.runtime(ctx)
	if err != nil {
		return err
	}
	if err := p.deleteNodes(ctx, rt, name); err != nil {
		return err
	}
	p.removeIdleNetwork(ctx, rt)
	return nil
}

func (p *Provider) deleteNodes(ctx context.Context, rt containerrt.Runtime, name string) error {
	tmp, err := p.scratch(name)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// kind removes its entries from the kubeconfig it is given: give it a scratch one, never
	// ~/.kube/config (nuv's own kubeconfig is removed whole by deleteCluster).
	// A runtime under load can fail to kill a node whose processes are busy (docker: "did not
	// receive an exit event"): try again a few times before giving up.
	for attempt := 1; ; attempt++ {
		if n := p.ThawNodes(ctx, rt, name); n > 0 {
			p.log().Infof("thawed %d frozen cgroup(s) of kind cluster %s's pods (a frozen group cannot be killed)", n, name)
		}
		err := p.kind(rt).Delete(name, tmp+"/kubeconfig")
		if err == nil {
			return nil
		}
		if attempt == 4 || ctx.Err() != nil {
			return fmt.Errorf("kind delete cluster %s (%d attempts): %w", name, attempt, err)
		}
		p.log().Infof("deleting kind cluster %s failed (%s); trying again", name, containerrt.FirstLine(err))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 5 * time.Second):
		}
	}
}

// leftovers names nuv's own files of kind cluster name that exist (its kubeconfig, its directory
// under NUV_HOME with the ownership mark and exported logs).
func (p *Provider) leftovers(name string) []string {
	var out []string
	if _, err := os.Stat(p.KubeconfigPath(name)); err == nil {
		out = append(out, "kubeconfig "+p.KubeconfigPath(name))
	}
	if dir := filepath.Join(p.Home, "kind", name); dirExists(dir) {
		out = append(out, "directory "+dir)
	}
	return out
}

// scratch makes an empty directory for what kind writes while it creates or deletes cluster name
// (a kubeconfig with admin credentials): $NUV_HOME/tmp/kind-NAME, owner-only, emptied first, so
// what a killed nuv left there is removed by the next create or delete, and never sits in /tmp.
// The cluster's lock keeps two nuvs from using it at once.
func (p *Provider) scratch(name string) (string, error) {
	dir := filepath.Join(p.Home, "tmp", "kind-"+name)
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("scratch directory of kind cluster %s: %w", name, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("scratch directory of kind cluster %s: %w", name, err)
	}
	return dir, nil
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// removeIdleNetwork removes kind's network when no container uses it any more (kind leaves it).
func (p *Provider) removeIdleNetwork(ctx context.Context, rt containerrt.Runtime) {
	const network = "kind"
	// not while a create (of any nuv on this host) is joining it; that create uses it
	unlock, err := flock(p.networkLock(), syscall.LOCK_EX|syscall.LOCK_NB)
	if err != nil {
		p.log().V(1).Infof("kept the %s network: a kind create is using it", network)
		return
	}
	defer unlock()
	if !rt.NetworkIdle(ctx, network) {
		return
	}
	if _, err := rt.Output(ctx, "network", "rm", network); err == nil {
		p.log().V(1).Infof("removed the idle %s network", network)
	}
}

// Adopt describes an existing kind cluster made by nuv (found by its node labels) as a spec: one
// this nuv marked, or one whose nodes carry nuv's labels with an owner (gc of a cluster whose
// record was lost; the engine checked the owner is its store).
func (p *Provider) Adopt(ctx context.Context, name string) (*spec.Cluster, error) {
	rt, err := p.runtime(ctx)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	cs, err := p.containers(ctx, rt, name)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	owned, nodes := p.owned(ctx, rt, name)
	marks, labelled, _ := nodeMarks(nodes, name)
	if !owned && (!labelled || marks.Owner == "") {
		return nil, p.notOwned(name, nodes)
	}
	c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: name}, Spec: spec.Spec{Provider: "kind"}}
	c.Marks = marks // the owner its labels name: Observe takes it as nuv's (gc, record lost)
	f := observedNodeFields(nodes, "")
	c.Spec.KubernetesVersion = f["version"]
	if n, _ := strconv.Atoi(f["controlPlanes"]); n > 1 {
		c.Spec.ControlPlane.Count = n
	}
	for _, kv := range strings.Split(f["workers"], ",") {
		g, n, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		count, _ := strconv.Atoi(n)
		c.Spec.NodeGroups = append(c.Spec.NodeGroups, spec.NodeGroup{Name: g, Count: &count})
	}
	return c, nil
}

// owned reports whether this nuv made kind cluster name: the ownership mark it wrote under its
// NUV_HOME when it created the cluster names the cluster's control-plane container. It also
// returns the nodes when the API server answers.
func (p *Provider) owned(ctx context.Context, rt containerrt.Runtime, name string) (bool, []corev1.Node) {
	marked := p.marked(ctx, rt, name)
	cfg, err := p.restConfig(rt, name)
	if err != nil {
		return marked, nil
	}
	nodes, _ := nodesOf(ctx, cfg)
	return marked, nodes
}

// notOwned says why nuv leaves kind cluster name alone.
func (p *Provider) notOwned(name string, nodes []corev1.Node) error {
	if ownedNodes(nodes, name) {
		return fmt.Errorf("kind cluster %s was made by a nuv with another NUV_HOME (this one, %s, has no record or mark of it): nuv leaves it alone; that nuv deletes it, or `kind delete cluster --name %s`", name, p.Home, name)
	}
	return fmt.Errorf("kind cluster %s was not made by nuv: nuv leaves it alone; `kind delete cluster --name %s` removes it", name, name)
}

// markPath is the ownership mark of cluster name: the ID of the control-plane container nuv made.
func (p *Provider) markPath(name string) string {
	return filepath.Join(p.Home, "kind", name, "control-plane.id")
}

func (p *Provider) controlPlaneID(ctx context.Context, rt containerrt.Runtime, name string) (string, error) {
	id, err := rt.Output(ctx, "inspect", "--format", "{{.Id}}", name+"-control-plane")
	return strings.TrimSpace(id), err
}

// mark records that nuv made cluster name (0600; removed with the cluster).
func (p *Provider) mark(ctx context.Context, rt containerrt.Runtime, name string) error {
	id, err := p.controlPlaneID(ctx, rt, name)
	if err != nil {
		return fmt.Errorf("kind cluster %s: %w", name, err)
	}
	if err := os.MkdirAll(filepath.Dir(p.markPath(name)), 0o700); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(p.markPath(name), []byte(id+"\n"), 0o600)
}

// marked reports whether the ownership mark names the current control-plane container.
func (p *Provider) marked(ctx context.Context, rt containerrt.Runtime, name string) bool {
	b, err := os.ReadFile(p.markPath(name))
	if err != nil {
		return false
	}
	id, err := p.controlPlaneID(ctx, rt, name)
	return err == nil && id != "" && strings.TrimSpace(string(b)) == id
}

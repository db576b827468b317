// Package aks is nuv's Azure Kubernetes Service provider: from a Cluster spec with `provider: aks`
// it plans and makes, through the official Azure SDK for Go (armresources, armcontainerservice v6,
// azidentity), a resource group (tagged nuv.dev/cluster=<name>; deleted with the cluster, and
// never one nuv did not make), the managed cluster (version, network plugin, system pool) and one
// agent pool per further node group (VM size, count or autoscaler min/max, spot, labels, taints,
// zones), and writes the cluster's user kubeconfig to clusters/<name>.kubeconfig (0600). Scaling,
// pool changes and version upgrades are concrete plan changes; long-running operations are
// followed with their status and elapsed time.
//
// Values the service does not offer (a region, a version, a VM size or a zone) are found at plan
// time by asking the service itself and reported with their field path. Credentials come from the
// environment, workload identity or the Azure CLI, in that order (see credential).
//
// It runs against Azure or against nuv's ARM emulator (internal/emulator/azure), which
// `nuv emulator env` points it at.
package aks

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	acs "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// TagCluster is the tag nuv puts on what it makes for a cluster.
const TagCluster = kit.TagCluster

// Resource kinds.
const (
	kindGroup      = "resource-group"
	kindCluster    = "managed-cluster"
	kindPool       = "agent-pool"
	kindKubeconfig = "kubeconfig"
)

var lookPath = exec.LookPath

// Provider makes AKS clusters.
type Provider struct {
	// Project is the project root: kubeconfigs go to Project/clusters/<name>.kubeconfig.
	Project string
	// Log receives progress (operations and their elapsed time); nil is quiet.
	Log cli.Logger
	// Getenv reads the environment (credentials, endpoints); nil is os.Getenv.
	Getenv func(string) string
	// Poll is the interval between polls of a long-running operation (default 2s).
	Poll time.Duration

	mu    sync.Mutex
	cred  azcore.TokenCredential
	cache map[string]*clients
}

// Name is "aks".
func (p *Provider) Name() string { return "aks" }

func (p *Provider) getenv() func(string) string { return kit.Getenv(p.Getenv) }

func (p *Provider) log() cli.Logger { return kit.Log(p.Log) }

func (p *Provider) kubeconfigPath(name string) string { return kit.KubeconfigPath(p.Project, name) }

// Desired lists the resource group (unless it exists already and is not nuv's), the managed
// cluster with its system pool (the first node group), one agent pool per further group, and the
// kubeconfig.
func (p *Provider) Desired(c *spec.Cluster) ([]cluster.Resource, error) {
	s, errs := section(c, p.getenv())
	if len(errs) > 0 {
		return nil, errs[0]
	}
	name := c.Metadata.Name
	loc := strings.ToLower(strings.ReplaceAll(c.Spec.Region, " ", ""))
	var out []cluster.Resource
	var deps []string
	if !s.ExistingResourceGroup {
		rg := cluster.Resource{Kind: kindGroup, Name: s.ResourceGroup, Fields: map[string]string{"location": loc, "tags": kit.Map(kit.WithoutMarks(tagsOf(c)))}, Replace: []string{"location"}}
		out = append(out, rg)
		deps = []string{rg.Key()}
	}
	version := strings.TrimPrefix(c.Spec.KubernetesVersion, "v")
	mcFields := map[string]string{
		"location":      loc,
		"version":       version,
		"networkPlugin": s.NetworkPlugin,
		"podCIDR":       c.Spec.Networking.PodCIDR,
		"serviceCIDR":   c.Spec.Networking.ServiceCIDR,
		"dnsPrefix":     s.DNSPrefix,
		"skuTier":       s.SKUTier,
		"tags":          kit.Map(kit.WithoutMarks(tagsOf(c))),
		"state":         "Succeeded",
	}
	sys := c.Spec.NodeGroups[0]
	for k, v := range poolFields(c, sys, version) {
		mcFields["systemPool."+k] = v
	}
	mcFields["systemPool.name"] = sys.Name
	mc := cluster.Resource{Kind: kindCluster, Name: name, Fields: mcFields, DependsOn: deps,
		Replace: []string{"location", "networkPlugin", "podCIDR", "serviceCIDR", "dnsPrefix", "systemPool.name", "systemPool.vmSize", "systemPool.zones", "systemPool.diskSize"}}
	if version == "" {
		delete(mc.Fields, "version")
	}
	out = append(out, mc)
	for _, g := range c.Spec.NodeGroups[1:] {
		pf := poolFields(c, g, version)
		pf["state"] = "Succeeded"
		out = append(out, cluster.Resource{Kind: kindPool, Name: g.Name, Fields: pf, DependsOn: []string{mc.Key()},
			Replace: []string{"vmSize", "zones", "spot", "diskSize"}})
	}
	out = append(out, cluster.Resource{Kind: kindKubeconfig, Name: name, Fields: map[string]string{"path": p.kubeconfigPath(name)}, DependsOn: []string{mc.Key()}})
	return out, nil
}

// tagsOf are the tags of what nuv makes for c: its tags, nuv.dev/cluster and nuv's marks. Plans
// compare them without the marks.
func tagsOf(c *spec.Cluster) map[string]string {
	return kit.ClusterTags(c)
}

// poolFields are the compared fields of a node pool.
func poolFields(c *spec.Cluster, g spec.NodeGroup, version string) map[string]string {
	f := map[string]string{
		"vmSize":  vmSize(g),
		"spot":    kit.Bool(g.Spot),
		"zones":   strings.Join(c.Spec.Zones, ","),
		"labels":  kit.Map(g.Labels),
		"taints":  strings.Join(g.Taints, ","),
		"version": version,
	}
	if g.Min != nil && g.Max != nil {
		f["autoscale"] = fmt.Sprintf("%d-%d", *g.Min, *g.Max)
		if g.Count != nil {
			f["count"] = strconv.Itoa(*g.Count)
		}
	} else {
		f["count"] = strconv.Itoa(g.Size())
		f["autoscale"] = "off"
	}
	if g.DiskSize > 0 {
		f["diskSize"] = strconv.Itoa(g.DiskSize)
	}
	if version == "" {
		delete(f, "version")
	}
	return f
}

// observedPoolFields reads the same fields from a pool as the service reports it; version is
// reported as the spec gives it (minor or patch) when it matches.
func observedPoolFields(p *acs.ManagedClusterAgentPoolProfile, wantVersion string) map[string]string {
	f := map[string]string{
		"vmSize": deref(p.VMSize),
		"spot":   kit.Bool(p.ScaleSetPriority != nil && *p.ScaleSetPriority == acs.ScaleSetPrioritySpot),
		"count":  strconv.Itoa(int(deref(p.Count))),
	}
	var zones []string
	for _, z := range p.AvailabilityZones {
		zones = append(zones, deref(z))
	}
	f["zones"] = strings.Join(zones, ",")
	labels := map[string]string{}
	for k, v := range p.NodeLabels {
		labels[k] = deref(v)
	}
	f["labels"] = kit.Map(labels)
	var taints []string
	for _, t := range p.NodeTaints {
		taints = append(taints, deref(t))
	}
	f["taints"] = strings.Join(taints, ",")
	if p.EnableAutoScaling != nil && *p.EnableAutoScaling {
		f["autoscale"] = fmt.Sprintf("%d-%d", deref(p.MinCount), deref(p.MaxCount))
	} else {
		f["autoscale"] = "off"
	}
	if p.OSDiskSizeGB != nil && *p.OSDiskSizeGB > 0 {
		f["diskSize"] = strconv.Itoa(int(*p.OSDiskSizeGB))
	}
	f["version"] = versionAs(deref(p.OrchestratorVersion), deref(p.CurrentOrchestratorVersion), wantVersion)
	f["state"] = deref(p.ProvisioningState)
	return f
}

// versionAs reports the version the way the spec writes it: "1.35" for a cluster on 1.35.x
// when the spec asks for 1.35.
func versionAs(asked, current, want string) string {
	switch {
	case want == "":
		return asked
	case want == current || want == asked:
		return want
	case strings.HasPrefix(current, want+"."):
		return want
	}
	if asked != "" {
		return asked
	}
	return current
}

func deref[T any](p *T) T {
	var z T
	if p == nil {
		return z
	}
	return *p
}

// Observe finds the resource group, the managed cluster and its pools, and the kubeconfig. A
// group or cluster of the same name without nuv's tag for this cluster is Foreign (never touched).
// It then asks the service whether it offers the region, version, VM sizes and zones the spec
// names (those that differ from what exists), and fails with their field paths if not.
func (p *Provider) Observe(ctx context.Context, c *spec.Cluster, _ []cluster.Resource) ([]cluster.Resource, error) {
	s, errs := section(c, p.getenv())
	if len(errs) > 0 {
		return nil, errs[0]
	}
	cl, err := p.clientsFor(ctx, s.Subscription)
	if err != nil {
		return nil, err
	}
	name := c.Metadata.Name
	var out []cluster.Resource
	if s.ExistingResourceGroup {
		if _, err := cl.groups.Get(ctx, s.ResourceGroup, nil); notFound(err) {
			return nil, c.Positioned(sourceFile(c), []spec.FieldError{spec.Errorf("spec.aks.resourceGroup",
				"resource group %q does not exist (existingResourceGroup: true says it does; leave that out to have nuv make it)", s.ResourceGroup)})
		} else if err != nil {
			return nil, fmt.Errorf("ResourceGroups_Get on resource group %s: %s", s.ResourceGroup, firstLineARM(err))
		}
	} else {
		g, err := cl.groups.Get(ctx, s.ResourceGroup, nil)
		switch {
		case notFound(err):
		case err != nil:
			return nil, fmt.Errorf("resource group %s: %w", s.ResourceGroup, err)
		default:
			tags := map[string]string{}
			for k, v := range g.Tags {
				tags[k] = deref(v)
			}
			out = append(out, cluster.Resource{Kind: kindGroup, Name: s.ResourceGroup, ID: deref(g.ID), Foreign: tags[TagCluster] != name,
				Fields: map[string]string{"location": deref(g.Location), "tags": kit.Map(kit.WithoutMarks(tags))}})
		}
	}
	var mc *acs.ManagedCluster
	r, err := cl.clusters.Get(ctx, s.ResourceGroup, name, nil)
	switch {
	case notFound(err):
	case err != nil:
		return nil, fmt.Errorf("managed cluster %s: %w", name, err)
	default:
		mc = &r.ManagedCluster
		out = append(out, observedCluster(mc, c)...)
	}
	if _, err := os.Stat(p.kubeconfigPath(name)); err == nil && mc != nil {
		out = append(out, cluster.Resource{Kind: kindKubeconfig, Name: name, ID: p.kubeconfigPath(name), Fields: map[string]string{"path": p.kubeconfigPath(name)}})
	}
	errs, err = p.checkOffer(ctx, cl, c, mc)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, c.Positioned(sourceFile(c), errs)
	}
	return out, nil
}

// observedCluster is a managed cluster and its user pools as resources.
func observedCluster(mc *acs.ManagedCluster, c *spec.Cluster) []cluster.Resource {
	name, wantVersion := c.Metadata.Name, strings.TrimPrefix(c.Spec.KubernetesVersion, "v")
	tags := map[string]string{}
	for k, v := range mc.Tags {
		tags[k] = deref(v)
	}
	foreign := tags[TagCluster] != name
	pr := mc.Properties
	np := deref(pr.NetworkProfile)
	f := map[string]string{
		"location":      deref(mc.Location),
		"version":       versionAs(deref(pr.KubernetesVersion), deref(pr.CurrentKubernetesVersion), wantVersion),
		"networkPlugin": string(deref(np.NetworkPlugin)),
		"dnsPrefix":     deref(pr.DNSPrefix),
		"tags":          kit.Map(kit.WithoutMarks(tags)),
		"state":         deref(pr.ProvisioningState),
	}
	if mc.SKU != nil {
		f["skuTier"] = string(deref(mc.SKU.Tier))
	}
	// The CIDRs are compared only when the spec names them (the service picks defaults).
	f["podCIDR"], f["serviceCIDR"] = "", ""
	if c.Spec.Networking.PodCIDR != "" {
		f["podCIDR"] = deref(np.PodCidr)
	}
	if c.Spec.Networking.ServiceCIDR != "" {
		f["serviceCIDR"] = deref(np.ServiceCidr)
	}
	out := []cluster.Resource{{Kind: kindCluster, Name: name, ID: deref(mc.ID), Foreign: foreign, Fields: f}}
	for _, pool := range pr.AgentPoolProfiles {
		pf := observedPoolFields(pool, wantVersion)
		if pool.Mode != nil && *pool.Mode == acs.AgentPoolModeSystem && f["systemPool.name"] == "" {
			for k, v := range pf {
				if k == "state" {
					continue
				}
				f["systemPool."+k] = v
			}
			f["systemPool.name"] = deref(pool.Name)
			continue
		}
		out = append(out, cluster.Resource{Kind: kindPool, Name: deref(pool.Name), ID: deref(mc.ID) + "/agentPools/" + deref(pool.Name), Foreign: foreign, Fields: pf})
	}
	return out
}

func sourceFile(c *spec.Cluster) string {
	if i := strings.LastIndex(c.Source, ":"); i > 0 {
		return c.Source[:i]
	}
	if c.Source == "" {
		return "spec"
	}
	return c.Source
}

// wait follows a long-running operation to its end, logging its status and elapsed time.
func wait[T any](ctx context.Context, p *Provider, what, op string, poller *runtime.Poller[T]) (T, error) {
	start := time.Now()
	bound, err := cluster.WaitTimeout(p.getenv())
	if err != nil {
		var z T
		return z, err
	}
	err = kit.Poller{What: fmt.Sprintf("%s on %s", op, what), Interval: p.interval(), Bound: bound,
		Report: func(status string, elapsed time.Duration) {
			p.log().Infof("aks: %s: %s %s (%s)", what, op, status, elapsed.Round(time.Second))
		}}.Wait(ctx, func(ctx context.Context) (string, bool, error) {
		if poller.Done() {
			return "", true, nil
		}
		resp, err := poller.Poll(ctx)
		if err != nil {
			return "", false, fmt.Errorf("%s on %s: %w", op, what, err)
		}
		return operationStatus(resp), poller.Done(), nil
	})
	if err != nil {
		var z T
		return z, err
	}
	res, err := poller.Result(ctx)
	if err != nil {
		return res, fmt.Errorf("%s on %s failed after %s: %s", op, what, time.Since(start).Round(time.Second), firstLineARM(err))
	}
	p.log().Infof("aks: %s: %s done (%s)", what, op, time.Since(start).Round(time.Second))
	return res, nil
}

// kinds are the resource kinds of an AKS cluster, each with its create/update, delete and
// Terraform form. Each kind is made again when a field it cannot change in place changes.
var kinds = kit.Kinds[*change, *tfWriter]{
	Provider: "aks",
	ByKind: map[string]kit.Kind[*change, *tfWriter]{
		kindGroup:   {Apply: (*change).group, Delete: (*change).deleteGroup, Replace: true, Terraform: (*tfWriter).group},
		kindCluster: {Apply: (*change).cluster, Delete: (*change).deleteCluster, Recreate: true, Terraform: (*tfWriter).cluster},
		kindPool:    {Apply: (*change).pool, Delete: (*change).deletePool, Recreate: true, Terraform: (*tfWriter).pool},
		// The kubeconfig is the service's user kubeconfig, written by nuv; the module outputs it.
		kindKubeconfig: {Apply: (*change).kubeconfig, Delete: (*change).deleteKubeconfig, Replace: true},
	},
}

// change is one change of an AKS cluster being carried out: its clients, the spec and section,
// the name in the change's key, and the resource as the change left it (out).
type change struct {
	p    *Provider
	cl   *clients
	c    *spec.Cluster
	s    Section
	name string
	save func(cluster.Resource) error
	out  *cluster.Resource
}

// Execute carries out one change with the handler of its kind.
func (p *Provider) Execute(ctx context.Context, c *spec.Cluster, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	s, errs := section(c, p.getenv())
	if len(errs) > 0 {
		return nil, errs[0]
	}
	cl, err := p.clientsFor(ctx, s.Subscription)
	if err != nil {
		return nil, err
	}
	_, name, _ := strings.Cut(ch.Key, "/")
	x := &change{p: p, cl: cl, c: c, s: s, name: name, save: save}
	if err := kinds.Execute(ctx, x, ch); err != nil {
		return nil, err
	}
	return x.out, nil
}

func (x *change) group(ctx context.Context, ch cluster.Change) error {
	tags := map[string]*string{}
	for k, v := range tagsOf(x.c) {
		tags[k] = to.Ptr(v)
	}
	g, err := x.cl.groups.CreateOrUpdate(ctx, x.name, armresources.ResourceGroup{Location: to.Ptr(ch.Desired.Fields["location"]), Tags: tags}, nil)
	if err != nil {
		return fmt.Errorf("ResourceGroups_CreateOrUpdate on resource group %s: %s", x.name, firstLineARM(err))
	}
	r := *ch.Desired
	r.ID = deref(g.ID)
	x.p.log().Infof("aks: resource group %s in %s", x.name, deref(g.Location))
	x.out = &r
	return nil
}

func (x *change) deleteGroup(ctx context.Context, _ cluster.Change) error {
	return x.p.deleteGroup(ctx, x.cl, x.name)
}

// cluster creates or updates the managed cluster; a field AKS cannot change in place (location,
// network, the system pool's VM size or zones) makes it again, with every pool of the spec.
func (x *change) cluster(ctx context.Context, ch cluster.Change) (err error) {
	x.out, err = x.p.putCluster(ctx, x.cl, x.c, x.s, ch, x.save)
	return err
}

func (x *change) deleteCluster(ctx context.Context, _ cluster.Change) error {
	return x.p.deleteCluster(ctx, x.cl, x.s.ResourceGroup, x.name)
}

// pool creates or updates an agent pool; VM size, zones, spot or disk are fixed on a pool: it is
// made again.
func (x *change) pool(ctx context.Context, ch cluster.Change) (err error) {
	x.out, err = x.p.putPool(ctx, x.cl, x.c, x.s, ch, x.save)
	return err
}

func (x *change) deletePool(ctx context.Context, _ cluster.Change) error {
	return x.p.deletePool(ctx, x.cl, x.s.ResourceGroup, x.c.Metadata.Name, x.name)
}

// kubeconfig writes the cluster's user kubeconfig as the service returns it.
func (x *change) kubeconfig(ctx context.Context, ch cluster.Change) error {
	path := x.p.kubeconfigPath(x.name)
	res, err := x.cl.clusters.ListClusterUserCredentials(ctx, x.s.ResourceGroup, x.name, nil)
	if err != nil {
		return fmt.Errorf("ManagedClusters_ListClusterUserCredentials on managed cluster %s: %s", x.name, firstLineARM(err))
	}
	if len(res.Kubeconfigs) == 0 || len(res.Kubeconfigs[0].Value) == 0 {
		return fmt.Errorf("managed cluster %s: the service returned no user kubeconfig", x.name)
	}
	if err := kit.WriteKubeconfig(path, res.Kubeconfigs[0].Value); err != nil {
		return err
	}
	x.p.log().Infof("aks: kubeconfig of %s written to %s", x.name, path)
	r := *ch.Desired
	r.ID = path
	x.out = &r
	return nil
}

func (x *change) deleteKubeconfig(context.Context, cluster.Change) error {
	return kit.RemoveKubeconfig(x.p.kubeconfigPath(x.name))
}

// settle waits for a managed cluster's operation in progress (a create resumed after nuv was
// killed, or another client's operation) and returns the cluster as it then is.
func (p *Provider) settle(ctx context.Context, cl *clients, rg, name string) (*acs.ManagedCluster, error) {
	start := time.Now()
	bound, err := cluster.WaitTimeout(p.getenv())
	if err != nil {
		return nil, err
	}
	for {
		r, err := cl.clusters.Get(ctx, rg, name, nil)
		if notFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("ManagedClusters_Get on managed cluster %s: %s", name, firstLineARM(err))
		}
		st := deref(r.Properties.ProvisioningState)
		busy := false
		switch st {
		case "Creating", "Updating", "Upgrading", "Scaling", "Deleting", "Starting", "Stopping":
			busy = true
		}
		for _, pl := range r.Properties.AgentPoolProfiles {
			switch deref(pl.ProvisioningState) {
			case "Creating", "Updating", "Upgrading", "Scaling", "Deleting":
				busy = true
			}
		}
		if !busy {
			return &r.ManagedCluster, nil
		}
		p.log().Infof("aks: managed cluster %s: waiting for the operation in progress (%s, %s)", name, st, time.Since(start).Round(time.Second))
		if time.Since(start) >= bound {
			return nil, &cluster.WaitExpired{What: "the operation in progress on managed cluster " + name, Last: st, Waited: time.Since(start)}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(p.interval()):
		}
	}
}

func (p *Provider) interval() time.Duration {
	if p.Poll == 0 {
		return 2 * time.Second
	}
	return p.Poll
}

// poolProfile is the agent pool profile a node group asks for.
func poolProfile(c *spec.Cluster, g spec.NodeGroup, system bool, version string) *acs.ManagedClusterAgentPoolProfile {
	pp := &acs.ManagedClusterAgentPoolProfile{Name: to.Ptr(g.Name), VMSize: to.Ptr(vmSize(g)), Mode: to.Ptr(acs.AgentPoolModeUser),
		Type: to.Ptr(acs.AgentPoolTypeVirtualMachineScaleSets), OSType: to.Ptr(acs.OSTypeLinux)}
	if system {
		pp.Mode = to.Ptr(acs.AgentPoolModeSystem)
	}
	if g.Min != nil && g.Max != nil {
		pp.EnableAutoScaling, pp.MinCount, pp.MaxCount = to.Ptr(true), to.Ptr(int32(*g.Min)), to.Ptr(int32(*g.Max))
		if g.Count != nil {
			pp.Count = to.Ptr(int32(*g.Count))
		} else {
			pp.Count = to.Ptr(int32(*g.Min))
		}
	} else {
		pp.EnableAutoScaling, pp.Count = to.Ptr(false), to.Ptr(int32(g.Size()))
	}
	if g.Spot {
		pp.ScaleSetPriority, pp.ScaleSetEvictionPolicy, pp.SpotMaxPrice = to.Ptr(acs.ScaleSetPrioritySpot), to.Ptr(acs.ScaleSetEvictionPolicyDelete), to.Ptr[float32](-1)
	}
	for _, z := range c.Spec.Zones {
		pp.AvailabilityZones = append(pp.AvailabilityZones, to.Ptr(z))
	}
	pp.NodeLabels = map[string]*string{}
	for k, v := range g.Labels {
		pp.NodeLabels[k] = to.Ptr(v)
	}
	pp.NodeTaints = []*string{}
	for _, t := range g.Taints {
		pp.NodeTaints = append(pp.NodeTaints, to.Ptr(t))
	}
	if g.DiskSize > 0 {
		pp.OSDiskSizeGB = to.Ptr(int32(g.DiskSize))
	}
	if version != "" {
		pp.OrchestratorVersion = to.Ptr(version)
	}
	return pp
}

func (p *Provider) putCluster(ctx context.Context, cl *clients, c *spec.Cluster, s Section, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	name := c.Metadata.Name
	cur, err := p.settle(ctx, cl, s.ResourceGroup, name)
	if err != nil {
		return nil, err
	}
	version := strings.TrimPrefix(c.Spec.KubernetesVersion, "v")
	want := acs.ManagedCluster{Location: to.Ptr(ch.Desired.Fields["location"]), Tags: map[string]*string{}, Properties: &acs.ManagedClusterProperties{
		DNSPrefix:      to.Ptr(s.DNSPrefix),
		EnableRBAC:     to.Ptr(true),
		NetworkProfile: &acs.NetworkProfile{NetworkPlugin: to.Ptr(acs.NetworkPlugin(s.NetworkPlugin))},
	}, SKU: &acs.ManagedClusterSKU{Name: to.Ptr(acs.ManagedClusterSKUNameBase), Tier: to.Ptr(acs.ManagedClusterSKUTier(s.SKUTier))},
		Identity: &acs.ManagedClusterIdentity{Type: to.Ptr(acs.ResourceIdentityTypeSystemAssigned)}}
	for k, v := range tagsOf(c) {
		want.Tags[k] = to.Ptr(v)
	}
	if version != "" {
		want.Properties.KubernetesVersion = to.Ptr(version)
	}
	if s.NetworkPlugin == "azure" {
		want.Properties.NetworkProfile.NetworkPluginMode = to.Ptr(acs.NetworkPluginModeOverlay)
	}
	if v := c.Spec.Networking.PodCIDR; v != "" {
		want.Properties.NetworkProfile.PodCidr = to.Ptr(v)
	}
	if v := c.Spec.Networking.ServiceCIDR; v != "" {
		want.Properties.NetworkProfile.ServiceCidr = to.Ptr(v)
	}
	sys := poolProfile(c, c.Spec.NodeGroups[0], true, version)
	want.Properties.AgentPoolProfiles = []*acs.ManagedClusterAgentPoolProfile{sys}
	if ch.Action == cluster.Replace {
		for _, g := range c.Spec.NodeGroups[1:] {
			want.Properties.AgentPoolProfiles = append(want.Properties.AgentPoolProfiles, poolProfile(c, g, false, version))
		}
		cur = nil
	}
	op := "ManagedClusters_CreateOrUpdate"
	if cur != nil && ch.Action != cluster.Create {
		// An update names the pools as they are (the user pools are their own resources) and the
		// system pool as the spec wants it.
		for _, pl := range cur.Properties.AgentPoolProfiles {
			if deref(pl.Name) == c.Spec.NodeGroups[0].Name {
				continue
			}
			x := *pl
			x.ProvisioningState, x.CurrentOrchestratorVersion, x.PowerState = nil, nil, nil
			if version != "" && ch.Desired.Fields["version"] != ch.Actual.Fields["version"] {
				x.OrchestratorVersion = to.Ptr(version)
			}
			want.Properties.AgentPoolProfiles = append(want.Properties.AgentPoolProfiles, &x)
		}
	}
	poller, err := cl.clusters.BeginCreateOrUpdate(ctx, s.ResourceGroup, name, want, nil)
	if err != nil {
		return nil, fmt.Errorf("%s on managed cluster %s: %s", op, name, firstLineARM(err))
	}
	r := *ch.Desired
	r.ID = fmt.Sprintf("/subscriptions/%s/resourcegroups/%s/providers/Microsoft.ContainerService/managedClusters/%s", s.Subscription, s.ResourceGroup, name)
	if err := save(r); err != nil {
		return nil, err
	}
	if _, err := wait[acs.ManagedClustersClientCreateOrUpdateResponse](ctx, p, "managed cluster "+name, op, poller); err != nil {
		return nil, err
	}
	if ch.Action == cluster.Replace {
		// The kubeconfig of the cluster that was replaced reaches nothing: write the new one.
		if _, err := os.Stat(p.kubeconfigPath(name)); err == nil {
			kc := cluster.Change{Action: cluster.Update, Key: kindKubeconfig + "/" + name,
				Desired: &cluster.Resource{Kind: kindKubeconfig, Name: name, Fields: map[string]string{"path": p.kubeconfigPath(name)}}}
			kx := &change{p: p, cl: cl, c: c, s: s, name: name, save: save}
			if err := kx.kubeconfig(ctx, kc); err != nil {
				return nil, err
			}
		}
	}
	return &r, nil
}

func (p *Provider) putPool(ctx context.Context, cl *clients, c *spec.Cluster, s Section, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	name := c.Metadata.Name
	if _, err := p.settle(ctx, cl, s.ResourceGroup, name); err != nil {
		return nil, err
	}
	_, pool, _ := strings.Cut(ch.Key, "/")
	idx := slices.IndexFunc(c.Spec.NodeGroups, func(g spec.NodeGroup) bool { return g.Name == pool })
	if idx < 0 {
		return nil, fmt.Errorf("node group %s is not in the spec", pool)
	}
	pp := poolProfile(c, c.Spec.NodeGroups[idx], false, strings.TrimPrefix(c.Spec.KubernetesVersion, "v"))
	b, err := pp.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var props acs.ManagedClusterAgentPoolProfileProperties
	if err := props.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	op := "AgentPools_CreateOrUpdate"
	poller, err := cl.pools.BeginCreateOrUpdate(ctx, s.ResourceGroup, name, pool, acs.AgentPool{Properties: &props}, nil)
	if err != nil {
		return nil, fmt.Errorf("%s on agent pool %s of %s: %s", op, pool, name, firstLineARM(err))
	}
	r := *ch.Desired
	r.ID = fmt.Sprintf("/subscriptions/%s/resourcegroups/%s/providers/Microsoft.ContainerService/managedClusters/%s/agentPools/%s", s.Subscription, s.ResourceGroup, name, pool)
	if err := save(r); err != nil {
		return nil, err
	}
	if _, err := wait[acs.AgentPoolsClientCreateOrUpdateResponse](ctx, p, "agent pool "+pool+" of "+name, op, poller); err != nil {
		return nil, err
	}
	return &r, nil
}

func (p *Provider) deletePool(ctx context.Context, cl *clients, rg, name, pool string) error {
	if _, err := p.settle(ctx, cl, rg, name); err != nil {
		return err
	}
	op := "AgentPools_Delete"
	poller, err := cl.pools.BeginDelete(ctx, rg, name, pool, nil)
	if notFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s on agent pool %s of %s: %s", op, pool, name, firstLineARM(err))
	}
	_, err = wait[acs.AgentPoolsClientDeleteResponse](ctx, p, "agent pool "+pool+" of "+name, op, poller)
	return err
}

func (p *Provider) deleteCluster(ctx context.Context, cl *clients, rg, name string) error {
	op := "ManagedClusters_Delete"
	poller, err := cl.clusters.BeginDelete(ctx, rg, name, nil)
	if notFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s on managed cluster %s: %s", op, name, firstLineARM(err))
	}
	if _, err := wait[acs.ManagedClustersClientDeleteResponse](ctx, p, "managed cluster "+name, op, poller); err != nil {
		return err
	}
	if _, err := cl.clusters.Get(ctx, rg, name, nil); !notFound(err) {
		return fmt.Errorf("managed cluster %s still exists after its deletion", name)
	}
	return nil
}

// deleteGroup deletes a resource group nuv made, then checks that it and the cluster's node
// resource group are gone.
func (p *Provider) deleteGroup(ctx context.Context, cl *clients, name string) error {
	op := "ResourceGroups_Delete"
	poller, err := cl.groups.BeginDelete(ctx, name, nil)
	if notFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s on resource group %s: %s", op, name, firstLineARM(err))
	}
	if _, err := wait[armresources.ResourceGroupsClientDeleteResponse](ctx, p, "resource group "+name, op, poller); err != nil {
		return err
	}
	if _, err := cl.groups.Get(ctx, name, nil); !notFound(err) {
		return fmt.Errorf("resource group %s still exists after its deletion", name)
	}
	return nil
}

// List reports the AKS clusters nuv made that the configured subscription holds (none when no
// Azure subscription is configured).
func (p *Provider) List(ctx context.Context) ([]cluster.Info, error) {
	return p.listIn(ctx, p.getenv()("AZURE_SUBSCRIPTION_ID"))
}

// listIn lists the AKS clusters nuv made in subscription sub (none when sub is "").
func (p *Provider) listIn(ctx context.Context, sub string) ([]cluster.Info, error) {
	if sub == "" {
		return nil, nil
	}
	cl, err := p.clientsFor(ctx, sub)
	if err != nil {
		return nil, err
	}
	var out []cluster.Info
	pager := cl.clusters.NewListPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("ManagedClusters_List: %s", firstLineARM(err))
		}
		for _, mc := range page.Value {
			name := deref(mc.Tags[TagCluster])
			if name == "" {
				continue
			}
			out = append(out, p.info(name, mc))
		}
	}
	return out, nil
}

func (p *Provider) info(name string, mc *acs.ManagedCluster) cluster.Info {
	i := cluster.Info{Name: name, Provider: "aks", Flavor: "aks", Version: deref(mc.Properties.CurrentKubernetesVersion), NodesReady: -1,
		APIURL: "https://" + deref(mc.Properties.Fqdn)}
	switch deref(mc.Properties.ProvisioningState) {
	case "Succeeded":
		i.Status = cluster.Running
	case "Creating":
		i.Status = cluster.Creating
	default:
		i.Status = cluster.Degraded
	}
	for _, pl := range mc.Properties.AgentPoolProfiles {
		i.Nodes += int(deref(pl.Count))
	}
	if cfg, err := clientcmd.LoadFromFile(p.kubeconfigPath(name)); err == nil {
		i.Kubeconfig = p.kubeconfigPath(name)
		if ctx, ok := cfg.Contexts[cfg.CurrentContext]; ok && cfg.Clusters[ctx.Cluster] != nil {
			i.APIURL = cfg.Clusters[ctx.Cluster].Server // where the kubeconfig reaches it
		}
	}
	return i
}

// Status reports one cluster nuv made, in the subscription its spec names (the environment's
// for a cluster without a record).
func (p *Provider) Status(ctx context.Context, c *spec.Cluster) (cluster.Info, error) {
	s, _ := section(c, p.getenv())
	return kit.StatusFromList(ctx, func(ctx context.Context) ([]cluster.Info, error) { return p.listIn(ctx, s.Subscription) }, c.Metadata.Name)
}

// Package eks is nuv's Amazon EKS provider on the lifecycle engine (package engine), built on the
// official AWS SDK for Go v2 (EKS, EC2, IAM, STS). From a Cluster spec with `provider: eks` it
// plans and creates, each resource recorded as soon as it exists: a VPC with a public and a private
// subnet per zone (or an existing VPC and subnets), an internet gateway, NAT gateways as the spec
// says, route tables, a security group, IAM roles for the cluster and its nodes with their managed
// policies, the EKS cluster, managed node groups, EKS add-ons, Karpenter node pools for groups with
// `manager: karpenter`, and the kubeconfig (clusters/NAME.kubeconfig, whose exec credential is
// `nuv -eks-token`: no aws CLI, no token on disk).
//
// Every resource carries the tag nuv.dev/cluster=NAME; Observe finds resources by the IDs the
// state record holds and by that tag, and marks a same-named resource without it Foreign (never
// touched). Credentials come from the SDK's default chain, the region from the spec, AWS_REGION or
// the profile, and the endpoint from spec.eks.endpoint or AWS_ENDPOINT_URL, so the whole provider
// runs against nuv's AWS emulator (package emulator) as it runs against AWS.
package eks

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/karpenter"
)

// Name is the provider's name in specs.
const Name = "eks"

// Provider makes EKS clusters. Build it with New; it is safe for concurrent use.
type Provider struct {
	// Project is the project root: kubeconfigs go to Project/clusters/NAME.kubeconfig.
	Project string
	// Exe is nuv's executable, the kubeconfig's exec credential plugin (`nuv -eks-token`).
	Exe string
	// Getenv reads the environment (AWS_ENDPOINT_URL, AWS_REGION, AWS_PROFILE); nil is os.Getenv.
	Getenv func(string) string
	// Log receives progress (waits with their elapsed time and status); nil is quiet.
	Log cli.Logger
	// Poll is the waiters' polling interval; 0 is 100ms against a loopback endpoint (the emulator)
	// and the SDK waiters' own defaults against AWS.
	Poll time.Duration

	mu       sync.Mutex
	sessions awsnet.Sessions
	clients  awsnet.Clients[*session]
	resolved map[string]*resolved
	ids      awsnet.IDs // resource ids, from Observe and creates
}

var (
	_ cluster.Provider        = (*Provider)(nil)
	_ cluster.TerraformWriter = (*Provider)(nil)
	_ cluster.Adopter         = (*Provider)(nil)
)

// New returns a provider.
func New(project, exe string, getenv func(string) string, log cli.Logger) *Provider {
	return &Provider{Project: project, Exe: exe, Getenv: getenv, Log: log}
}

// Name is "eks".
func (p *Provider) Name() string { return Name }

func (p *Provider) getenv(k string) string { return kit.Getenv(p.Getenv)(k) }

func (p *Provider) log() cli.Logger { return kit.Log(p.Log) }

// resolved is what a spec means once the AWS API has answered: the Kubernetes version, the zones,
// the subnets and the add-on versions. Validate computes it; Desired and Terraform use it.
type resolved struct {
	sec     Section
	region  string
	version string
	zones   []string
	subnets []awsnet.Subnet
	addons  map[string]string // name -> concrete version
	account string
}

// Validate checks an EKS spec: its own section and rules, then what only AWS can answer (the
// credentials, before anything else; the versions EKS offers; the zones; the instance types; the
// add-on versions). Every problem has its field path.
func (p *Provider) Validate(c *spec.Cluster) []spec.FieldError {
	errs := p.staticChecks(c)
	if len(errs) > 0 {
		return errs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, errs = p.resolve(ctx, c)
	return errs
}

// staticChecks are the rules that need no API call.
func (p *Provider) staticChecks(c *spec.Cluster) []spec.FieldError {
	var errs []spec.FieldError
	add := func(path, f string, a ...any) { errs = append(errs, spec.Errorf(path, f, a...)) }
	s := &c.Spec
	sec, serrs := DecodeSection(c.SectionMap("eks"))
	errs = append(errs, serrs...)
	if s.KubernetesVersion != "" {
		v, _ := spec.NormalVersion(s.KubernetesVersion)
		if strings.Count(v, ".") != 1 {
			add("spec.kubernetesVersion", "%q: EKS versions are MAJOR.MINOR (EKS picks the patch)", s.KubernetesVersion)
		}
	}
	if s.ControlPlane.Count > 1 {
		add("spec.controlPlane.count", "EKS runs its own highly available control plane; leave count out")
	}
	if s.Networking.PodCIDR != "" {
		add("spec.networking.podCIDR", "EKS pods take VPC addresses (the vpc-cni add-on); leave podCIDR out")
	}
	if s.Registry {
		add("spec.registry", "nuv's loopback registry is not reachable from EKS nodes; push to a registry they can pull from")
	}
	if n := len(s.Zones); n != 0 && (n < 2 || n > 3) {
		add("spec.zones", "%d zones: EKS clusters nuv makes span 2 or 3 zones", n)
	}
	if s.Networking.ServiceCIDR != "" && sec.VPCID == "" {
		vpc := s.Networking.VPCCIDR
		if vpc == "" {
			vpc = awsnet.DefaultVPCCIDR
		}
		if o, err := spec.Overlaps(vpc, s.Networking.ServiceCIDR); err == nil && o {
			add("spec.networking.serviceCIDR", "%s overlaps the VPC network %s", s.Networking.ServiceCIDR, vpc)
		}
	}
	errs = append(errs, c.CheckSections()...)
	errs = append(errs, karpenter.Validate(c)...)
	for i, g := range s.NodeGroups {
		path := "spec.nodeGroups[" + strconv.Itoa(i) + "]"
		if g.Manager == "karpenter" {
			continue
		}
		if g.Max != nil && *g.Max == 0 {
			add(path+".max", "an EKS managed node group's maxSize is at least 1")
		}
	}
	if sec.VPCID == "" {
		zones := s.Zones
		if len(zones) == 0 {
			zones = []string{"a", "b"} // the real zones come from the API; the carving is the same
		}
		_, cerrs := awsnet.CarveSubnets(s.Networking.VPCCIDR, zones, sec.PublicSubnetCIDRs, sec.PrivateSubnetCIDRs)
		errs = append(errs, cerrs...)
	}
	slices.SortFunc(errs, func(a, b spec.FieldError) int { return strings.Compare(a.Path, b.Path) })
	return errs
}

// resolve asks AWS what the spec means (cached per cluster until the spec changes).
func (p *Provider) resolve(ctx context.Context, c *spec.Cluster) (*resolved, []spec.FieldError) {
	key := awsnet.SpecKey(c, "eks")
	p.mu.Lock()
	if r, ok := p.resolved[key]; ok {
		p.mu.Unlock()
		return r, nil
	}
	p.mu.Unlock()
	sec := sectionOf(c)
	ss, err := p.session(ctx, c, sec)
	if err != nil {
		return nil, []spec.FieldError{{Path: "", Msg: err.Error()}}
	}
	r := &resolved{sec: sec, region: ss.Config.Region, account: ss.Account}
	var errs []spec.FieldError
	add := func(path, f string, a ...any) { errs = append(errs, spec.Errorf(path, f, a...)) }

	versions, def, err := ss.clusterVersions(ctx)
	if err != nil {
		return nil, []spec.FieldError{{Path: "spec.kubernetesVersion", Msg: err.Error()}}
	}
	r.version = def
	if v := c.Spec.KubernetesVersion; v != "" {
		r.version, _ = spec.NormalVersion(v)
		if !slices.Contains(versions, r.version) {
			add("spec.kubernetesVersion", "%q is not offered by EKS in %s (offered: %s)", v, r.region, strings.Join(versions, ", "))
		}
	}
	zones, err := ss.Zones(ctx)
	if err != nil {
		return nil, []spec.FieldError{{Path: "spec.zones", Msg: err.Error()}}
	}
	r.zones = c.Spec.Zones
	for i, z := range c.Spec.Zones {
		if !slices.Contains(zones, z) {
			add(fmt.Sprintf("spec.zones[%d]", i), "%q is not a zone of %s (zones: %s)", z, r.region, strings.Join(zones, ", "))
		}
	}
	if len(r.zones) == 0 {
		if len(zones) < 2 {
			add("spec.zones", "region %s has %d zone(s); EKS needs two", r.region, len(zones))
		} else {
			r.zones = zones[:2]
		}
	}
	if sec.VPCID == "" {
		var cerrs []spec.FieldError
		r.subnets, cerrs = awsnet.CarveSubnets(c.Spec.Networking.VPCCIDR, r.zones, sec.PublicSubnetCIDRs, sec.PrivateSubnetCIDRs)
		errs = append(errs, cerrs...)
	} else {
		errs = append(errs, ss.existingNetwork(ctx, sec)...)
	}
	checked := map[string]error{}
	for i, g := range c.Spec.NodeGroups {
		types := []string{g.InstanceType}
		if g.Manager == "karpenter" {
			// A Karpenter pool may choose among several types: each is checked.
			types = strings.Split(g.InstanceType, ",")
		}
		for _, t := range types {
			if t = strings.TrimSpace(t); t == "" {
				continue
			}
			if _, done := checked[t]; !done {
				checked[t] = ss.InstanceType(ctx, t)
			}
			if err := checked[t]; err != nil {
				add(fmt.Sprintf("spec.nodeGroups[%d].instanceType", i), "%v", err)
			}
		}
	}
	if slices.Contains(versions, r.version) {
		r.addons = map[string]string{}
		for _, n := range slices.Sorted(maps.Keys(sec.AddonVersions())) {
			want := sec.AddonVersions()[n]
			got, err := ss.addonVersion(ctx, n, want, r.version)
			if err != nil {
				add("spec.eks.addons."+n, "%v", err)
				continue
			}
			r.addons[n] = got
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	p.mu.Lock()
	if p.resolved == nil {
		p.resolved = map[string]*resolved{}
	}
	p.resolved[key] = r
	p.mu.Unlock()
	return r, nil
}

func (p *Provider) progress(what string) *awsnet.Progress {
	return awsnet.NewProgress(p.log(), what)
}

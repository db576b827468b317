// Package awsmachines is nuv's self-managed Kubernetes provider on AWS (`provider: aws`), on the
// lifecycle engine (package engine) and the official AWS SDK for Go v2: from a Cluster spec it
// plans and makes, each resource recorded as soon as it exists, the network of package awsnet (a
// VPC with a public and a private subnet per zone, an internet gateway, NAT gateways as the spec
// says, route tables), the machines' security groups, an SSH key pair, EC2 instances booted from
// nuv's machine image (control planes, workers, an external etcd tier, an HAProxy machine) or a
// network load balancer with its target group and listener, and the bootstrap nuv runs on the
// machines over SSH: etcd members, kubeadm init and joins, the pod network and its routes, and the
// kubeconfig (clusters/NAME.kubeconfig, through the load balancer). Changes to running machines
// roll them one at a time.
//
// Every resource carries the tag nuv.dev/cluster=NAME; Observe finds resources by the IDs the
// state record holds and by that tag. Credentials come from the SDK's default chain, the region
// from the spec, AWS_REGION or the profile, and the endpoint from spec.aws.endpoint or
// AWS_ENDPOINT_URL, so the whole provider runs against nuv's AWS emulator (package emulator) as
// it runs against AWS.
package awsmachines

import (
	"context"

	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/machine"
)

// Provider makes self-managed clusters on EC2 machines. Build it with New; it is safe for
// concurrent use.
type Provider struct {
	// Project is the project root: kubeconfigs go to Project/clusters/NAME.kubeconfig.
	Project string
	// Exe is nuv's executable.
	Exe string
	// Getenv reads the environment (AWS_ENDPOINT_URL, AWS_REGION, AWS_PROFILE); nil is os.Getenv.
	Getenv func(string) string
	// Log receives progress (waits with their elapsed time and status); nil is quiet.
	Log cli.Logger
	// Poll is the waiters' polling interval; 0 is 100ms against a loopback endpoint (the emulator)
	// and the SDK waiters' own defaults against AWS.
	Poll time.Duration
	// Home is nuv's home: the provider keeps its SSH key of each cluster's machines there
	// (aws/NAME/id_ed25519, 0600).
	Home string

	mu       sync.Mutex
	sessions awsnet.Sessions
	clients  awsnet.Clients[*session]
	machines map[string]*machinesResolved
	conns    map[string]*machine.SSH // SSH connections to machines, by instance id
	ids      awsnet.IDs              // resource ids, from Observe and creates
	rolls    []RollReport            // machines rolled (roll.go)
	launches map[string]*launch      // machines launched, not seen running yet (launch.go)
}

var (
	_ cluster.Provider        = (*Provider)(nil)
	_ cluster.TerraformWriter = (*Provider)(nil)
	_ cluster.Adopter         = (*Provider)(nil)
	_ cluster.Expirer         = (*Provider)(nil)
	_ cluster.Priced          = (*Provider)(nil)
)

// New returns the self-managed provider (`provider: aws`): the same clients, network and state
// as EKS's, with machines nuv bootstraps itself instead of EKS's control plane.
func New(project, exe string, getenv func(string) string, log cli.Logger) *Provider {
	return &Provider{Project: project, Exe: exe, Getenv: getenv, Log: log}
}

// Name is "aws".
func (p *Provider) Name() string { return Name }

func (p *Provider) getenv(k string) string { return kit.Getenv(p.Getenv)(k) }

func (p *Provider) log() cli.Logger { return kit.Log(p.Log) }

func (p *Provider) progress(what string) *awsnet.Progress {
	return awsnet.NewProgress(p.log(), what)
}

// remember records a resource's id for the changes that refer to it.
func (p *Provider) remember(clusterName, key, id string) { p.ids.Remember(clusterName, key, id) }

// configured reports whether this environment names an AWS account to look in (awsnet.Configured).
func (p *Provider) configured() bool { return awsnet.Configured(p.getenv) }

// KubeconfigPath is where a cluster's kubeconfig goes: PROJECT/clusters/NAME.kubeconfig.
func (p *Provider) KubeconfigPath(name string) string { return kit.KubeconfigPath(p.Project, name) }

// session is one AWS session (awsnet.Session) with the load balancer client.
type session struct {
	*awsnet.Session
	elb *elbv2.Client
}

// sectionOf is a cluster's spec.aws section with its defaults.
func sectionOf(c *spec.Cluster) Machines { return Key.Get(c).withDefaults() }

// session returns the clients for a spec, loading the configuration from the SDK's default chain
// and checking the credentials with STS GetCallerIdentity before anything else is asked.
func (p *Provider) session(ctx context.Context, c *spec.Cluster, sec Machines) (*session, error) {
	as, err := p.sessions.Open(ctx, p.getenv, p.Poll, c.Spec.Region, sec.Endpoint, sec.Profile)
	if err != nil {
		return nil, err
	}
	return p.clients.Of(as, func(as *awsnet.Session) *session {
		return &session{Session: as, elb: elbv2.NewFromConfig(as.Config)}
	}), nil
}

// envSession is the session of the environment's account and region (List, Tagged).
func (p *Provider) envSession(ctx context.Context) (*session, error) {
	return p.session(ctx, &spec.Cluster{}, Machines{})
}

// Validate checks a self-managed spec: its own rules, then what only AWS can answer (the
// credentials, the zones, the instance types, nuv's machine image in the region).
func (p *Provider) Validate(c *spec.Cluster) []spec.FieldError {
	return p.validateMachines(c)
}

// Desired lists the resources the spec asks for (resolved against AWS first).
func (p *Provider) Desired(c *spec.Cluster) ([]cluster.Resource, error) {
	return p.machinesDesiredOf(c)
}

// exec is one change being carried out: the network's (awsnet.Exec) or the machines'.
type exec struct {
	*awsnet.Exec
	p *Provider
	s *session
	m *machinesResolved
	// keepIP is the private address a rolled machine's replacement is launched at (its own).
	keepIP string
}

// Execute carries out one change with the handler of its kind. A resource is saved (save) the
// moment AWS returns its id, before any wait, so an interrupted apply finds it and never makes it
// twice.
func (p *Provider) Execute(ctx context.Context, c *spec.Cluster, ch cluster.Change, save func(cluster.Resource) error) (*cluster.Resource, error) {
	s, err := p.session(ctx, c, sectionOf(c))
	if err != nil {
		return nil, err
	}
	_, rname, _ := strings.Cut(ch.Key, "/")
	x := &exec{Exec: &awsnet.Exec{S: s.Session, C: c, Name: c.Metadata.Name, RName: rname, Save: save, IDs: &p.ids, Log: p.log()}, p: p, s: s}
	return awsnet.Execute(ctx, machineKinds.Get(), x, ch, func() error {
		m, errs := p.resolveMachines(ctx, c)
		if len(errs) > 0 {
			return fmt.Errorf("%s: %v", ch.Key, errs[0])
		}
		x.m = m
		return nil
	})
}

// deleteKubeconfig removes clusters/NAME.kubeconfig.
func (x *exec) deleteKubeconfig(ctx context.Context, ch cluster.Change) error {
	if err := os.Remove(x.p.KubeconfigPath(x.Name)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// Observe finds what exists of the cluster (observe.go).
func (p *Provider) Observe(ctx context.Context, c *spec.Cluster, recorded []cluster.Resource) ([]cluster.Resource, error) {
	return p.observeMachines(ctx, c, recorded)
}

// Terraform writes the resources Desired returned as a Terraform module (terraform.go).
func (p *Provider) Terraform(c *spec.Cluster, desired []cluster.Resource) (map[string][]byte, error) {
	return p.machinesTerraform(c, desired)
}

// List reports the self-managed clusters whose machines run in the environment's account and
// region.
func (p *Provider) List(ctx context.Context) ([]cluster.Info, error) {
	return awsnet.InEnvironment(ctx, p.getenv, p.envSession, func(ctx context.Context, s *session) ([]cluster.Info, error) {
		return p.listMachines(ctx, s, "")
	})
}

// Status reports one self-managed cluster, in the region and account its spec names (the
// environment's for a cluster without a record).
func (p *Provider) Status(ctx context.Context, c *spec.Cluster) (cluster.Info, error) {
	return p.statusMachines(ctx, c)
}

// Adopt describes, as a spec, a self-managed cluster nuv made whose state record is gone (removed,
// or a store that was lost): anything tagged nuv.dev/cluster=NAME in the environment's account
// and region. Delete then finds it all by the tag.
func (p *Provider) Adopt(ctx context.Context, name string) (*spec.Cluster, error) {
	return awsnet.Adopt(ctx, name, p.Name(), p.configured(), func(ctx context.Context, c *spec.Cluster) (string, error) {
		s, err := p.session(ctx, c, Machines{})
		if err != nil {
			return "", err
		}
		return s.Config.Region, nil
	}, p.Observe)
}

// Tagged lists the self-managed clusters tagged nuv.dev/cluster=<their name> in the environment's
// account and region, with the marks their tags carry (nuv.dev/expires-at, nuv.dev/owner), by
// their VPCs (the first thing an apply makes and the last a delete removes): those whose machines'
// security group or key pair carries the cluster's tag (awsnet.SelfManagedClusters). A VPC left
// alone by an apply that died before either is reported by the eks provider; either provider's
// delete removes it.
func (p *Provider) Tagged(ctx context.Context) ([]cluster.Tagged, error) {
	return awsnet.InEnvironment(ctx, p.getenv, p.envSession, func(ctx context.Context, s *session) ([]cluster.Tagged, error) {
		return s.TaggedVPCs(ctx, map[string]bool{}, true)
	})
}

// Mark writes c.Marks (nuv.dev/expires-at, nuv.dev/owner) on every EC2 resource tagged
// nuv.dev/cluster=<name> (the VPC, subnets, gateways, route tables, security groups, addresses,
// key pair, instances); a mark c lacks is removed.
func (p *Provider) Mark(ctx context.Context, c *spec.Cluster) error {
	s, err := p.session(ctx, c, sectionOf(c))
	if err != nil {
		return err
	}
	want, gone := awsnet.MarkChanges(c)
	return s.MarkEC2(ctx, c.Metadata.Name, want, gone)
}

// Ready says whether a self-managed cluster is ready for its users (cluster.Readier): through the
// kubeconfig apply wrote, whose server is the load balancer, the API answers /readyz and every
// node of the spec — each control plane and each worker of its node groups — is registered and
// Ready. kubeadm's join returns before the kubelet reports Ready (the pod network still starting),
// so without this wait an apply returned with nodes NotReady.
func (p *Provider) Ready(ctx context.Context, c *spec.Cluster) error {
	want := max(c.Spec.ControlPlane.Count, 1)
	for _, g := range c.Spec.NodeGroups {
		want += g.Size()
	}
	return kit.NodesReady(ctx, p.KubeconfigPath(c.Metadata.Name), want)
}

// Machines says what a planned resource runs, for the plan's cost estimate: a machine (control
// plane, worker, etcd or load balancer instance) runs one of its type.
func (p *Provider) Machines(c *spec.Cluster, r cluster.Resource) []cluster.Machines {
	if r.Kind != kindInstance || r.Fields["instanceType"] == "" {
		return nil
	}
	m := awsnet.PricedMachine(c, p.getenv, sectionOf(c).Endpoint)
	m.Type, m.Count = r.Fields["instanceType"], 1
	return []cluster.Machines{m}
}

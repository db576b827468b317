package clustercmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/engine"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// maxNodes bounds --nodes as a spec bounds a node group.
const maxNodes = 1000

func runCreate(ctx context.Context, c *cmdCtx, args []string) error {
	fs := flags(c.env, "create")
	var (
		name, version, flavor string
		nodes, portBase       int
		ha, dryRun            bool
	)
	file := fs.StringP("file", "f", "", "create the clusters of a spec file instead (each must not exist yet)")
	fs.StringVar(&name, "name", "", "cluster name (default: the provider's name)")
	fs.IntVar(&nodes, "nodes", 1, "number of nodes (local: one node group, \"default\"; kind: the control plane and nodes-1 workers)")
	defVersion, versions := c.registry.Versions()
	versionHelp := "Kubernetes version"
	if len(versions) > 0 {
		versionHelp += " (" + strings.Join(versions, "; ") + ")"
	}
	fs.StringVar(&version, "version", defVersion, versionHelp)
	fs.StringVar(&flavor, "flavor", "", "local: make nodes look like a distribution: "+strings.Join(cluster.FlavorNames(), ", "))
	fs.BoolVar(&ha, "ha", false, "a highly available control plane (local: three etcd members, two apiservers behind a balancer)")
	fs.IntVar(&portBase, "port-base", 0, "local: take loopback ports upwards from this one (skipping used ones); default random")
	fs.BoolVar(&dryRun, "dry-run", false, "print the plan and change nothing")
	durability := fs.String("durability", "", "local: fast (etcd does not fsync) or safe (etcd fsyncs every write); default safe for a cluster hosting NUV_STATE=kube:..., else fast")
	ttl := fs.String("ttl", "", "time to live (4h, 2d): `nuv cluster gc` deletes the cluster once it passed (sets spec.ttl)")
	waitFlag(fs, c)
	stateLoc := stateFlag(fs, c)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *ttl != "" {
		if _, err := spec.ParseTTL(*ttl); err != nil {
			return fs.usage.Errorf("nuv cluster create: --ttl %v", err)
		}
	}
	var specs []*spec.Cluster
	if *file != "" {
		if fs.NArg() > 0 {
			return cli.Usagef("nuv cluster create: give a provider or -f FILE, not both")
		}
		if *durability != "" {
			return cli.Usagef("nuv cluster create: --durability is for `create local`; with -f FILE set spec.local.durability in the file")
		}
		cs, err := c.registry.Decoder().ReadFile(*file)
		if err != nil {
			return err // a broken spec file is bad input, not a usage error: exit 1 as plan and apply
		}
		specs = cs
	} else {
		if !fs.Changed("version") {
			version = "" // the provider's default version (local: KubeVersion; eks: the one EKS reports as default)
		}
		cs, err := c.shorthand(fs.Args(), cluster.CreateOptions{Name: name, Version: version, Nodes: nodes, HA: ha,
			Flavor: flavor, PortBase: portBase, Durability: *durability})
		if err != nil {
			return err
		}
		specs = []*spec.Cluster{cs}
	}
	if *ttl != "" {
		for _, s := range specs {
			s.Spec.TTL = *ttl
		}
	}
	e, err := c.engineFor(*stateLoc, "nuv cluster create")
	if err != nil {
		return err
	}
	// stdout is "NAME<TAB>KUBECONFIG" per cluster, for scripts; progress goes to stderr.
	e.Out = c.env.Err
	for _, s := range specs {
		if _, err := e.Validate(s); err != nil {
			return cli.Usagef("%v", err)
		}
	}
	if dryRun {
		// What the real create would do, including its refusal of a cluster that exists.
		var errs []error
		for i, s := range specs {
			p, err := e.PlanCreate(ctx, s)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if i > 0 {
				fmt.Fprintln(c.env.Out)
			}
			engine.WritePlan(c.env.Out, p)
		}
		return errors.Join(errs...)
	}
	var errs []error
	for _, s := range specs {
		plan, err := e.Apply(ctx, s, engine.ApplyOptions{CreateOnly: true})
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return cli.Exit(cli.ExitInterrupted, fmt.Errorf("create %s interrupted: what was made is recorded; `nuv cluster apply` or `nuv cluster create` again resumes, `nuv cluster delete %s` removes it", s.Metadata.Name, s.Metadata.Name))
			}
			errs = append(errs, err)
			continue
		}
		_ = plan
		p := c.providers[s.Spec.Provider]
		info, err := p.Status(ctx, s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(c.env.Out, "%s\t%s\n", info.Name, info.Kubeconfig)
	}
	return errors.Join(errs...)
}

// shorthand builds the spec `create PROVIDER [NAME] --nodes K ...` stands for: the checks every
// provider shares here, the rest by the provider's registered Shorthand.
func (c *cmdCtx) shorthand(rest []string, o cluster.CreateOptions) (*spec.Cluster, error) {
	valid := strings.Join(c.registry.Names(), ", ")
	if len(rest) == 0 {
		return nil, cli.Usagef("nuv cluster create: name a provider (valid: %s), e.g. `nuv cluster create local --nodes 3`, or give -f FILE", valid)
	}
	if _, ok := c.registry.Get(rest[0]); !ok {
		return nil, cli.Usagef("nuv cluster create: unknown provider %q (valid: %s)", rest[0], valid)
	}
	if len(rest) > 2 {
		return nil, cli.Usagef("nuv cluster create: unexpected arguments %q", rest[2:])
	}
	if len(rest) == 2 {
		if o.Name != "" && o.Name != rest[1] {
			return nil, cli.Usagef("nuv cluster create: two names given (%q and --name %q)", rest[1], o.Name)
		}
		o.Name = rest[1]
	}
	if o.Name == "" {
		o.Name = rest[0]
	}
	if spec.ValidName(o.Name) != nil {
		return nil, cli.Usagef("nuv cluster create: invalid cluster name %q: use lower-case letters, digits and '-', at most 40 characters", o.Name)
	}
	if o.Nodes < 1 || o.Nodes > maxNodes {
		return nil, cli.Usagef("nuv cluster create: --nodes %d: must be between 1 and %d", o.Nodes, maxNodes)
	}
	if _, ok := spec.NormalVersion(o.Version); !ok && o.Version != "" {
		return nil, cli.Usagef("nuv cluster create: unsupported --version %q (want MAJOR.MINOR or MAJOR.MINOR.PATCH)", o.Version)
	}
	return c.registry.Shorthand(rest[0], o)
}

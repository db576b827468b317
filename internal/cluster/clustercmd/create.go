package clustercmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/local"
)

// Providers lists the providers `nuv cluster create` knows.
var providers = []string{"local"}

func runCreate(ctx context.Context, env *cli.Env, p local.Provider, args []string) error {
	fs := flags(env, "create")
	var o local.CreateOptions
	fs.StringVar(&o.Name, "name", "", "cluster name (default \"local\")")
	fs.IntVar(&o.Nodes, "nodes", 1, "number of (kwok) nodes")
	fs.StringVar(&o.Version, "version", local.KubeVersion, "Kubernetes version (valid: "+strings.Join(local.SupportedVersions(), ", ")+")")
	fs.StringVar(&o.Flavor, "flavor", "", "make nodes look like a distribution: "+strings.Join(cluster.FlavorNames(), ", "))
	fs.BoolVar(&o.HA, "ha", false, "three etcd members and two apiservers behind a TCP balancer")
	fs.IntVar(&o.PortBase, "port-base", 0, "take loopback ports upwards from this one (skipping used ones); default random")
	if err := parse(fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return cli.Usagef("nuv cluster create: name a provider (valid: %s), e.g. `nuv cluster create local --nodes 3`", strings.Join(providers, ", "))
	}
	if rest[0] != "local" {
		return cli.Usagef("nuv cluster create: unknown provider %q (valid: %s)", rest[0], strings.Join(providers, ", "))
	}
	if len(rest) > 2 {
		return cli.Usagef("nuv cluster create: unexpected arguments %q", rest[2:])
	}
	if len(rest) == 2 {
		if o.Name != "" && o.Name != rest[1] {
			return cli.Usagef("nuv cluster create: two names given (%q and --name %q)", rest[1], o.Name)
		}
		o.Name = rest[1]
	}
	if o.Name == "" {
		o.Name = "local"
	}
	if err := validate(o); err != nil {
		return cli.Usagef("nuv cluster create: %v", err)
	}
	info, err := p.Create(ctx, o)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return cli.Exit(130, fmt.Errorf("create %s interrupted: everything started was stopped and removed", o.Name))
		}
		return err
	}
	fmt.Fprintf(env.Out, "%s\t%s\n", info.Name, info.Kubeconfig)
	return nil
}

// validate checks the options that are bad input (exit 2) before anything starts.
func validate(o local.CreateOptions) error {
	if err := local.ValidName(o.Name); err != nil {
		return err
	}
	if o.Nodes < 1 || o.Nodes > 100 {
		return fmt.Errorf("--nodes %d: must be between 1 and 100", o.Nodes)
	}
	v := strings.TrimPrefix(o.Version, "v")
	ok := false
	for _, s := range local.SupportedVersions() {
		ok = ok || s == v
	}
	if !ok {
		return fmt.Errorf("unsupported --version %q (valid: %s)", o.Version, strings.Join(local.SupportedVersions(), ", "))
	}
	if _, err := cluster.LookupFlavor(o.Flavor); err != nil {
		return err
	}
	return nil
}

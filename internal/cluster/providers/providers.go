// Package providers is the registry of nuv's cluster providers: it builds each provider from the
// command environment, so every `nuv cluster` verb and the lifecycle engine see the same set.
// A new provider is one package implementing cluster.Provider and one entry here.
package providers

import (
	"context"
	"fmt"
	"strconv"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/aks"
	"github.com/nuv-dev/nuv/internal/cluster/eks"
	"github.com/nuv-dev/nuv/internal/cluster/gke"
	"github.com/nuv-dev/nuv/internal/cluster/kind"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	"github.com/nuv-dev/nuv/internal/cluster/nodeimage"
	"github.com/nuv-dev/nuv/internal/image/load"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/registry"
	"k8s.io/client-go/rest"
)

// New returns every provider, by name, for a command running in env.
func New(env *cli.Env) (map[string]cluster.Provider, error) {
	home, err := paths.EnsureHome(env.Getenv)
	if err != nil {
		return nil, err
	}
	project := paths.Project(env.Getenv, env.Dir)
	// advertise starts nuv's loopback registry if needed and advertises it in a cluster (KEP-1755).
	advertise := func(ctx context.Context, cfg *rest.Config) (string, error) {
		st, started, err := registry.Ensure(ctx, env, home)
		if err != nil {
			return "", fmt.Errorf("loopback registry: %w", err)
		}
		if started {
			env.Log.Infof("started nuv's loopback registry on %s", st.Addr)
		}
		if err := load.AdvertiseRegistry(ctx, cfg, st.Host()); err != nil {
			return "", err
		}
		return st.Host(), nil
	}
	lp := local.Provider{Home: home, Project: project, Log: env.Log, Getenv: env.Getenv, Registry: advertise}
	port, err := registry.Port(env.Getenv)
	if err != nil {
		return nil, err
	}
	// kind clusters advertise the registry themselves (with the relay their nodes reach it by).
	ensureRegistry := func(ctx context.Context, _ *rest.Config) (string, error) {
		st, started, err := registry.Ensure(ctx, env, home)
		if err != nil {
			return "", fmt.Errorf("loopback registry: %w", err)
		}
		if started {
			env.Log.Infof("started nuv's loopback registry on %s", st.Addr)
		}
		return st.Host(), nil
	}
	kp := &kind.Provider{Home: home, Project: project, Log: env.Log, Getenv: env.Getenv,
		RegistryHost: "localhost:" + strconv.Itoa(port), Registry: ensureRegistry,
		// Where kindest/node cannot be pulled, nuv assembles the node image offline (cached).
		NodeImage: func(ctx context.Context, version, runtime string) (string, error) {
			return nodeimage.Ensure(ctx, nodeimage.Options{Version: version, Log: env.Log, Getenv: env.Getenv, Runtime: runtime})
		}}
	ap := &aks.Provider{Project: project, Log: env.Log, Getenv: env.Getenv}
	gp := &gke.Provider{Project: project, Log: env.Log, Getenv: env.Getenv, Exe: env.Exe}
	ep := eks.New(project, env.Exe, env.Getenv, env.Log)
	return map[string]cluster.Provider{lp.Name(): lp, kp.Name(): kp, ap.Name(): ap, gp.Name(): gp, ep.Name(): ep}, nil
}

// Local returns the local provider of a set made by New.
func Local(ps map[string]cluster.Provider) local.Provider {
	return ps["local"].(local.Provider)
}

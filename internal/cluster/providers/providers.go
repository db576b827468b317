// Package providers is the registry of nuv's cluster providers: it builds each provider from the
// command environment, so every `nuv cluster` verb and the lifecycle engine see the same set.
// A new provider is one package implementing cluster.Provider and one entry here.
package providers

import (
	"context"
	"fmt"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/eks"
	"github.com/nuv-dev/nuv/internal/cluster/local"
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
	lp := local.Provider{Home: home, Project: project, Log: env.Log, Getenv: env.Getenv,
		Registry: func(ctx context.Context, cfg *rest.Config) (string, error) {
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
		}}
	// ep.Karpenter (eks.Karpenter) maps `manager: karpenter` groups; without it such groups are
	// refused at plan time naming the field.
	ep := eks.New(project, env.Exe, env.Getenv, env.Log)
	return map[string]cluster.Provider{lp.Name(): lp, ep.Name(): ep}, nil
}

// Local returns the local provider of a set made by New.
func Local(ps map[string]cluster.Provider) local.Provider {
	return ps["local"].(local.Provider)
}

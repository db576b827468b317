// Package providers is the registry of nuv's cluster providers (cluster.Registry): each entry says
// how a provider is built from the command environment, how its spec section decodes and what
// `nuv cluster create NAME` makes, so every `nuv cluster` verb, spec decoding, completion and the
// lifecycle engine see the same set. A new provider is one package implementing cluster.Provider
// and one entry in Registry (docs/providers.md).
package providers

import (
	"context"
	"fmt"
	"strconv"

	"cloud.google.com/go/auth"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/aks"
	"github.com/nuv-dev/nuv/internal/cluster/awsmachines"
	"github.com/nuv-dev/nuv/internal/cluster/eks"
	"github.com/nuv-dev/nuv/internal/cluster/gke"
	"github.com/nuv-dev/nuv/internal/cluster/kind"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"github.com/nuv-dev/nuv/internal/cluster/nodeimage"
	"github.com/nuv-dev/nuv/internal/cluster/pricing"
	"github.com/nuv-dev/nuv/internal/image/load"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/registry"
	"k8s.io/client-go/rest"
)

// Registry returns nuv's providers, a fresh registry on each call (a test may register more).
func Registry() *cluster.Registry {
	r := &cluster.Registry{}
	for _, reg := range []cluster.Registration{
		{Name: "local", Short: "control-plane processes and kwok nodes on loopback", New: newLocal,
			Section: local.Key.Decoder(), Shorthand: local.Shorthand, Versions: localkube.SupportedVersions,
			Verbs: []cluster.Verb{local.PrepareVerb()}},
		{Name: "kind", Short: "real nodes: containers of docker, nerdctl or podman", New: newKind,
			Section: kind.Key.Decoder(), Shorthand: kind.Shorthand, Verbs: []cluster.Verb{nodeimage.Verb()}},
		{Name: "eks", Short: "Amazon EKS through the AWS SDK (or nuv's emulator)", New: func(h cluster.Host) (cluster.Provider, error) {
			return eks.New(h.Project, h.Env.Exe, h.Env.Getenv, h.Env.Log), nil
		}, Section: eks.DecodeSpecSection, Cloud: true},
		{Name: "aws", Short: "self-managed Kubernetes on EC2 machines: kubeadm, an etcd tier, a load balancer (or nuv's emulator)", New: func(h cluster.Host) (cluster.Provider, error) {
			p := awsmachines.New(h.Project, h.Env.Exe, h.Env.Getenv, h.Env.Log)
			p.Home = h.Home
			return p, nil
		}, Section: awsmachines.Key.Decoder(), Cloud: true},
		{Name: "aks", Short: "Azure AKS through the Azure SDK (or nuv's emulator)", New: func(h cluster.Host) (cluster.Provider, error) {
			return &aks.Provider{Project: h.Project, Log: h.Env.Log, Getenv: h.Env.Getenv}, nil
		}, Section: aks.DecodeSection, Cloud: true},
		{Name: "gke", Short: "Google GKE through the Google Cloud SDK (or nuv's emulator)", New: func(h cluster.Host) (cluster.Provider, error) {
			return &gke.Provider{Project: h.Project, Log: h.Env.Log, Getenv: h.Env.Getenv, Exe: h.Env.Exe}, nil
		}, Section: gke.Key.Decoder(), Cloud: true},
	} {
		if err := r.Register(reg); err != nil {
			panic(err) // a programming error of the list above, caught by its tests
		}
	}
	return r
}

// New returns every provider of Registry, by name, for a command running in env.
func New(env *cli.Env) (map[string]cluster.Provider, error) {
	return Build(Registry(), env)
}

// Build returns every provider of r, by name, for a command running in env.
func Build(r *cluster.Registry, env *cli.Env) (map[string]cluster.Provider, error) {
	home, err := paths.EnsureHome(env.Getenv)
	if err != nil {
		return nil, err
	}
	return r.Providers(cluster.Host{Env: env, Home: home, Project: paths.Project(env.Getenv, env.Dir)})
}

// ensureRegistry starts nuv's loopback registry if needed and returns its host.
func ensureRegistry(ctx context.Context, h cluster.Host) (string, error) {
	st, started, err := registry.Ensure(ctx, h.Env, h.Home)
	if err != nil {
		return "", fmt.Errorf("loopback registry: %w", err)
	}
	if started {
		h.Env.Log.Infof("started nuv's loopback registry on %s", st.Addr)
	}
	return st.Host(), nil
}

func newLocal(h cluster.Host) (cluster.Provider, error) {
	// advertise starts nuv's loopback registry if needed and advertises it in a cluster (KEP-1755).
	advertise := func(ctx context.Context, cfg *rest.Config) (string, error) {
		host, err := ensureRegistry(ctx, h)
		if err != nil {
			return "", err
		}
		if err := load.AdvertiseRegistry(ctx, cfg, host); err != nil {
			return "", err
		}
		return host, nil
	}
	return local.Provider{Home: h.Home, Project: h.Project, Log: h.Env.Log, Getenv: h.Env.Getenv, Registry: advertise}, nil
}

func newKind(h cluster.Host) (cluster.Provider, error) {
	port, err := registry.Port(h.Env.Getenv)
	if err != nil {
		return nil, err
	}
	env := h.Env
	return &kind.Provider{Home: h.Home, Project: h.Project, Log: env.Log, Getenv: env.Getenv,
		RegistryHost: "localhost:" + strconv.Itoa(port),
		// kind clusters advertise the registry themselves (with the relay their nodes reach it by).
		Registry: func(ctx context.Context, _ *rest.Config) (string, error) { return ensureRegistry(ctx, h) },
		// Where kindest/node cannot be pulled, nuv assembles the node image offline (cached).
		NodeImage: func(ctx context.Context, version, runtime string) (string, error) {
			return nodeimage.Ensure(ctx, nodeimage.Options{Version: version, Log: env.Log, Getenv: env.Getenv, Runtime: runtime})
		}}, nil
}

// Prices is the price book a plan's cost estimate asks (pricing.FromEnv: the clouds' price APIs, or
// nuv's emulators where the environment points the providers at them), with the GKE provider's
// credentials for Google's catalogue; nil when NUV_PRICES=off.
func Prices(getenv func(string) string, home string) (*pricing.Book, error) {
	return pricing.FromEnv(getenv, home, func(ctx context.Context) (*auth.Credentials, error) {
		creds, _, err := gke.Credentials(ctx, getenv)
		return creds, err
	})
}

// Local is the local provider alone, as `nuv up` makes its cluster with it: without the loopback
// registry the registry's entry advertises.
func Local(home, project string, log cli.Logger, getenv func(string) string) cluster.Provider {
	return local.Provider{Home: home, Project: project, Log: log, Getenv: getenv}
}

// Tools are the hidden commands providers ship: `nuv -eks-token` and `nuv -gke-token`, the exec
// credential plugins of the EKS and GKE kubeconfigs nuv writes.
func Tools() []cli.Command { return []cli.Command{eks.NewTokenTool(), gke.NewTokenTool()} }

// LocalClusters are the local provider's clusters under home, read from disk (no network call:
// completion lists them).
func LocalClusters(home string) ([]string, error) { return local.Provider{Home: home}.Names() }

// KubeBinaries says how the local cluster whose kubeconfig is one of kubeconfigs got its
// Kubernetes binaries, else which binaries the next local cluster would run.
func KubeBinaries(ctx context.Context, getenv func(string) string, home string, kubeconfigs []string) string {
	if home != "" {
		for _, kc := range kubeconfigs {
			if name, src, ok := localkube.BinariesOf(home, kc); ok {
				return "cluster " + name + ": " + src
			}
		}
	}
	return "local clusters: " + localkube.Companion{Getenv: getenv}.Describe(ctx)
}

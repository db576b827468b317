package imagecmd

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image"
	"github.com/nuv-dev/nuv/internal/image/load"
	"github.com/nuv-dev/nuv/internal/image/login"
	"github.com/nuv-dev/nuv/internal/image/publish"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/kube/kubeclient"
	"github.com/nuv-dev/nuv/internal/machine"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/registry"
	"k8s.io/client-go/kubernetes"
)

// selectedTarget is the selected cluster with its type, resolved before anything is built.
func selectedTarget(ctx context.Context, env *cli.Env, project string) (load.Target, error) {
	c, err := kube.Resolve(project, "", env.Getenv)
	if err != nil {
		return load.Target{}, err
	}
	cfg, err := c.Config()
	if err != nil {
		return load.Target{}, err
	}
	if err := c.Detect(ctx, cfg); err != nil {
		return load.Target{}, err
	}
	typ := c.Type
	// nuv's own clusters pull from its loopback registry whatever --flavor made them look like.
	if typ != kube.TypeLocal {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return load.Target{}, fmt.Errorf("cluster %s: %w", c.Name, err)
		}
		local, err := kubeclient.LocalClusterName(ctx, cs)
		if err != nil {
			return load.Target{}, fmt.Errorf("cluster %s: %w", c.Name, err)
		}
		if local != "" {
			typ = kube.TypeLocal
		}
	}
	return load.Target{Name: c.Name, Type: typ, Context: c.Context, Config: cfg}, nil
}

// loadIndex delivers idx to the target cluster and records the reference.
func loadIndex(ctx context.Context, env *cli.Env, project string, target load.Target, idx v1.ImageIndex, repo name.Repository, t string, tagDefaulted bool) error {
	kc, err := login.NewKeychain(env.Getenv)
	if err != nil {
		return err
	}
	d := load.Delivery{
		LocalRegistry: func(ctx context.Context) (string, error) {
			home, err := paths.EnsureHome(env.Getenv)
			if err != nil {
				return "", err
			}
			s, started, err := registry.Ensure(ctx, env, home)
			if err != nil {
				return "", err
			}
			if started {
				env.Log.Infof("started the loopback registry at %s (nuv registry down stops it)", s.Host())
			}
			return s.Host(), nil
		},
		Local: &publish.Remote{Keychain: kc, Log: env.Log},
		NewKind: func(cluster string) image.Publisher {
			return &publish.Kind{Cluster: cluster, Log: env.Log}
		},
		NewMachines:   machinesPublisher(env),
		Remote:        &publish.Remote{Keychain: kc, Log: env.Log},
		KindTagDigest: tagDefaulted,
	}
	ref, err := d.Deliver(ctx, idx, target, repo, t)
	if err != nil {
		return err
	}
	if err := load.WriteRef(project, target.Name, ref); err != nil {
		return err
	}
	env.Log.Infof("loaded into %s cluster %s; recorded in %s", target.Type, target.Name, load.RefFile(project, target.Name))
	fmt.Fprintln(env.Out, ref)
	return nil
}

// machinesPublisher loads into the nodes of a self-managed cluster nuv made on machines, over SSH
// with the key and the machines file the provider keeps under nuv's home.
func machinesPublisher(env *cli.Env) func(load.MachineNodes) image.Publisher {
	return func(n load.MachineNodes) image.Publisher {
		home, err := paths.Home(env.Getenv)
		if err != nil {
			home = ""
		}
		return &publish.Machines{Dir: machine.ClusterDir(home, n.Provider, n.Cluster), Nodes: n.Names, Log: env.Log, Getenv: env.Getenv}
	}
}

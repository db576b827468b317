package imagecmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image"
	"github.com/nuv-dev/nuv/internal/image/debimage"
	"github.com/nuv-dev/nuv/internal/image/load"
	"github.com/nuv-dev/nuv/internal/image/login"
	"github.com/nuv-dev/nuv/internal/image/publish"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/paths"
)

const workloadUsage = `Usage: nuv image workload [--load] [--push REPO] [COMPONENT...]

Build the reference workload's images (the Whisk's components), offline from any container
registry: controller is nuv's whisk-controller compiled from the project's
operator/cmd/whisk-controller by the daemonless builder of the operator image; the others come
from Debian's packages (debootstrap from the host's apt sources, nuv's entrypoints and
configuration, one layer), assembled with go-containerregistry. Cached by content under
~/.cache/nuv/debimage (the Go image by the content of its sources; a warm build takes about a
second). Prints each image's reference.
Components: ` + "%s" + ` (default: all).

--load loads them into every node of the selected cluster, which must be a kind cluster or a
self-managed cluster nuv made on machines (type kubeadm: streamed into each node's containerd over
SSH); tests/kind/whisk.yaml and tests/kubeadm/whisk.yaml name these images.
--push REPO pushes each to REPO/<name>:<tag> (REPO/whisk-controller:v1, ...) for clusters that pull
from a registry, e.g. --push localhost:5001/nuv for nuv's loopback registry (which kind clusters
with registry: true reach too), with the credentials of nuv image login / docker login; it prints
the pushed references with their digests, for the Whisk's image fields.
`

func runWorkload(ctx context.Context, env *cli.Env, args []string) error {
	fs := pflag.NewFlagSet("nuv image workload", pflag.ContinueOnError)
	loadIt := fs.Bool("load", false, "load the images into the selected kind cluster's nodes")
	pushTo := fs.String("push", "", "push the images under this repository prefix (REGISTRY[/PATH])")
	u := fmt.Sprintf(workloadUsage, strings.Join(debimage.WorkloadNames(), ", "))
	if err := parseArgs(env, fs, u, args); err != nil {
		return helpOK(err)
	}
	specs := debimage.Workload()
	project := paths.Project(env.Getenv, env.Dir)
	names := fs.Args()
	if len(names) == 0 {
		for _, n := range debimage.WorkloadNames() {
			// a project laid out differently (an operator of its own) has no whisk-controller
			// source: all means all the images this project can build
			if g := specs[n].Go; g != nil {
				if st, err := os.Stat(filepath.Join(project, filepath.FromSlash(g.Main))); err != nil || !st.IsDir() {
					env.Log.Infof("%s: skipped, the project %s has no %s to compile it from", n, project, g.Main)
					continue
				}
			}
			names = append(names, n)
		}
	}
	for _, n := range names {
		if _, ok := specs[n]; !ok {
			return cli.Usagef("nuv image workload: no image for component %q (there are: %s)", n, strings.Join(debimage.WorkloadNames(), ", "))
		}
	}
	var pusher *publish.Remote
	if *pushTo != "" {
		if _, err := name.NewRepository(*pushTo+"/x", name.StrictValidation); err != nil {
			return cli.Usagef("nuv image workload --push %q: not a repository prefix (REGISTRY[/PATH], e.g. localhost:5001/nuv): %v", *pushTo, err)
		}
		kc, err := login.NewKeychain(env.Getenv)
		if err != nil {
			return err
		}
		pusher = &publish.Remote{Keychain: kc, Log: env.Log}
	}
	var loader image.Publisher
	if *loadIt {
		t, err := selectedTarget(ctx, env, project)
		if err != nil {
			return err
		}
		switch t.Type {
		case kube.TypeKind:
			kindCluster := strings.TrimPrefix(t.Context, "kind-")
			if kindCluster == "" || kindCluster == t.Context {
				kindCluster = t.Name
			}
			loader = &publish.Kind{Cluster: kindCluster, Log: env.Log}
		case kube.TypeKubeadm:
			nodes, err := load.ListMachineNodes(ctx, t.Config)
			if err != nil {
				return fmt.Errorf("nuv image workload --load: cluster %s: %w", t.Name, err)
			}
			loader = machinesPublisher(env)(nodes)
		default:
			return fmt.Errorf("nuv image workload --load: cluster %s is of type %s; the workload images are loaded into kind clusters and the self-managed clusters nuv made on machines only (nuv's local clusters run no containers)", t.Name, t.Type)
		}
	}
	o := debimage.Options{Log: env.Log, Getenv: env.Getenv}
	for _, n := range names {
		r, err := specs[n].Build(ctx, project, o)
		if err != nil {
			return err
		}
		if *loadIt {
			idx, err := r.Index()
			if err != nil {
				return err
			}
			tag, err := name.NewTag(r.Ref)
			if err != nil {
				return err
			}
			if _, err := loader.Publish(ctx, idx, tag); err != nil {
				return fmt.Errorf("load %s: %w", r.Ref, err)
			}
		}
		if pusher == nil {
			fmt.Fprintln(env.Out, r.Ref)
			continue
		}
		pushed, err := pushWorkload(ctx, pusher, r, *pushTo)
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Out, pushed)
	}
	return nil
}

// pushWorkload pushes the image r under prefix (prefix/<last element of its repository>:<tag>)
// and returns the pushed reference with its digest.
func pushWorkload(ctx context.Context, p *publish.Remote, r debimage.Result, prefix string) (string, error) {
	src, err := name.NewTag(r.Ref)
	if err != nil {
		return "", err
	}
	repo := src.Context().RepositoryStr()
	dst, err := name.NewTag(prefix+"/"+repo[strings.LastIndex(repo, "/")+1:]+":"+src.TagStr(), name.StrictValidation)
	if err != nil {
		return "", fmt.Errorf("push %s under %s: %w", r.Ref, prefix, err)
	}
	if err := publish.Reachable(ctx, dst, nil); err != nil {
		return "", err
	}
	idx, err := r.Index()
	if err != nil {
		return "", err
	}
	return p.Publish(ctx, idx, dst)
}

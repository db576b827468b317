package nodeimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/nuv-dev/nuv/internal/runner"
)

// Ensure returns the reference of a node image of o.Version present in the container runtime
// (o.Runtime: docker, podman or nerdctl), building it (cached: seconds when nothing changed) and
// loading it when the runtime lacks it. It is what the kind provider calls before creating a
// cluster, with the runtime it detected.
//
// When the runtime already holds the image of this build's key (its dev.nuv.node-image.key
// label), the cached tarball is neither read nor hashed: the runtime's copy is what a cluster uses.
func Ensure(ctx context.Context, o Options) (string, error) {
	o.acceptRuntime = true
	r, err := Build(ctx, o)
	if err != nil {
		return "", err
	}
	if r.InRuntime {
		return r.Ref, nil
	}
	if err := Load(ctx, o, r); err != nil {
		return "", err
	}
	return r.Ref, nil
}

// runtimeEnv are the variables that point a runtime's client at its daemon or configuration.
var runtimeEnv = []string{"DOCKER_HOST", "CONTAINER_HOST", "CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF", "CONTAINERD_ADDRESS", "CONTAINERD_NAMESPACE"}

// runtimeName is the runtime's name for messages (docker, podman, nerdctl).
func (o Options) runtimeName() string {
	if o.Runtime == "" {
		return "docker"
	}
	return filepath.Base(o.Runtime)
}

func runtimeCmd(o Options, args ...string) runner.Cmd {
	d := o.Runtime
	if d == "" {
		d = "docker"
	}
	c := runner.Cmd{Path: d, Args: args}
	if o.Getenv != nil {
		env := os.Environ()
		for _, k := range runtimeEnv {
			if v := o.Getenv(k); v != "" {
				env = append(env, k+"="+v)
			}
		}
		c.Env = env
	}
	return c
}

// Present says whether the runtime has the image ref.
func Present(ctx context.Context, o Options, ref string) bool {
	return runner.Run(ctx, runtimeCmd(o, "image", "inspect", "--format", "{{.Id}}", ref)) == nil
}

// runtimeHasKey says whether the runtime has image ref built with key (its label says so).
func runtimeHasKey(ctx context.Context, o Options, ref, key string) bool {
	out, err := runner.Output(ctx, runtimeCmd(o, "image", "inspect", "--format", `{{index .Config.Labels "dev.nuv.node-image.key"}}`, ref))
	return err == nil && strings.TrimSpace(string(out)) == key
}

// Load puts the built image into the container runtime (`docker load -i` of the docker-archive
// tarball; podman and nerdctl read the same format), unless it is there already.
func Load(ctx context.Context, o Options, r Result) error {
	log := o.Log
	rt := o.runtimeName()
	if Present(ctx, o, r.Ref) {
		if log != nil {
			log.Infof("node image: %s is in %s already", r.Ref, rt)
		}
		return nil
	}
	start := time.Now()
	if log != nil {
		log.Infof("node image: %s load %s ...", rt, r.Tarball)
	}
	if err := runner.Run(ctx, runtimeCmd(o, "load", "-i", r.Tarball)); err != nil {
		if strings.Contains(err.Error(), "executable file not found") {
			return fmt.Errorf("no container runtime: nuv looked for %s on PATH (install Debian's docker.io, or Docker): %w", rt, err)
		}
		return fmt.Errorf("%s load the node image: %w", rt, err)
	}
	if !Present(ctx, o, r.Ref) {
		return fmt.Errorf("%s loaded %s but does not list %s", rt, r.Tarball, r.Ref)
	}
	if log != nil {
		log.Infof("node image: loaded %s into %s in %s", r.Ref, rt, time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

// Push pushes the built image to the registry reference ref (credentials from the docker config,
// as `docker login` leaves them).
func Push(ctx context.Context, r Result, ref string) error {
	dst, err := name.ParseReference(ref)
	if err != nil {
		return fmt.Errorf("--push %q: %w", ref, err)
	}
	tag, err := name.NewTag(r.Ref)
	if err != nil {
		return err
	}
	img, err := tarball.ImageFromPath(r.Tarball, &tag)
	if err != nil {
		return err
	}
	if err := remote.Write(dst, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	return nil
}

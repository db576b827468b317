// Package relayctl runs the relay of nuv's loopback registry: a small container on a kind cluster's
// network (nuv-registry-relay, built from internal/registry/relay) through which the cluster's
// nodes reach the registry's unix socket. It builds and caches the relay's image, starts, stops,
// inspects and removes the relay container of a registry directory, one per nuv home; the kind
// provider makes it run on its clusters' network and `nuv registry up|down|status` start, stop and
// show it.
package relayctl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/image"
	"github.com/nuv-dev/nuv/internal/image/gobuild"
	"github.com/nuv-dev/nuv/internal/image/publish"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
	"github.com/nuv-dev/nuv/internal/registry"
	"github.com/nuv-dev/nuv/internal/runner"
)

// The relay: kind nodes are containers on their own network and cannot reach nuv's registry,
// which listens on the host's 127.0.0.1 only. A small container on the cluster's network
// (nuv-registry-relay, built from internal/registry/relay) accepts the nodes' connections on
// Port and relays each to the registry's unix socket, whose directory it bind-mounts. So the
// registry stays one process with one view of its storage (what `nuv image push` writes on the
// host is what the nodes pull), nothing is published on any host address, and the host's
// networking is not touched.

// Port is the port the relay listens on inside its container (kind's local-registry guide's).
const Port = 5000

// Labels of the relay container.
const (
	labelRelayDir  = "nuv.dev/registry-dir"
	labelRelayRole = "nuv.dev/role"
	relayRole      = "registry-relay"
)

// relaySocketDir is where the relay container sees the registry's socket directory.
const relaySocketDir = "/run/nuv-registry"

// relayRecipe versions how the relay image is assembled (part of its cache key).
const relayRecipe = "nuv-registry-relay image v1"

// Name is the relay container of the registry stored in dir: one per nuv home, so nuvs of
// different NUV_HOMEs sharing a container runtime never take each other's.
func Name(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	sum := sha256.Sum256([]byte(abs))
	return "nuv-registry-" + hex.EncodeToString(sum[:])[:8]
}

// relayKey is the content key of the relay image: its source, the recipe and the platform.
func relayKey(p v1.Platform) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", relayRecipe, p)
	h.Write(registry.RelaySource)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// ImageRef is the tag of the relay image for this source and platform.
func ImageRef() string {
	return "nuv.dev/registry-relay:" + relayKey(publish.HostPlatform())
}

// BuildImage compiles nuv-registry-relay from its embedded source (standard library only:
// no module is downloaded) and assembles its image with nuv's daemonless image builder, for this
// host's platform (the nodes').
func BuildImage(ctx context.Context, log cli.Logger) (v1.ImageIndex, error) {
	dir, err := os.MkdirTemp("", "nuv-relay-src-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module nuv.dev/registry-relay\n\ngo 1.22\n"), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), registry.RelaySource, 0o644); err != nil {
		return nil, err
	}
	b := &gobuild.Builder{Log: log}
	idx, err := b.Build(ctx, image.Spec{Dir: dir, Main: ".", Entrypoint: "nuv-registry-relay",
		Platforms: []v1.Platform{publish.HostPlatform()}, Version: relayKey(publish.HostPlatform()),
		Source: "https://github.com/nuv-dev/nuv/tree/main/internal/registry/relay"})
	if err != nil {
		return nil, fmt.Errorf("build the registry relay image: %w", err)
	}
	return idx, nil
}

// EnsureImage returns the relay image's tag, present in the runtime: already there, loaded
// from nuv's cache (CacheDir/registry-relay/<key>/image.tar), or built, cached and loaded.
func EnsureImage(ctx context.Context, rt containerrt.Runtime, getenv func(string) string, log cli.Logger) (string, error) {
	ref := ImageRef()
	if _, err := rt.Output(ctx, "image", "inspect", "--format", "{{.Id}}", ref); err == nil {
		return ref, nil
	}
	plat := publish.HostPlatform()
	dir := filepath.Join(companion.CacheDir(getenv), "registry-relay", relayKey(plat))
	archive := filepath.Join(dir, "image.tar")
	unlock, err := fsutil.Lock(ctx, filepath.Join(dir, "build.lock"), func() {
		log.Infof("waiting for another nuv building the registry relay image (%s)", dir)
	})
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(archive); err != nil {
		start := time.Now()
		idx, err := BuildImage(ctx, log)
		if err != nil {
			return "", err
		}
		tag, err := name.NewTag(ref)
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		if err := publish.SinglePlatformArchive(idx, plat, tag, &buf); err != nil {
			return "", fmt.Errorf("registry relay image: %w", err)
		}
		if err := fsutil.WriteFileAtomic(archive, buf.Bytes(), 0o644); err != nil {
			return "", fmt.Errorf("cache the registry relay image: %w", err)
		}
		log.Infof("built the registry relay image %s in %.1fs (cached in %s)", ref, time.Since(start).Seconds(), dir)
	}
	if _, err := rt.Output(ctx, "load", "-i", archive); err != nil {
		// a damaged cache entry is rebuilt on the next try, not loaded again
		_ = os.Remove(archive)
		return "", fmt.Errorf("load the registry relay image into %s: %w", rt.Name, err)
	}
	if _, err := rt.Output(ctx, "image", "inspect", "--format", "{{.Id}}", ref); err != nil {
		_ = os.Remove(archive)
		return "", fmt.Errorf("%s loaded %s but does not list %s", rt.Name, archive, ref)
	}
	log.V(1).Infof("loaded the registry relay image %s into %s", ref, rt.Name)
	return ref, nil
}

// Info is the relay container as the runtime shows it.
type Info struct {
	Exists, Running bool
	// Dir is the registry directory its label names ("" on a container that is not a relay of nuv's).
	Dir      string
	Image    string
	Networks []string
}

func (r Info) On(network string) bool {
	for _, n := range r.Networks {
		if n == network {
			return true
		}
	}
	return false
}

// Inspect reads the container called name.
func Inspect(ctx context.Context, rt containerrt.Runtime, name string) (Info, error) {
	out, err := rt.Output(ctx, "inspect", "--type", "container", "--format",
		`{{index .Config.Labels "`+labelRelayDir+`"}}|{{.State.Running}}|{{.Config.Image}}|{{range $k, $v := .NetworkSettings.Networks}}{{$k}},{{end}}`, name)
	if err != nil {
		var re *runner.RunError
		if errors.As(err, &re) && (strings.Contains(string(re.Stderr), "No such") || strings.Contains(string(re.Stderr), "no such")) {
			return Info{}, nil
		}
		return Info{}, fmt.Errorf("inspect container %s: %w", name, err)
	}
	f := strings.SplitN(strings.TrimSpace(out), "|", 4)
	if len(f) < 4 {
		return Info{}, fmt.Errorf("inspect container %s: unexpected answer %q", name, out)
	}
	r := Info{Exists: true, Dir: f[0], Running: f[1] == "true", Image: f[2]}
	if r.Dir == "<no value>" {
		r.Dir = ""
	}
	for _, n := range strings.Split(f[3], ",") {
		if n != "" {
			r.Networks = append(r.Networks, n)
		}
	}
	return r, nil
}

// relayUser is the user the relay runs as: the registry's owner, so it may enter the socket's
// directory (0700). A rootless runtime maps its container root to that owner.
func relayUser(ctx context.Context, rt containerrt.Runtime) string {
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		return "0:0"
	}
	if out, err := rt.Output(ctx, "info", "--format", "{{json .}}"); err == nil && strings.Contains(strings.ToLower(out), "rootless") {
		return "0:0"
	}
	return strconv.Itoa(uid) + ":" + strconv.Itoa(gid)
}

// Ensure makes the relay container of the registry in dir run on network: it creates it
// (from the relay image), replaces one of an older relay image, starts a stopped one, connects it
// to the network, and checks that it reaches the registry. A container of its name that is not
// nuv's relay of dir is refused, named.
func Ensure(ctx context.Context, rt containerrt.Runtime, dir, network string, getenv func(string) string, log cli.Logger) (string, error) {
	name := Name(dir)
	img, err := EnsureImage(ctx, rt, getenv, log)
	if err != nil {
		return "", err
	}
	unlock, err := Lock(ctx, dir, log)
	if err != nil {
		return "", err
	}
	defer unlock()
	info, err := Inspect(ctx, rt, name)
	if err != nil {
		return "", err
	}
	if info.Exists && info.Dir != dir {
		return "", fmt.Errorf("a container called %s exists and is not the registry relay of %s (its %s label says %q): nuv leaves it alone; remove it or use another NUV_HOME", name, dir, labelRelayDir, info.Dir)
	}
	var others []string // networks of other clusters the replaced relay served
	if info.Exists && info.Image != img {
		log.Infof("replacing registry relay %s (image %s -> %s)", name, info.Image, img)
		if _, err := rt.Output(ctx, "rm", "-f", name); err != nil {
			return "", fmt.Errorf("remove the old registry relay %s: %w", name, err)
		}
		for _, n := range info.Networks {
			if n != network {
				others = append(others, n)
			}
		}
		info = Info{}
	}
	if !info.Exists {
		abs, _ := filepath.Abs(dir)
		args := []string{"run", "-d", "--name", name, "--restart", "unless-stopped",
			"--label", labelRelayDir + "=" + dir, "--label", labelRelayRole + "=" + relayRole,
			"--network", network, "--user", relayUser(ctx, rt),
			"--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
			"-v", registry.SocketDir(abs) + ":" + relaySocketDir,
			img, "serve", "--listen", ":" + strconv.Itoa(Port), "--socket", relaySocketDir + "/" + registry.SocketName}
		if _, err := rt.Output(ctx, args...); err != nil {
			return "", fmt.Errorf("start the registry relay %s on network %s: %w", name, network, err)
		}
		log.Infof("started the registry relay %s on network %s (kind nodes pull from nuv's registry through it)", name, network)
		for _, n := range others {
			if _, err := rt.Output(ctx, "network", "connect", n, name); err != nil {
				return "", fmt.Errorf("connect the registry relay %s to network %s: %w", name, n, err)
			}
		}
	} else {
		if !info.Running {
			if _, err := rt.Output(ctx, "start", name); err != nil {
				return "", fmt.Errorf("start the registry relay %s: %w", name, err)
			}
			log.Infof("started the stopped registry relay %s", name)
		}
		if !info.On(network) {
			if _, err := rt.Output(ctx, "network", "connect", network, name); err != nil {
				return "", fmt.Errorf("connect the registry relay %s to network %s: %w", name, network, err)
			}
			log.Infof("connected the registry relay %s to network %s", name, network)
		}
	}
	if err := probe(ctx, rt, name); err != nil {
		return "", err
	}
	return name, nil
}

// probe asks the relay, from inside its container, for the registry's /v2/ through itself:
// the relay listens and reaches the registry's socket.
func probe(ctx context.Context, rt containerrt.Runtime, name string) error {
	url := "http://127.0.0.1:" + strconv.Itoa(Port) + "/v2/"
	var last error
	for i := 0; i < 20; i++ {
		_, err := rt.Output(ctx, "exec", name, "/usr/local/bin/nuv-registry-relay", "probe", url)
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	logs, _ := rt.Output(ctx, "logs", "--tail", "5", name)
	return fmt.Errorf("the registry relay %s does not reach nuv's registry: %w (its log: %s)", name, last, strings.TrimSpace(logs))
}

// Lock serializes the nuvs that make, change or remove the relay of the registry in dir
// (two kind clusters applied at once share it).
func Lock(ctx context.Context, dir string, log cli.Logger) (func(), error) {
	return fsutil.Lock(ctx, filepath.Join(dir, "relay.lock"), func() {
		log.Infof("waiting for another nuv working on the registry relay (%s)", filepath.Join(dir, "relay.lock"))
	})
}

// Remove removes the relay container of the registry in dir (the registry keeps running).
// The caller holds Lock.
func Remove(ctx context.Context, rt containerrt.Runtime, dir string) (bool, error) {
	name := Name(dir)
	info, err := Inspect(ctx, rt, name)
	if err != nil || !info.Exists {
		return false, err
	}
	if info.Dir != dir {
		return false, nil // not ours
	}
	if _, err := rt.Output(ctx, "rm", "-f", name); err != nil {
		return false, fmt.Errorf("remove the registry relay %s: %w", name, err)
	}
	return true, nil
}

// Stop stops the relay container of nuv's registry under home, if a container runtime has
// one (`nuv registry down`): kind nodes then cannot pull from the registry until `nuv registry up`
// or an apply starts both again. No runtime, or no relay: nothing to do.
func Stop(ctx context.Context, getenv func(string) string, home string) (bool, error) {
	return runVerb(ctx, getenv, home, "stop", true)
}

// Start starts the stopped relay container of nuv's registry under home, if there is one
// (`nuv registry up`); the relay is made by the apply of a kind cluster with `registry: true`.
func Start(ctx context.Context, getenv func(string) string, home string) (bool, error) {
	return runVerb(ctx, getenv, home, "start", false)
}

// Relay is the relay container of nuv's registry, as `nuv registry status` shows it.
type Relay struct {
	Name     string   `json:"name"`
	Running  bool     `json:"running"`
	Runtime  string   `json:"runtime"`
	Networks []string `json:"networks"`
}

// String is the status line of the relay.
func (r Relay) String() string {
	state := "stopped"
	if r.Running {
		state = "running"
	}
	nets := strings.Join(r.Networks, ", ")
	if nets == "" {
		nets = "none"
	}
	return fmt.Sprintf("relay %s for kind clusters: %s (%s, networks: %s)", r.Name, state, r.Runtime, nets)
}

// Status describes the relay container of nuv's registry under home ("" when no runtime
// answers or no relay exists).
func Status(ctx context.Context, getenv func(string) string, home string) (string, error) {
	r, err := Of(ctx, getenv, home)
	if r == nil || err != nil {
		return "", err
	}
	return r.String(), nil
}

// Of is the relay container of nuv's registry under home (nil when no runtime answers or no
// relay exists).
func Of(ctx context.Context, getenv func(string) string, home string) (*Relay, error) {
	rt, err := containerrt.Detect(ctx, getenv)
	if err != nil {
		return nil, nil
	}
	dir := registry.Dir(home)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	name := Name(dir)
	info, err := Inspect(ctx, rt, name)
	if err != nil || !info.Exists || info.Dir != dir {
		return nil, err
	}
	nets := info.Networks
	if nets == nil {
		nets = []string{}
	}
	return &Relay{Name: name, Running: info.Running, Runtime: rt.Name, Networks: nets}, nil
}

func runVerb(ctx context.Context, getenv func(string) string, home, verb string, running bool) (bool, error) {
	rt, err := containerrt.Detect(ctx, getenv)
	if err != nil {
		return false, nil
	}
	dir := registry.Dir(home)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	name := Name(dir)
	info, err := Inspect(ctx, rt, name)
	if err != nil || !info.Exists || info.Dir != dir || info.Running != running {
		return false, err
	}
	if _, err := rt.Output(ctx, verb, name); err != nil {
		return false, fmt.Errorf("%s the registry relay %s: %w", verb, name, err)
	}
	return true, nil
}
